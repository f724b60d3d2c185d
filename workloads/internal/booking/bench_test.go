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
	"strconv"
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
