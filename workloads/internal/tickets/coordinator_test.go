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

package tickets

import (
	"context"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// On a three-node Apache Kafka cluster the node that coordinates the
// tickets consumer group is SIGKILLed mid-stream. The group's connection
// to it breaks (the reader answers io.EOF, as it does for a closed
// reader), the coordinator moves to another node, and the service keeps
// running and issuing: it must not take the EOF for its own shutdown.
func TestConsumerRidesOutCoordinatorLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node Kafka cluster")
	}
	url, pool := newDB(t)
	k := testenv.ApacheKafka(t, localsvc.ApacheKafkaConfig{Nodes: 3, Topics: []string{events.TopicTicketIssued}})
	cfg := testConfig(t, url, k.Brokers)
	s := startRun(t, cfg)
	next := 0
	send := func(n int) {
		for range n {
			next++
			produce(t, k.Brokers, int64(next), order(next, 1))
		}
	}
	send(5)
	testenv.WaitFor(t, 60*time.Second, "the first orders ticketed", func() bool { return results(t, s.base)["issued"] == 5 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := admin(t, k.Brokers).DescribeGroups(ctx, cfg.ConsumerGroup)
	if err != nil {
		t.Fatal(err)
	}
	// Node ids count from 1; Kill and Restart take the index.
	coordinator := int(groups[cfg.ConsumerGroup].Coordinator.NodeID) - 1
	if coordinator < 0 || coordinator >= k.NodeCount() {
		t.Fatalf("group coordinator %d is none of the %d nodes", coordinator+1, k.NodeCount())
	}
	t.Logf("killing node %d, the group's coordinator", coordinator+1)
	k.Kill(coordinator)
	for down := time.Now(); time.Since(down) < 10*time.Second; time.Sleep(250 * time.Millisecond) {
		select {
		case <-s.done:
			t.Fatalf("the service exited %v after its group coordinator died: %v", time.Since(down).Round(time.Millisecond), s.stop())
		default:
		}
	}
	send(5) // two of three replicas are in sync: the writes go on
	testenv.WaitFor(t, 90*time.Second, "the orders sent without the coordinator ticketed", func() bool { return results(t, s.base)["issued"] == 10 })

	if err := k.Restart(context.Background(), coordinator); err != nil {
		t.Fatal(err)
	}
	send(5)
	testenv.WaitFor(t, 90*time.Second, "the orders after the node came back ticketed", func() bool { return results(t, s.base)["issued"] == 15 })
	if n := countTickets(t, pool); n != 15 {
		t.Fatalf("%d tickets, want 15", n)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}
