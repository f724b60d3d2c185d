/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// TestDataStoreSpecs: the API server accepts each Redis mode, TLS and SASL
// as documented and rejects what cannot work, naming the field.
func TestDataStoreSpecs(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(n, k string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: n}, Key: k}
	}
	cases := []struct {
		name   string
		mutate func(*ticketsv1alpha1.TicketEvent)
		want   string // "" = accepted
	}{
		{"sentinel with master, ACL and mutual TLS", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), Mode: ticketsv1alpha1.RedisSentinel, MasterName: "mymaster",
				PasswordSecretRef: ref("r", "password"), SentinelPasswordSecretRef: ref("r", "sentinel"),
				TLS: &ticketsv1alpha1.ClientTLS{CASecretRef: ref("t", "ca.crt"), CertSecretRef: ref("t", "tls.crt"), KeySecretRef: ref("t", "tls.key")}}
		}, ""},
		{"cluster with TLS", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), Mode: ticketsv1alpha1.RedisCluster, TLS: &ticketsv1alpha1.ClientTLS{}}
		}, ""},
		{"kafka SASL over TLS, postgres CA", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Kafka = &ticketsv1alpha1.Kafka{Brokers: []string{"k:9096"}, TLS: &ticketsv1alpha1.ClientTLS{},
				SASL: &ticketsv1alpha1.KafkaSASL{Mechanism: "SCRAM-SHA-512", UsernameSecretRef: *ref("k", "u"), PasswordSecretRef: *ref("k", "p")}}
			te.Spec.Postgres = &ticketsv1alpha1.Postgres{URLSecretRef: *ref("p", "url"), CASecretRef: ref("p", "ca.crt")}
		}, ""},
		{"sentinel without master", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), Mode: ticketsv1alpha1.RedisSentinel}
		}, "redis.masterName is required in Sentinel mode"},
		{"master name in cluster mode", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), Mode: ticketsv1alpha1.RedisCluster, MasterName: "m"}
		}, "redis.masterName is required in Sentinel mode and only there"},
		{"sentinel password standalone", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), SentinelPasswordSecretRef: ref("r", "s")}
		}, "apply to Sentinel mode only"},
		{"unknown mode", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), Mode: "Ring"}
		}, "spec.redis.mode"},
		{"client certificate without key", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: *ref("r", "url"), TLS: &ticketsv1alpha1.ClientTLS{CertSecretRef: ref("t", "tls.crt")}}
		}, "tls.certSecretRef and tls.keySecretRef go together"},
		{"unknown SASL mechanism", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Kafka = &ticketsv1alpha1.Kafka{Brokers: []string{"k:9096"},
				SASL: &ticketsv1alpha1.KafkaSASL{Mechanism: "GSSAPI", UsernameSecretRef: *ref("k", "u"), PasswordSecretRef: *ref("k", "p")}}
		}, "spec.kafka.sasl.mechanism"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := minimalEvent("default", fmt.Sprintf("datastore-%d", i))
			tc.mutate(te)
			err := c.Create(ctx, te)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatal("accepted")
			case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestCleanupOnCluster: --redis-cleanup on a real Redis Cluster deletes
// every key of the event, wherever its slot lives, and no other event's.
func TestCleanupOnCluster(t *testing.T) {
	_, rc := testenv.RedisCluster(t, 5*time.Second)
	rdb, err := redisconn.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	for _, ev := range []int64{42, 421, 4} {
		for i := range 50 {
			if err := rdb.Set(ctx, fmt.Sprintf("%sk%d", keyspace.Prefix(ev), i), i, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := deleteEventKeys(ctx, rdb, 42)
	if err != nil || n != 50 {
		t.Fatalf("deleted %d keys (%v), want 50", n, err)
	}
	for ev, want := range map[int64]int64{42: 0, 421: 50, 4: 50} {
		var left atomic.Int64
		_ = rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			ks, err := m.Keys(ctx, keyspace.Pattern(ev)).Result()
			left.Add(int64(len(ks)))
			return err
		})
		if left.Load() != want {
			t.Fatalf("event %d: %d keys left, want %d", ev, left.Load(), want)
		}
	}
}
