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
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
)

// 1,000 confirmed orders become 1,000 ticket-issued messages with the right
// keys, payloads and headers, every row is marked, and a row inserted into
// an idle outbox is published through NOTIFY long before the fallback poll.
func TestRelayPublishesEveryRow(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued, events.TopicRefundRequested)
	cfg := testConfig(url, brokers)
	cfg.PollInterval = 10 * time.Second // only NOTIFY can make it fast
	addr, stop := startRun(t, cfg)
	base := "http://" + addr.String()

	const orders = 1000
	insertConcurrently(t, pool, orders, 1, 8, 0)
	testenv.WaitFor(t, 60*time.Second, "all rows marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })

	recs := readTopic(t, brokers, events.TopicTicketIssued, orders, 30*time.Second)
	if len(recs) != orders {
		t.Fatalf("%d messages, want exactly %d (no duplicates without failures)", len(recs), orders)
	}
	payloads := map[int64][]byte{}
	rows, err := pool.Query(context.Background(), "SELECT id, key, payload::text FROM outbox")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[int64]string{}
	for rows.Next() {
		var id int64
		var key, payload string
		if err := rows.Scan(&id, &key, &payload); err != nil {
			t.Fatal(err)
		}
		keys[id], payloads[id] = key, []byte(payload)
	}
	rows.Close()
	seen := map[int64]bool{}
	for _, r := range recs {
		if seen[r.outboxID] {
			t.Fatalf("outbox id %d delivered twice", r.outboxID)
		}
		seen[r.outboxID] = true
		if keys[r.outboxID] != r.key {
			t.Fatalf("outbox id %d has key %q, want %q", r.outboxID, r.key, keys[r.outboxID])
		}
		if r.eventType != events.TypeTicketIssued {
			t.Fatalf("event type header %q", r.eventType)
		}
		if !bytes.Equal(r.value, payloads[r.outboxID]) {
			t.Fatalf("outbox id %d: value %s, want %s", r.outboxID, r.value, payloads[r.outboxID])
		}
	}
	checkKeyOrder(t, recs)

	// Idle outbox, slow poll: NOTIFY must wake the relay.
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	id, err := insertRow(context.Background(), pool, "order-late")
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "late row marked", func() bool {
		return count(t, pool, "published_at IS NOT NULL AND id = "+itoa(id)) == 1
	})
	if d := time.Since(start); d > time.Second {
		t.Fatalf("late row took %s to publish; NOTIFY did not wake the relay", d)
	}

	body := get(t, base+"/metrics", http.StatusOK)
	for _, want := range []string{
		"ticketfair_relay_published_total 1001",
		"ticketfair_relay_outbox_backlog 0",
		"ticketfair_relay_active 1",
		"ticketfair_relay_outbox_oldest_unpublished_age_seconds 0",
		"ticketfair_relay_batch_duration_seconds_count",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	get(t, base+"/healthz", http.StatusOK)
	get(t, base+"/readyz", http.StatusOK)
	get(t, base+"/nope", http.StatusNotFound)
	// The rules every service shares, on the live relay.
	httpapitest.LintMetrics(t, base+"/metrics")
	patterns := (&Relay{}).Handler(prometheus.NewRegistry()).Patterns()
	httpapitest.CheckWrongMethods(t, base, patterns, nil)
	httpapitest.CheckBadBytes(t, base, patterns, nil)
	if err := stop(); err != nil {
		t.Fatalf("relay.Run: %v", err)
	}
}

// Two relays run at once and the active one is stopped halfway: at no
// moment are both active, nothing is lost and every key stays in order.
func TestTwoRelays(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	cfg := testConfig(url, brokers)
	cfg.BatchSize = 50

	var relays [2]*Relay
	var stops [2]context.CancelFunc
	var wg sync.WaitGroup
	for i := range relays {
		r, err := New(cfg, pool, prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		relays[i] = r
		ctx, cancel := context.WithCancel(context.Background())
		stops[i] = cancel
		wg.Add(1)
		go func() { defer wg.Done(); _ = relays[i].Run(ctx) }()
	}
	t.Cleanup(func() {
		for i := range relays {
			stops[i]()
		}
		wg.Wait()
		for _, r := range relays {
			_ = r.Close()
		}
	})

	var both atomic.Bool
	watch := make(chan struct{})
	go func() {
		for {
			select {
			case <-watch:
				return
			default:
			}
			if relays[0].Leader() && relays[1].Leader() {
				both.Store(true)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	testenv.WaitFor(t, 10*time.Second, "an active relay", func() bool { return relays[0].Leader() || relays[1].Leader() })

	const keys, perKey = 250, 4
	var ins sync.WaitGroup
	ins.Add(1)
	go func() { defer ins.Done(); insertConcurrently(t, pool, keys, perKey, 8, time.Millisecond) }()
	testenv.WaitFor(t, 30*time.Second, "some rows published", func() bool { return count(t, pool, "published_at IS NOT NULL") >= 200 })
	first := 0
	if relays[1].Leader() {
		first = 1
	}
	stops[first]() // the active relay goes away mid-stream
	testenv.WaitFor(t, 10*time.Second, "the standby to take over", func() bool { return relays[1-first].Leader() })
	ins.Wait()
	testenv.WaitFor(t, 60*time.Second, "all rows marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	close(watch)
	if both.Load() {
		t.Fatal("both relays were active at once")
	}

	checkAllDelivered(t, brokers, keys*perKey)
}

// The relay is killed after the broker acknowledged a batch and before the
// rows are marked: the rows stay unpublished, the next relay sends them
// again, and the only effect is duplicates.
func TestRelayKilledBetweenAckAndMark(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	cfg := testConfig(url, brokers)
	cfg.BatchSize = 40

	const orders = 200
	insertConcurrently(t, pool, orders, 1, 4, 0)

	r1, err := New(cfg, pool, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var killed []int64
	errKilled := errors.New("killed")
	r1.afterAck = func(ids []int64) error {
		if killed == nil { // the second batch: the first is marked normally
			killed = []int64{}
			return nil
		}
		killed = append(killed, ids...)
		cancel()
		return errKilled
	}
	if err := r1.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(killed) != cfg.BatchSize {
		t.Fatalf("killed batch has %d rows, want %d", len(killed), cfg.BatchSize)
	}
	if n := count(t, pool, "published_at IS NOT NULL AND id = ANY('{"+joinIDs(killed)+"}')"); n != 0 {
		t.Fatalf("%d rows of the killed batch were marked without their mark committing", n)
	}
	if n := count(t, pool, "published_at IS NOT NULL"); n != cfg.BatchSize {
		t.Fatalf("%d rows marked before the kill, want %d", n, cfg.BatchSize)
	}

	_, stop := startRun(t, cfg)
	testenv.WaitFor(t, 30*time.Second, "all rows marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	recs := readTopic(t, brokers, events.TopicTicketIssued, orders+len(killed), 30*time.Second)
	times := map[int64]int{}
	for _, r := range recs {
		times[r.outboxID]++
	}
	if len(times) != orders {
		t.Fatalf("%d distinct outbox ids, want %d", len(times), orders)
	}
	for _, id := range killed {
		if times[id] != 2 {
			t.Fatalf("outbox id %d of the killed batch delivered %d times, want 2", id, times[id])
		}
		delete(times, id)
	}
	for id, n := range times {
		if n != 1 {
			t.Fatalf("outbox id %d delivered %d times", id, n)
		}
	}
	checkKeyOrder(t, recs)
	issueTickets(t, url, brokers, orders, len(recs))
}

// Only published rows past the retention go, in batches larger than one
// statement's limit.
func TestPrune(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	const old = pruneBatch + 123
	exec(`INSERT INTO outbox (topic, key, event_type, payload, published_at)
		SELECT 'ticket-issued', 'o' || g, 'ticket-issued', '{}', now() - interval '2 hours' FROM generate_series(1, ` + itoa(old) + `) g`)
	exec(`INSERT INTO outbox (topic, key, event_type, payload, published_at)
		SELECT 'ticket-issued', 'r' || g, 'ticket-issued', '{}', now() - interval '10 minutes' FROM generate_series(1, 10) g`)
	exec(`INSERT INTO outbox (topic, key, event_type, payload, created_at)
		SELECT 'ticket-issued', 'u' || g, 'ticket-issued', '{}', now() - interval '3 hours' FROM generate_series(1, 10) g`)
	n, err := Prune(ctx, pool, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if n != old {
		t.Fatalf("pruned %d rows, want %d", n, old)
	}
	if got := count(t, pool, "true"); got != 20 {
		t.Fatalf("%d rows left, want 20 (recent published and unpublished)", got)
	}
	if got := count(t, pool, "published_at IS NULL"); got != 10 {
		t.Fatalf("%d unpublished rows left, want 10", got)
	}
}

// The active relay prunes on its own.
func TestRelayPrunesWhileRunning(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	cfg := testConfig(url, brokers)
	cfg.Retention = 200 * time.Millisecond
	cfg.PruneInterval = 100 * time.Millisecond
	_, stop := startRun(t, cfg)
	insertConcurrently(t, pool, 50, 1, 2, 0)
	testenv.WaitFor(t, 30*time.Second, "published rows pruned", func() bool { return count(t, pool, "true") == 0 })
	readTopic(t, brokers, events.TopicTicketIssued, 50, 10*time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, url string, want int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, b, want)
	}
	return string(b)
}

// The active relay's database session is killed (as when its pod or the
// network dies) twice mid-stream: the lock and the unmarked batch go with
// it, a relay takes over, nothing is lost and keys stay in order.
func TestRelaySessionKilled(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	cfg := testConfig(url, brokers)
	cfg.BatchSize = 20
	_, stopA := startRun(t, cfg)
	_, stopB := startRun(t, cfg)

	const keys, perKey = 100, 5
	done := make(chan struct{})
	go func() { defer close(done); insertConcurrently(t, pool, keys, perKey, 4, 2*time.Millisecond) }()
	killed := 0
	for _, at := range []int{100, 250} {
		testenv.WaitFor(t, 30*time.Second, "rows published", func() bool { return count(t, pool, "published_at IS NOT NULL") >= at })
		var n int
		err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l
			WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		killed += n
	}
	if killed != 2 {
		t.Fatalf("killed %d lock-holding sessions, want 2", killed)
	}
	<-done
	testenv.WaitFor(t, 60*time.Second, "all rows marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	checkAllDelivered(t, brokers, keys*perKey)
}

// New refuses Kafka TLS settings it cannot build a transport from, instead
// of logging them and dialing without TLS.
func TestNewRefusesBadKafkaSettings(t *testing.T) {
	var cfg config.Relay
	cfg.Brokers, cfg.KafkaTLS, cfg.KafkaTLSCA = []string{"127.0.0.1:1"}, true, "not a PEM certificate"
	r, err := New(cfg, nil, prometheus.NewRegistry())
	if err == nil || !strings.Contains(err.Error(), "kafka settings") {
		t.Fatalf("New = %v, %v; want a kafka settings error", r, err)
	}
}
