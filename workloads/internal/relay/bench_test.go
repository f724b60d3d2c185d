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
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// BenchmarkOutboxToBroker confirms orders at a steady rate (one outbox row
// every 2 ms, 500/s) and measures, per row, the time from the insert's
// commit to the message being read from the broker by an independent
// franz-go consumer. Run with e.g. -benchtime=3000x.
func BenchmarkOutboxToBroker(b *testing.B) {
	url, pool := newDB(b)
	brokers := testenv.KafkaBrokers(b, events.TopicTicketIssued)
	cfg := testConfig(url, brokers)
	cfg.BatchSize = 500
	cfg.PollInterval = 500 * time.Millisecond
	_, stop := startRun(b, cfg)
	defer stop()

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(events.TopicTicketIssued),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var mu sync.Mutex
	received := map[int64]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			now := time.Now()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				for _, h := range r.Headers {
					if h.Key == events.HeaderOutboxID {
						id, _ := strconv.ParseInt(string(h.Value), 10, 64)
						if _, ok := received[id]; !ok {
							received[id] = now
						}
					}
				}
			})
			mu.Unlock()
		}
	}()

	committed := make(map[int64]time.Time, b.N)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		<-tick.C
		id, err := insertRow(context.Background(), pool, orderKey(i%5000))
		if err != nil {
			b.Fatal(err)
		}
		committed[id] = time.Now()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n >= b.N {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d", n, b.N)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	mu.Lock()
	lat := make([]time.Duration, 0, b.N)
	for id, c := range committed {
		lat = append(lat, received[id].Sub(c))
	}
	mu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rows/s")
}

// BenchmarkRelayThroughput measures how fast the relay drains a backlog:
// b.N rows are committed first, then the relay starts, and the clock runs
// until the last row is marked published (acknowledged by the broker).
func BenchmarkRelayThroughput(b *testing.B) {
	url, pool := newDB(b)
	brokers := testenv.KafkaBrokers(b, events.TopicTicketIssued)
	payload := ticketIssued("order-bench")
	if _, err := pool.Exec(context.Background(), `INSERT INTO outbox (topic, key, event_type, payload)
		SELECT $1, 'order-' || (g % 5000), $2, $3 FROM generate_series(1, $4) g`,
		events.TopicTicketIssued, events.TypeTicketIssued, payload, b.N); err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(url, brokers)
	cfg.BatchSize = 500
	b.ResetTimer()
	start := time.Now()
	_, stop := startRun(b, cfg)
	defer stop()
	testenv.WaitFor(b, 5*time.Minute, "backlog drained", func() bool { return count(b, pool, "published_at IS NULL") == 0 })
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}
