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
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// Two tickets services in one consumer group on an Apache Kafka broker
// share the topic's partitions; when one leaves mid-stream the group
// rebalances and the other takes its partitions over. Every seat gets one
// ticket, whichever replica read its order.
func TestConsumerGroupRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for consumer-group rebalances")
	}
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	a := startRun(t, testConfig(t, url, brokers))
	b := startRun(t, testConfig(t, url, brokers))

	const seats = 2
	next := 0
	send := func(n int) {
		for range n {
			next++
			produce(t, brokers, int64(next), order(next, seats))
		}
	}
	// Orders go out until both replicas have issued some: both are in the
	// group, each with its share of the partitions.
	deadline := time.Now().Add(90 * time.Second)
	for results(t, a.base)["issued"] == 0 || results(t, b.base)["issued"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after %d orders one replica issued nothing: a %v, b %v", next, results(t, a.base), results(t, b.base))
		}
		send(30)
		time.Sleep(300 * time.Millisecond)
	}
	firstHalf := next
	testenv.WaitFor(t, 60*time.Second, "the first orders ticketed", func() bool { return countTickets(t, pool) == firstHalf*seats })
	issuedA, issuedB := results(t, a.base)["issued"], results(t, b.base)["issued"]
	t.Logf("%d orders before the rebalance: replica a issued %d, replica b %d", firstHalf, issuedA, issuedB)

	// a leaves; b takes every partition.
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	send(150)
	testenv.WaitFor(t, 90*time.Second, "the orders after the rebalance ticketed by b", func() bool { return countTickets(t, pool) == next*seats })
	if got := results(t, b.base)["issued"] - issuedB; got < 150 {
		t.Fatalf("b issued %d orders after a left, want at least the 150 sent since", got)
	}
	var dup int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM (SELECT seat_id FROM ticket GROUP BY event_id, seat_id HAVING count(*) > 1) d`).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Fatalf("%d seats with more than one ticket", dup)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
}
