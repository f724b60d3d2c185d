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

package render

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// TestManagedDataStores: Sentinel Redis with an ACL user, TLS with a
// client certificate, PostgreSQL verify-full and Kafka SASL over TLS reach
// the containers with every credential and certificate from its Secret.
func TestManagedDataStores(t *testing.T) {
	ref := func(n, k string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: n}, Key: k}
	}
	te := event()
	te.Spec.Redis.Mode, te.Spec.Redis.MasterName = ticketsv1alpha1.RedisSentinel, "mymaster"
	te.Spec.Redis.UsernameSecretRef, te.Spec.Redis.PasswordSecretRef = ref("redis-acl", "username"), ref("redis-acl", "password")
	te.Spec.Redis.SentinelPasswordSecretRef = ref("redis-acl", "sentinel-password")
	te.Spec.Redis.TLS = &ticketsv1alpha1.ClientTLS{CASecretRef: ref("redis-tls", "ca.crt"),
		CertSecretRef: ref("redis-tls", "tls.crt"), KeySecretRef: ref("redis-tls", "tls.key"), ServerName: "redis.internal"}
	te.Spec.Postgres.CASecretRef = ref("pg-ca", "ca.crt")
	te.Spec.Kafka.TLS = &ticketsv1alpha1.ClientTLS{CASecretRef: ref("kafka-ca", "ca.crt")}
	te.Spec.Kafka.SASL = &ticketsv1alpha1.KafkaSASL{Mechanism: "SCRAM-SHA-512",
		UsernameSecretRef: *ref("kafka-user", "username"), PasswordSecretRef: *ref("kafka-user", "password")}
	o, err := Render(te, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ secret, key, value string }
	check := func(c Component, wants map[string]want) {
		t.Helper()
		env := map[string]corev1.EnvVar{}
		for _, e := range o.Deployments[c].Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e
		}
		for name, w := range wants {
			e, ok := env[name]
			switch {
			case !ok:
				t.Errorf("%s: no %s", c, name)
			case w.secret != "":
				if s := e.ValueFrom.SecretKeyRef; s == nil || s.Name != w.secret || s.Key != w.key {
					t.Errorf("%s: %s from %+v, want Secret %s key %s", c, name, e.ValueFrom, w.secret, w.key)
				}
			default:
				if got := o.ConfigMaps[c].Data[name]; got != w.value || e.ValueFrom.ConfigMapKeyRef == nil {
					t.Errorf("%s: %s = %q, want %q from the ConfigMap", c, name, got, w.value)
				}
			}
		}
	}
	redis := map[string]want{
		"TICKETFAIR_REDIS_URL":               {secret: "redis", key: "k"},
		"TICKETFAIR_REDIS_MODE":              {value: "sentinel"},
		"TICKETFAIR_REDIS_MASTER_NAME":       {value: "mymaster"},
		"TICKETFAIR_REDIS_USERNAME":          {secret: "redis-acl", key: "username"},
		"TICKETFAIR_REDIS_PASSWORD":          {secret: "redis-acl", key: "password"},
		"TICKETFAIR_REDIS_SENTINEL_PASSWORD": {secret: "redis-acl", key: "sentinel-password"},
		"TICKETFAIR_REDIS_TLS":               {value: "true"},
		"TICKETFAIR_REDIS_TLS_CA":            {secret: "redis-tls", key: "ca.crt"},
		"TICKETFAIR_REDIS_TLS_CERT":          {secret: "redis-tls", key: "tls.crt"},
		"TICKETFAIR_REDIS_TLS_KEY":           {secret: "redis-tls", key: "tls.key"},
		"TICKETFAIR_REDIS_TLS_SERVER_NAME":   {value: "redis.internal"},
	}
	check(Queue, redis)
	check(Booking, redis)
	pg := map[string]want{"TICKETFAIR_DATABASE_TLS_CA": {secret: "pg-ca", key: "ca.crt"}}
	check(Booking, pg)
	check(Relay, pg)
	check(Tickets, pg)
	kafka := map[string]want{
		"TICKETFAIR_KAFKA_TLS":            {value: "true"},
		"TICKETFAIR_KAFKA_TLS_CA":         {secret: "kafka-ca", key: "ca.crt"},
		"TICKETFAIR_KAFKA_SASL_MECHANISM": {value: "SCRAM-SHA-512"},
		"TICKETFAIR_KAFKA_USERNAME":       {secret: "kafka-user", key: "username"},
		"TICKETFAIR_KAFKA_PASSWORD":       {secret: "kafka-user", key: "password"},
	}
	check(Relay, kafka)
	check(Tickets, kafka)
	// The migration Job connects to PostgreSQL as booking does.
	var jobCA bool
	for _, e := range o.MigrationJob.Spec.Template.Spec.Containers[0].Env {
		jobCA = jobCA || (e.Name == "TICKETFAIR_DATABASE_TLS_CA" && e.ValueFrom.SecretKeyRef != nil)
	}
	if !jobCA {
		t.Error("the migration Job has no database CA")
	}
	// --redis-cleanup resolves the same configuration.
	rc, err := RedisEnv(te.Spec.Redis)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range rc {
		env[e.Name] = e
	}
	if s := env["TICKETFAIR_REDIS_PASSWORD"].ValueFrom; s == nil || s.SecretKeyRef == nil || s.SecretKeyRef.Name != "redis-acl" || s.SecretKeyRef.Key != "password" || env["TICKETFAIR_REDIS_MODE"].Value != "sentinel" {
		t.Fatalf("RedisEnv: %+v", rc)
	}
}

// TestStripeWebhookSecret: payment.stripeWebhookSecretRef reaches booking
// from its Secret and turns the Stripe-shaped webhook on; unset, booking
// gets no such variable and answers that route 503.
func TestStripeWebhookSecret(t *testing.T) {
	stripeEnv := func(te *ticketsv1alpha1.TicketEvent) *corev1.EnvVar {
		t.Helper()
		o, err := Render(te, Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range o.Deployments[Booking].Spec.Template.Spec.Containers[0].Env {
			if e.Name == "TICKETFAIR_STRIPE_WEBHOOK_SECRETS" {
				return &e
			}
		}
		return nil
	}
	te := event()
	if e := stripeEnv(te); e != nil {
		t.Fatalf("without stripeWebhookSecretRef booking gets %+v", e)
	}
	te.Spec.Payment.StripeWebhookSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "stripe"}, Key: "whsec"}
	e := stripeEnv(te)
	if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "stripe" || e.ValueFrom.SecretKeyRef.Key != "whsec" {
		t.Fatalf("TICKETFAIR_STRIPE_WEBHOOK_SECRETS = %+v, want Secret stripe key whsec", e)
	}
}
