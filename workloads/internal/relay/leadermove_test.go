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

package relay

import (
	"context"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// TestLeaderMoves publishes through a 3-node Apache Kafka cluster (three
// replicas, min.insync.replicas=2, acks=all) while partition leaders move:
// one node is shut down (controlled: its leaderships move at once), then
// another is killed (the controller moves them after its session times
// out), each started again. Nothing is lost, every row is marked only once
// the brokers acknowledged it, and each order's events stay in order.
func TestLeaderMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("moves leaders on a 3-node cluster for 20+ s")
	}
	url, pool := newDB(t)
	k := testenv.ApacheKafka(t, localsvc.ApacheKafkaConfig{
		Nodes: 3, MinInsyncReplicas: 2,
		Topics: []string{events.TopicTicketIssued, events.TopicRefundRequested},
	})
	_, stop := startRun(t, testConfig(url, k.Brokers))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const keys, perKey = 200, 5
	done := make(chan struct{})
	go func() {
		defer close(done)
		// about 12 s of steady publishing, across both disruptions
		insertConcurrently(t, pool, keys, perKey, 4, 50*time.Millisecond)
	}()
	moves := 0
	for round, disrupt := range []func(int){k.StopNode, k.Kill} {
		before, err := k.Leaders(ctx, events.TopicTicketIssued)
		if err != nil {
			t.Fatal(err)
		}
		victim := before[int32(round)]
		disrupt(victim)
		testenv.WaitFor(t, 30*time.Second, "partitions led elsewhere", func() bool {
			after, err := k.Leaders(ctx, events.TopicTicketIssued)
			if err != nil {
				return false
			}
			for p, node := range after {
				if node == victim || node < 0 {
					return false
				}
				if before[p] != node {
					moves++
				}
			}
			return true
		})
		if err := k.Restart(ctx, victim); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	testenv.WaitFor(t, 60*time.Second, "every row marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if moves == 0 {
		t.Fatal("no partition leader moved")
	}
	checkAllDelivered(t, k.Brokers, keys*perKey)
	t.Logf("%d rows of %d orders published across %d leader moves (node stopped, node killed)", keys*perKey, keys, moves)
}
