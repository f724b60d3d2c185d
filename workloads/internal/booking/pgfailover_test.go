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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
	"github.com/ticketfair/ticketfair/workloads/internal/relay"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// TestPostgresFailoverMidSale runs the booking service on a primary with a
// synchronous streaming standby, reached through a multi-host URL with
// target_session_attrs=read-write. Mid-sale the primary is SIGKILLed and the
// standby promoted (pg_ctl promote). It reports the seconds of 503s and
// checks that booking and its sweeper carry on against the new primary,
// that no seat is sold twice and that every payment the service
// acknowledged is a PAID order on the new primary.
func TestPostgresFailoverMidSale(t *testing.T) {
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Synchronous: a commit returns only once the standby has it.
	primary, err := localsvc.StartPostgresWith(ctx, "", "", "synchronous_commit=on")
	if err != nil {
		testenv.Unavailable(t, "PostgreSQL", err)
	}
	t.Cleanup(func() { _ = primary.Stop() })
	standby, err := localsvc.StartPostgresStandby(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop() })
	admin, err := database.Pool(ctx, config.Postgres{DatabaseURL: primary.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var syncState string
	for end := time.Now().Add(20 * time.Second); syncState != "sync"; time.Sleep(100 * time.Millisecond) {
		_ = admin.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication").Scan(&syncState)
		if time.Now().After(end) {
			log, _ := os.ReadFile(filepath.Join(standby.Dir, "postgres.log"))
			t.Fatalf("the standby is not a synchronous replica (%q):\n%s", syncState, log)
		}
	}
	admin.Close()
	if err := migrations.Up(ctx, primary.URL); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("postgres://postgres@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write", primary.Addr, standby.Addr)
	pool, err := database.Pool(ctx, config.Postgres{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	sections, _ := ParseSeating("A:10.00:20:10")
	if _, err := Seed(ctx, pool, testEvent, sections); err != nil {
		t.Fatal(err)
	}
	// A hold that committed as the primary died may lose its answer; its
	// buyer moves on, so the seat comes back when the hold expires, well
	// within the test's two minutes.
	e := startEnv(t, url, pool, func(c *config.Booking) { c.SweepInterval, c.HoldTTL = 200*time.Millisecond, 10*time.Second })
	// The relay and the tickets service on the same multi-host URL.
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued, events.TopicRefundRequested)
	runBg(t, func(ctx context.Context) error {
		var rc config.Relay
		_ = config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &rc)
		rc.HTTPAddr, rc.DatabaseURL, rc.Brokers = "127.0.0.1:0", url, brokers
		rc.BackoffMax, rc.LockRetry, rc.PollInterval = 300*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
		return relay.Run(ctx, rc, nil)
	})
	ticketKey, err := accesstoken.GenerateKey("tk1")
	if err != nil {
		t.Fatal(err)
	}
	runBg(t, func(ctx context.Context) error {
		var tc config.Tickets
		_ = config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &tc)
		tc.HTTPAddr, tc.DatabaseURL, tc.Brokers, tc.TicketKeys = "127.0.0.1:0", url, brokers, ticketKey
		tc.IdentityHMACSecret, tc.RetryBackoff = testIdentity, 50*time.Millisecond
		return tickets.Run(ctx, tc, nil)
	})

	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path string, body []byte, headers ...string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(ctx, "POST", e.base+path, bytes.NewReader(body))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	var (
		mu                   sync.Mutex
		paid                 = map[string]string{} // order -> seat, acknowledged 200
		firstFail, lastFail  time.Time
		fails                int
		killed               atomic.Bool
		afterKill, beforeKil atomic.Int64
	)
	fail := func() {
		mu.Lock()
		defer mu.Unlock()
		if firstFail.IsZero() {
			firstFail = time.Now()
		}
		lastFail, fails = time.Now(), fails+1
	}
	const buyers = 20
	var wg sync.WaitGroup
	for b := range buyers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				seat := fmt.Sprintf("A-%d-%d", 1+rand.IntN(20), 1+rand.IntN(10))
				customer := fmt.Sprintf("b%d-%d", b, n)
				body, _ := json.Marshal(map[string]any{"seats": []string{seat}})
				st, m := post("/events/7/holds", body, QueueTokenHeader, e.token(customer))
				switch {
				case st == 0 || st >= 500:
					fail()
					time.Sleep(50 * time.Millisecond)
					continue
				case st == http.StatusConflict:
					if m != nil && e.soldOut(ctx) {
						return
					}
					continue
				case st != http.StatusCreated:
					t.Errorf("hold: %d %v", st, m)
					return
				}
				order := m["orderId"].(string)
				pb := paymentBody(order, "pay-"+order, "10.00", "succeeded")
				for ctx.Err() == nil {
					st, m := post("/payments/webhook", pb, SignatureHeader, webhooksig.Sign(testSecret, time.Now(), pb))
					if st > 0 && st < 500 && st != http.StatusOK {
						t.Errorf("webhook: %d %v", st, m)
						return
					}
					if st == http.StatusOK {
						mu.Lock()
						paid[order] = seat
						mu.Unlock()
						if killed.Load() {
							afterKill.Add(1)
						} else {
							beforeKil.Add(1)
						}
						break
					}
					fail()
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	for beforeKil.Load() < 40 && ctx.Err() == nil && !t.Failed() {
		time.Sleep(20 * time.Millisecond)
	}
	if t.Failed() {
		cancel()
		wg.Wait()
		t.FailNow()
	}
	t.Logf("%d payments before the kill, %v into the test", beforeKil.Load(), time.Since(testStart).Round(time.Millisecond))
	primary.Kill()
	killed.Store(true)
	killedAt := time.Now()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	if err := standby.Promote(pctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(standby.Dir, "postgres.log"))
		t.Fatalf("%v\n%s", err, log)
	}
	promoted := time.Since(killedAt)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("the sale did not sell out within 2 minutes")
	}
	// Every acknowledged payment is a PAID order, its seat SOLD to it; no
	// seat is sold twice; the sweeper runs against the new primary.
	for order, seat := range paid {
		var status, seatStatus, seatOrder string
		if err := pool.QueryRow(ctx, `SELECT o.status, s.status, s.order_id::text FROM ticket_order o JOIN seat s ON s.seat_id = $2 AND s.event_id = $3 WHERE o.id = $1`,
			order, seat, testEvent).Scan(&status, &seatStatus, &seatOrder); err != nil {
			t.Fatalf("order %s: %v", order, err)
		}
		if status != "PAID" || seatStatus != "SOLD" || seatOrder != order {
			t.Fatalf("acknowledged order %s: %s, seat %s %s of %s", order, status, seat, seatStatus, seatOrder)
		}
	}
	var sold, paidSeats int64
	_ = pool.QueryRow(ctx, "SELECT count(*) FROM seat WHERE status = 'SOLD'").Scan(&sold)
	_ = pool.QueryRow(ctx, "SELECT count(*) FROM seat s JOIN ticket_order o ON o.id = s.order_id WHERE o.status = 'PAID' AND s.status = 'SOLD'").Scan(&paidSeats)
	if sold != 200 || paidSeats != sold || int64(len(paid)) != sold {
		t.Fatalf("%d seats SOLD, %d to PAID orders, %d payments acknowledged; want 200 each", sold, paidSeats, len(paid))
	}
	// The relay published every paid order and the tickets service issued
	// one ticket per sold seat, both through the failover.
	waitUntil := time.Now().Add(60 * time.Second)
	var unpublished, issued int64
	for time.Now().Before(waitUntil) {
		_ = pool.QueryRow(ctx, "SELECT count(*) FROM outbox WHERE published_at IS NULL").Scan(&unpublished)
		_ = pool.QueryRow(ctx, "SELECT count(*) FROM ticket").Scan(&issued)
		if unpublished == 0 && issued == sold {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if unpublished != 0 || issued != sold {
		t.Fatalf("%d outbox rows unpublished, %d tickets for %d sold seats", unpublished, issued, sold)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("PG FAILOVER: primary SIGKILLed after %d payments, standby promoted in %.2fs; requests failed (503 or no answer) from %+.2fs to %+.2fs after the kill (%.2fs, %d failed requests); %d payments after; 200 seats sold once each, every acknowledged payment PAID on the new primary, every outbox row published and %d tickets issued",
		beforeKil.Load(), promoted.Seconds(), firstFail.Sub(killedAt).Seconds(), lastFail.Sub(killedAt).Seconds(), lastFail.Sub(firstFail).Seconds(), fails, afterKill.Load(), issued)
}

// soldOut reports whether no seat is AVAILABLE (the sale is over; holds
// that will never be paid are swept back, so wait for those).
func (e *env) soldOut(ctx context.Context) bool {
	var n int64
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM seat WHERE status <> 'SOLD'").Scan(&n); err != nil {
		return false
	}
	return n == 0
}

// runBg runs a service until the test ends; it must not fail before.
func runBg(t *testing.T, run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service: %v", err)
		}
	})
}
