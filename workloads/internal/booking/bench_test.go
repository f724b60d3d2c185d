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

package booking

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// benchClients is the number of concurrent clients of the benchmarks and
// of pgbench, so the two compare.
const benchClients = 8

// BenchmarkHold measures hold transactions per second against the real
// server, uncontended (every hold a different seat) and on a hot set of 10
// seats, then runs pgbench with the single conditional UPDATE a hold makes
// per seat on the same server and reports the ratio.
//
//	go test -run '^$' -bench BenchmarkHold -benchtime 5s ./workloads/internal/booking/
func BenchmarkHold(b *testing.B) {
	url, pool := testDB(b, "X:10.00:200:250") // 50,000 seats
	var all []string
	for r := 1; r <= 200; r++ {
		for n := 1; n <= 250; n++ {
			all = append(all, SeatID("X", r, n))
		}
	}
	var customer atomic.Int64
	run := func(b *testing.B, ttl time.Duration, seats []string) {
		// A short TTL lets seats be taken over when the benchmark wraps
		// around, through the same conditional UPDATE.
		st := NewStore(pool, testEvent, ttl, 4, "EUR")
		var next, ok, conflicts atomic.Int64
		b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				seat := seats[int(next.Add(1))%len(seats)]
				_, err := st.Hold(ctx, "bench-"+strconv.FormatInt(customer.Add(1), 10), "s", []string{seat})
				var he *httpapi.Error
				switch {
				case err == nil:
					ok.Add(1)
				case errors.As(httpError(err), &he) && he.Code == "seats_unavailable":
					conflicts.Add(1)
				default:
					b.Error(err)
					return
				}
			}
		})
		secs := time.Since(start).Seconds()
		b.ReportMetric(float64(ok.Load())/secs, "holds/s")
		b.ReportMetric(float64(ok.Load()+conflicts.Load())/secs, "attempts/s")
	}
	b.Run("uncontended", func(b *testing.B) { run(b, time.Millisecond, all) })
	b.Run("hot10", func(b *testing.B) { run(b, 5*time.Millisecond, all[:10]) })
	b.Run("pgbench", func(b *testing.B) {
		tps, err := pgbench(b, url, pool)
		if err != nil {
			b.Skip(err)
		}
		b.ReportMetric(tps, "updates/s")
	})
}

// BenchmarkHoldBest compares best-available holds (2 together in one
// category, one statement: hold_best) with holds of 2 picked seats
// (hold_seats) against the real database, from benchClients clients, each
// in a venue of its own of 50,000 seats that the holds fill as a sale
// does, and reports holds per second, each hold's p50 and p99, and the
// ratio of best-available to picked holds per second.
//
//	go test -run '^$' -bench BenchmarkHoldBest -benchtime 5s ./workloads/internal/booking/
func BenchmarkHoldBest(b *testing.B) {
	_, pool := testDB(b, "")
	sections, err := ParseSeating("X:10.00:200:250")
	if err != nil {
		b.Fatal(err)
	}
	var customer atomic.Int64
	var pickedRate float64
	venues := int64(0)
	run := func(b *testing.B, hold func(st *Store, ctx context.Context, customer string, i int64) (*Hold, error)) float64 {
		// A fresh venue for each run, so the holds never wrap around.
		venues++
		st := NewStore(pool, testEvent+venues, 5*time.Minute, 4, "EUR")
		if _, err := Seed(context.Background(), pool, st.eventID, sections); err != nil {
			b.Fatal(err)
		}
		var next, ok atomic.Int64
		var mu sync.Mutex
		var took []time.Duration
		b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var mine []time.Duration
			for pb.Next() {
				began := time.Now()
				_, err := hold(st, ctx, "bench-"+strconv.FormatInt(customer.Add(1), 10), next.Add(1))
				if err != nil {
					b.Error(err)
					return
				}
				ok.Add(1)
				mine = append(mine, time.Since(began))
			}
			mu.Lock()
			took = append(took, mine...)
			mu.Unlock()
		})
		secs := time.Since(start).Seconds()
		rate := float64(ok.Load()) / secs
		b.ReportMetric(rate, "holds/s")
		if len(took) > 0 {
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		}
		return rate
	}
	b.Run("picked", func(b *testing.B) {
		pickedRate = run(b, func(st *Store, ctx context.Context, customer string, i int64) (*Hold, error) {
			// Two seats side by side, spread over the venue (7919 is
			// prime to the 25,000 pairs: none is asked for twice).
			k := (i * 7919) % 25000
			r, n := k/125+1, (k%125)*2+1
			return st.Hold(ctx, customer, "s", []string{SeatID("X", int(r), int(n)), SeatID("X", int(r), int(n)+1)})
		})
	})
	b.Run("best", func(b *testing.B) {
		rate := run(b, func(st *Store, ctx context.Context, customer string, _ int64) (*Hold, error) {
			return st.HoldBest(ctx, customer, "s", "", "", BestRequest{Quantity: 2, Category: "X", Together: true})
		})
		if pickedRate > 0 {
			b.ReportMetric(rate/pickedRate, "best/picked")
		}
	})
}

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbench runs the hold's conditional UPDATE, one seat per transaction,
// from benchClients clients for 5 seconds on the same database.
func pgbench(b *testing.B, url string, pool *pgxpool.Pool) (float64, error) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		return 0, err
	}
	orderID := "00000000-0000-0000-0000-00000000b0b0"
	if _, err := pool.Exec(context.Background(), `INSERT INTO ticket_order (id, customer_id, event_id, amount, currency, hold_expires_at)
		VALUES ($1, 'pgbench', $2, 0, 'EUR', now()) ON CONFLICT DO NOTHING`, orderID, testEvent); err != nil {
		return 0, err
	}
	script := filepath.Join(b.TempDir(), "hold.sql")
	sql := fmt.Sprintf(`\set r random(1, 200)
\set s random(1, 250)
UPDATE seat SET status = 'HELD', held_by = 'pgbench', order_id = '%s', hold_expires_at = now() + interval '1 millisecond', updated_at = now() WHERE event_id = %d AND seat_id = 'X-' || :r || '-' || :s AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at <= now())) RETURNING section, price::text;
`, orderID, testEvent)
	if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
		return 0, err
	}
	out, err := exec.Command(bin, "-n", "-M", "prepared", "-c", strconv.Itoa(benchClients), "-j", "2", "-T", "5", "-f", script, url).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench output has no tps:\n%s", out)
	}
	b.Logf("pgbench:\n%s", out)
	return strconv.ParseFloat(string(m[1]), 64)
}
