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

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// The broker is down for more than 10 s while 1,000 orders confirm: nothing
// is marked while it is down, and once it is back (same port, same data
// directory) every event is delivered and marked, none lost, keys in order.
// It also shows the restarted broker kept the messages it had
// acknowledged before the stop.
func TestBrokerDown(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10+ s of broker downtime")
	}
	url, pool := newDB(t)
	k := testenv.RestartableKafka(t, events.TopicTicketIssued)
	cfg := testConfig(url, k.Brokers)
	cfg.BackoffMax = time.Second
	_, stop := startRun(t, cfg)

	const keys, before = 250, 250
	insertConcurrently(t, pool, keys, 1, 4, 0) // one row per key
	testenv.WaitFor(t, 30*time.Second, "rows before the outage marked", func() bool { return count(t, pool, "published_at IS NOT NULL") == before })

	k.Kill(0) // as a crashed broker machine
	down := time.Now()
	// 1,000 orders confirm during the outage, spread over it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		insertConcurrently(t, pool, keys, 4, 4, 9*time.Millisecond)
	}()
	for time.Since(down) < 11*time.Second {
		if n := count(t, pool, "published_at IS NOT NULL"); n != before {
			t.Fatalf("%d rows marked while the broker was down, want %d", n, before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	<-done
	if n := count(t, pool, "published_at IS NULL"); n != 1000 {
		t.Fatalf("%d rows waiting after the outage, want 1000", n)
	}

	if err := k.Restart(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "all rows marked after the outage", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	recs := readTopic(t, k.Brokers, events.TopicTicketIssued, before+1000, 30*time.Second)
	seen := map[int64]bool{}
	for _, r := range recs {
		seen[r.outboxID] = true
	}
	rows, err := pool.Query(context.Background(), "SELECT id FROM outbox WHERE published_at IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	marked := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		marked++
		if !seen[id] {
			t.Fatalf("outbox id %d is marked published but not on the broker", id)
		}
	}
	if marked != before+1000 || len(seen) != before+1000 {
		t.Fatalf("%d marked, %d distinct delivered; want %d each", marked, len(seen), before+1000)
	}
	checkKeyOrder(t, recs)
}
