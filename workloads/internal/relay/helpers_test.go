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
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newDB returns a migrated database and a pool on it.
func newDB(t testing.TB) (string, *pgxpool.Pool) { return migrationstest.NewDB(t) }

func testConfig(url string, brokers []string) config.Relay {
	return config.Relay{
		Server:        config.Server{HTTPAddr: "127.0.0.1:0", ShutdownGrace: 2 * time.Second},
		Postgres:      config.Postgres{DatabaseURL: url},
		Kafka:         config.Kafka{Brokers: brokers, TopicTicketIssued: events.TopicTicketIssued, TopicRefundRequested: events.TopicRefundRequested},
		BatchSize:     100,
		PollInterval:  100 * time.Millisecond,
		Retention:     time.Hour,
		PruneInterval: time.Second,
		BackoffMin:    20 * time.Millisecond,
		BackoffMax:    300 * time.Millisecond,
		LockRetry:     50 * time.Millisecond,
	}
}

func orderKey(i int) string { return fmt.Sprintf("order-%05d", i) }

// ticketIssued is the payload of a paid order with two seats.
func ticketIssued(order string) []byte {
	b, _ := json.Marshal(events.TicketIssued{
		OrderID: order, EventID: 7, CustomerID: "cust-" + order, PaymentID: "pay-" + order,
		Amount: "179.00", Currency: "EUR", PaidAt: time.Now().UTC(),
		Seats: []events.Seat{{SeatID: order + "-A", Section: "A", Price: "89.50"}, {SeatID: order + "-B", Section: "A", Price: "89.50"}},
	})
	return b
}

// insertRow writes one outbox row as the booking service does and returns its id.
func insertRow(ctx context.Context, pool *pgxpool.Pool, key string) (int64, error) {
	var id int64
	err := pool.QueryRow(ctx, `INSERT INTO outbox (topic, key, event_type, payload) VALUES ($1, $2, $3, $4) RETURNING id`,
		events.TopicTicketIssued, key, events.TypeTicketIssued, ticketIssued(key)).Scan(&id)
	return id, err
}

// insertConcurrently inserts perKey rows for each of keys orders from
// workers goroutines; one key's rows are inserted by one goroutine in turn,
// as the booking service serialises an order's transactions.
func insertConcurrently(t testing.TB, pool *pgxpool.Pool, keys, perKey, workers int, pause time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range perKey {
				for k := w; k < keys; k += workers {
					if _, err := insertRow(context.Background(), pool, orderKey(k)); err != nil {
						errc <- fmt.Errorf("insert round %d key %d: %w", round, k, err)
						return
					}
					if pause > 0 {
						time.Sleep(pause)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func count(t testing.TB, pool *pgxpool.Pool, where string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM outbox WHERE "+where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// record is one message as the independent client (franz-go) saw it.
type record struct {
	key       string
	outboxID  int64
	eventType string
	partition int32
	offset    int64
	value     []byte
}

// readTopic reads topic from the start with franz-go, a client independent
// of the relay's kafka-go, until want records arrived or timeout passed.
func readTopic(t testing.TB, brokers []string, topic string, want int, timeout time.Duration) []record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []record
	for len(out) < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			rec := record{key: string(r.Key), partition: r.Partition, offset: r.Offset, value: r.Value}
			for _, h := range r.Headers {
				switch h.Key {
				case events.HeaderOutboxID:
					rec.outboxID, _ = strconv.ParseInt(string(h.Value), 10, 64)
				case events.HeaderEventType:
					rec.eventType = string(h.Value)
				}
			}
			out = append(out, rec)
		})
	}
	// Anything beyond want (duplicates) that is already there.
	fctx, fcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer fcancel()
	cl.PollFetches(fctx).EachRecord(func(r *kgo.Record) {
		rec := record{key: string(r.Key), partition: r.Partition, offset: r.Offset, value: r.Value}
		for _, h := range r.Headers {
			if h.Key == events.HeaderOutboxID {
				rec.outboxID, _ = strconv.ParseInt(string(h.Value), 10, 64)
			}
		}
		out = append(out, rec)
	})
	if len(out) < want {
		t.Fatalf("read %d records of %s, want %d", len(out), topic, want)
	}
	return out
}

// checkKeyOrder fails unless, for every key, the first deliveries of its
// outbox ids are in increasing order (a later duplicate of an earlier id
// is allowed: consumers drop it), all on one partition.
func checkKeyOrder(t testing.TB, recs []record) {
	t.Helper()
	last := map[string]int64{}
	part := map[string]int32{}
	seen := map[int64]bool{}
	// Records of one partition are in offset order as read; keys never
	// span partitions, which is checked too.
	for _, r := range recs {
		if p, ok := part[r.key]; ok && p != r.partition {
			t.Fatalf("key %s on partitions %d and %d", r.key, p, r.partition)
		}
		part[r.key] = r.partition
		if seen[r.outboxID] {
			continue
		}
		seen[r.outboxID] = true
		if r.outboxID <= last[r.key] {
			t.Fatalf("key %s: outbox id %d delivered after %d", r.key, r.outboxID, last[r.key])
		}
		last[r.key] = r.outboxID
	}
}

// checkAllDelivered reads the ticket-issued topic until n records arrived
// and checks that they carry n distinct outbox ids, each key in order.
func checkAllDelivered(t testing.TB, brokers []string, n int) {
	t.Helper()
	recs := readTopic(t, brokers, events.TopicTicketIssued, n, 30*time.Second)
	seen := map[int64]bool{}
	for _, r := range recs {
		seen[r.outboxID] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct outbox ids delivered, want %d", len(seen), n)
	}
	checkKeyOrder(t, recs)
}

// startRun runs Run in the background; the returned func stops it and
// returns its error.
func startRun(t testing.TB, cfg config.Relay) (net.Addr, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg, func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		cancel()
		t.Fatalf("relay.Run: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("relay did not start")
	}
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return addr, stop
}

func poolFor(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
