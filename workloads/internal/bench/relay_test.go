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

package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// perfOutput is the end of ProducerPerformance's output in the form of
// Apache Kafka 4.4.0's kafka-tools jar (Stats.printWindow and printTotal's
// format strings, read from the jar with javap): a progress line, then
// the summary the bench reads.
const perfOutput = `249386 records sent, 49867.2 records/sec (19.26 MB/sec), 574.3 ms avg latency, 915.0 ms max latency.
300000 records sent, 51107.325383 records/sec (19.74 MB/sec), 563.09 ms avg latency, 915.00 ms max latency, 571 ms 50th, 781 ms 95th, 859 ms 99th, 905 ms 99.9th.
`

func TestParseProducerPerf(t *testing.T) {
	p, err := parseProducerPerf(perfOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := perfResult{records: 300000, recordsPerSec: 51107.325383, p50: 571 * time.Millisecond, p99: 859 * time.Millisecond}
	if p != want {
		t.Fatalf("parsed %+v, want %+v", p, want)
	}
	// The progress lines alone (a run that died) have no summary.
	if _, err := parseProducerPerf("249386 records sent, 49867.2 records/sec (19.26 MB/sec), 574.3 ms avg latency, 915.0 ms max latency.\n"); err == nil {
		t.Fatal("a progress line parsed as the summary")
	}
}

// TestFillOutbox: the relay's backlog is booking's own ticket-issued rows
// of paid two-seat orders, copied to the count asked for, and the sizes
// reported are the averages of what the relay reads.
func TestFillOutbox(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	ctx := context.Background()
	values, keys, err := fillOutbox(ctx, pool, 5, 20)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT topic, key, event_type, payload FROM outbox WHERE published_at IS NULL ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, valueSum, keySum, perKey := 0, 0, 0, map[string]int{}
	for rows.Next() {
		var topic, key, typ string
		var payload []byte
		if err := rows.Scan(&topic, &key, &typ, &payload); err != nil {
			t.Fatal(err)
		}
		var m events.TicketIssued
		if err := json.Unmarshal(payload, &m); err != nil {
			t.Fatal(err)
		}
		if topic != events.TopicTicketIssued || typ != events.TypeTicketIssued || m.OrderID != key || len(m.Seats) != relayOrderSeats || m.Email == "" || m.PaymentID == "" {
			t.Fatalf("row %d: %s %s %s %s", n, topic, key, typ, payload)
		}
		n, valueSum, keySum = n+1, valueSum+len(payload), keySum+len(key)
		perKey[key]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 20 || len(perKey) != 5 {
		t.Fatalf("%d rows of %d orders, want 20 of 5", n, len(perKey))
	}
	// Seat ids and payment times differ in length: an average, rounded.
	if (valueSum+n/2)/n != values || (keySum+n/2)/n != keys {
		t.Fatalf("values %d bytes and keys %d on average, reported %d and %d", valueSum/n, keySum/n, values, keys)
	}
}
