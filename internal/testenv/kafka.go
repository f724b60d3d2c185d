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

package testenv

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
)

var (
	kafkaSrv    *localsvc.ApacheKafka
	kafkaTopics atomic.Int64
)

// Kafka returns the client configuration of this binary's Apache Kafka
// broker (KRaft, one node, started on first use, or
// TICKETFAIR_TEST_KAFKA_BROKERS), with topics of its own: its ticket-issued
// and refund-requested topics exist and no other test uses them.
func Kafka(t testing.TB) config.Kafka {
	t.Helper()
	var brokers []string
	if env := os.Getenv("TICKETFAIR_TEST_KAFKA_BROKERS"); env != "" {
		brokers = strings.Split(env, ",")
	} else {
		mu.Lock()
		if kafkaSrv == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			k, err := localsvc.StartApacheKafka(ctx, localsvc.ApacheKafkaConfig{})
			cancel()
			if err != nil {
				mu.Unlock()
				Unavailable(t, "apache kafka", err)
				return config.Kafka{}
			}
			kafkaSrv = k
			started = append(started, k.Stop)
		}
		brokers = kafkaSrv.Brokers
		mu.Unlock()
	}
	prefix := fmt.Sprintf("%s-%d", topicSafe.ReplaceAllString(t.Name(), "_"), kafkaTopics.Add(1))
	cfg := config.Kafka{
		Brokers:              brokers,
		TopicTicketIssued:    prefix + ".ticket-issued",
		TopicRefundRequested: prefix + ".refund-requested",
	}
	if err := CreateTopics(brokers, cfg.TopicTicketIssued, cfg.TopicRefundRequested); err != nil {
		Unavailable(t, "apache kafka", err)
	}
	t.Logf("kafka: Apache Kafka %s (KRaft) at %v, topics %s, %s", localsvc.KafkaVersion, brokers, cfg.TopicTicketIssued, cfg.TopicRefundRequested)
	return cfg
}

// Topic names allow [a-zA-Z0-9._-], at most 249 characters.
var topicSafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ApacheKafka starts an Apache Kafka cluster of the test's own, for tests
// that stop, kill or reconfigure brokers; it is stopped when the test ends,
// and its nodes' logs are printed when the test failed.
func ApacheKafka(t testing.TB, c localsvc.ApacheKafkaConfig) *localsvc.ApacheKafka {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k, err := localsvc.StartApacheKafka(ctx, c)
	if err != nil {
		Unavailable(t, "apache kafka", err)
		return nil
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(k.Logs())
		}
		k.Stop()
	})
	t.Logf("kafka: Apache Kafka %s (KRaft, %d node(s)) at %v", localsvc.KafkaVersion, k.NodeCount(), k.Brokers)
	return k
}

// KafkaBrokers starts a single-node Apache Kafka broker of the test's own
// with the given topics, for tests that name topics themselves.
func KafkaBrokers(t testing.TB, topics ...string) []string {
	t.Helper()
	return ApacheKafka(t, localsvc.ApacheKafkaConfig{Topics: topics}).Brokers
}

// RestartableKafka starts a single-node Apache Kafka broker of the test's
// own with the given topics, for tests of a broker outage: the test kills
// or stops it (k.Kill(0), k.StopNode(0)) and starts it again on the same
// ports with the same log (k.Restart(ctx, 0)).
func RestartableKafka(t testing.TB, topics ...string) *localsvc.ApacheKafka {
	t.Helper()
	return ApacheKafka(t, localsvc.ApacheKafkaConfig{Topics: topics})
}
