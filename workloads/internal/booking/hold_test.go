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
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

func TestParseSeating(t *testing.T) {
	got, err := ParseSeating("A:89.50:10:20; B:45:30:40")
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{{"A", 8950, 10, 20}, {"B", 4500, 30, 40}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", ";", "A:1:2", "A:x:1:1", "A:1.234:1:1", "A:-1:1:1", "A:1:0:1", "A:1:1:0", "A-B:1:1:1",
		"A:1:1:1;A:2:1:1", "A:1:100000:1", "A:1:10000:10000", ":1:1:1", "A:1e3:1:1"} {
		if _, err := ParseSeating(bad); err == nil {
			t.Errorf("ParseSeating(%q) accepted", bad)
		}
	}
}

func TestCents(t *testing.T) {
	for in, want := range map[string]string{"179": "179.00", "179.5": "179.50", "0.05": "0.05", "89.50": "89.50"} {
		c, err := ParseCents(in)
		if err != nil || c.String() != want {
			t.Errorf("ParseCents(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"", ".5", "1.", "1.234", "-1", "1e2", " 1", "99999999999"} {
		if _, err := ParseCents(bad); err == nil {
			t.Errorf("ParseCents(%q) accepted", bad)
		}
	}
}

// 50,000 seats seed in seconds; seeding again adds nothing and never
// resets a HELD or SOLD seat.
func TestSeedIdempotent(t *testing.T) {
	ctx := context.Background()
	_, pool := testDB(t, "")
	sections, err := ParseSeating("F:120.00:100:250;G:60.00:100:250")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := Seed(ctx, pool, testEvent, sections)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("seeded %d seats in %v", n, took)
	if n != 50000 {
		t.Fatalf("seeded %d seats, want 50000", n)
	}
	if took > 20*time.Second {
		t.Fatalf("seeding 50,000 seats took %v", took)
	}
	st := NewStore(pool, testEvent, time.Minute, 4, "EUR")
	h, err := st.Hold(ctx, "c1", "s1", []string{"F-1-1", "F-1-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE seat SET status = 'SOLD', hold_expires_at = NULL WHERE seat_id = 'F-1-2'`); err != nil {
		t.Fatal(err)
	}
	if n, err := Seed(ctx, pool, testEvent, sections); err != nil || n != 0 {
		t.Fatalf("re-seed inserted %d, %v", n, err)
	}
	var s1, s2, o1 string
	if err := pool.QueryRow(ctx, `SELECT (SELECT status FROM seat WHERE seat_id = 'F-1-1'), (SELECT status FROM seat WHERE seat_id = 'F-1-2'),
		(SELECT order_id::text FROM seat WHERE seat_id = 'F-1-1')`).Scan(&s1, &s2, &o1); err != nil {
		t.Fatal(err)
	}
	if s1 != "HELD" || s2 != "SOLD" || o1 != h.OrderID {
		t.Fatalf("after re-seed: F-1-1 %s (order %s), F-1-2 %s", s1, o1, s2)
	}
}

// The design's own test: 50 goroutines race for one seat over HTTP;
// exactly one hold succeeds and the seat is HELD by that order.
func TestFiftyGoroutinesOneSeat(t *testing.T) {
	e := newEnv(t)
	tokens := make([]string, 50)
	for i := range tokens {
		tokens[i] = e.token(fmt.Sprintf("racer-%d", i))
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		others  = map[int]int{}
	)
	start := make(chan struct{})
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.do("POST", "/events/7/holds", `{"seats":["A-1-1"]}`, QueueTokenHeader, tokens[i])
			mu.Lock()
			defer mu.Unlock()
			if r.status == http.StatusCreated {
				winners = append(winners, r.json(t)["orderId"].(string))
				return
			}
			if r.status == http.StatusConflict && r.errCode() != "seats_unavailable" {
				t.Errorf("409 with code %q", r.errCode())
			}
			others[r.status]++
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || others[http.StatusConflict] != 49 {
		t.Fatalf("winners %v, other statuses %v", winners, others)
	}
	if st := e.scalar(`SELECT status || ' ' || order_id::text FROM seat WHERE seat_id = 'A-1-1'`); st != "HELD "+winners[0] {
		t.Fatalf("seat is %v, want HELD by %s", st, winners[0])
	}
	if n := e.count(`SELECT count(*) FROM ticket_order`); n != 1 {
		t.Fatalf("%d orders exist after the race, want 1", n)
	}
}

// At scale: 2,000 customers hold random overlapping sets of 1-4 seats over
// 500 seats, several rounds. No seat is ever held by two orders, each
// successful hold holds exactly its seats, no deadlock or serialization
// error reaches a caller, and expired holds are taken over.
func TestHoldsAtScale(t *testing.T) {
	ctx := context.Background()
	_, pool := testDB(t, "S:10.00:20:25") // 500 seats
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	var all []string
	for r := 1; r <= 20; r++ {
		for n := 1; n <= 25; n++ {
			all = append(all, SeatID("S", r, n))
		}
	}
	const (
		customers = 2000
		rounds    = 5
		workers   = 24
	)
	takenOver := 0
	for round := range rounds {
		// The previous round's holds are still HELD but expired: this round
		// may take them over.
		expiredBefore := map[string]bool{}
		if round > 0 {
			if _, err := pool.Exec(ctx, `UPDATE seat SET hold_expires_at = now() - interval '1 second' WHERE status = 'HELD'`); err != nil {
				t.Fatal(err)
			}
			rows, _ := pool.Query(ctx, `SELECT seat_id FROM seat WHERE status = 'HELD'`)
			for rows.Next() {
				var id string
				_ = rows.Scan(&id)
				expiredBefore[id] = true
			}
			rows.Close()
		}
		type result struct {
			customer string
			hold     *Hold
		}
		jobs := make(chan int)
		results := make(chan result, customers)
		var failures atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range jobs {
					rng := rand.New(rand.NewPCG(uint64(round*customers+c), 1))
					n := 1 + rng.IntN(4)
					seats := map[string]bool{}
					for len(seats) < n {
						seats[all[rng.IntN(len(all))]] = true
					}
					customer := fmt.Sprintf("c%d", c)
					h, err := st.Hold(ctx, customer, "s", slices.Collect(mapKeys(seats)))
					var he *httpapi.Error
					switch {
					case err == nil:
						results <- result{customer, h}
					case errors.As(httpError(err), &he) && (he.Code == "seats_unavailable" || he.Code == "seat_limit"):
					default:
						failures.Add(1)
						t.Errorf("hold for %s: %v", customer, err)
					}
				}
			}()
		}
		for c := range customers {
			jobs <- c
		}
		close(jobs)
		wg.Wait()
		close(results)
		if failures.Load() > 0 {
			t.Fatalf("round %d: %d holds failed with an error", round, failures.Load())
		}
		// Every seat is claimed by at most one successful hold of this
		// round, and the database agrees with each hold.
		claimed := map[string]string{}
		ok := 0
		for r := range results {
			ok++
			for _, s := range r.hold.Seats {
				if prev, dup := claimed[s]; dup {
					t.Fatalf("round %d: seat %s held by orders %s and %s", round, s, prev, r.hold.OrderID)
				}
				claimed[s] = r.hold.OrderID
				if expiredBefore[s] {
					takenOver++
				}
			}
		}
		rows, err := pool.Query(ctx, `SELECT seat_id, order_id::text FROM seat WHERE status = 'HELD' AND hold_expires_at > now()`)
		if err != nil {
			t.Fatal(err)
		}
		inDB := map[string]string{}
		for rows.Next() {
			var s, o string
			if err := rows.Scan(&s, &o); err != nil {
				t.Fatal(err)
			}
			inDB[s] = o
		}
		rows.Close()
		if len(inDB) != len(claimed) {
			t.Fatalf("round %d: %d live held seats in the database, %d claimed by successful holds", round, len(inDB), len(claimed))
		}
		for s, o := range claimed {
			if inDB[s] != o {
				t.Fatalf("round %d: seat %s is held by %q in the database, the hold said %s", round, s, inDB[s], o)
			}
		}
		// order_seat of every order of this round matches its seats.
		var mismatched int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM order_seat os JOIN seat s USING (event_id, seat_id)
			WHERE s.hold_expires_at > now() AND s.order_id <> os.order_id AND os.order_id IN (
				SELECT order_id FROM seat WHERE status = 'HELD' AND hold_expires_at > now())`).Scan(&mismatched); err != nil {
			t.Fatal(err)
		}
		if mismatched != 0 {
			t.Fatalf("round %d: %d order_seat rows disagree with the seats", round, mismatched)
		}
		t.Logf("round %d: %d successful holds, %d seats held", round, ok, len(claimed))
	}
	if takenOver == 0 {
		t.Fatal("no expired hold was taken over")
	}
	t.Logf("%d expired seats taken over", takenOver)
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The limit counts seats already held or bought, and concurrent holds of
// one customer cannot add up past it.
func TestCustomerLimit(t *testing.T) {
	ctx := context.Background()
	_, pool := testDB(t, testSeating)
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	if _, err := st.Hold(ctx, "greedy", "s", []string{"A-1-1", "A-1-2", "A-1-3"}); err != nil {
		t.Fatal(err)
	}
	_, err := st.Hold(ctx, "greedy", "s", []string{"A-2-1", "A-2-2"})
	var he *httpapi.Error
	if !errors.As(httpError(err), &he) || he.Code != "seat_limit" || he.Status != http.StatusConflict {
		t.Fatalf("second hold past the limit: %v", err)
	}
	if _, err := st.Hold(ctx, "greedy", "s", []string{"A-2-1"}); err != nil {
		t.Fatalf("hold up to the limit: %v", err)
	}
	// 20 parallel single-seat holds of another customer: exactly 4 succeed.
	var wg sync.WaitGroup
	var okCount atomic.Int64
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var perr *httpapi.Error
			if _, err := st.Hold(ctx, "parallel", "s", []string{SeatID("B", 1+i/10, 1+i%10)}); err == nil {
				okCount.Add(1)
			} else if !errors.As(httpError(err), &perr) || perr.Code != "seat_limit" {
				t.Errorf("parallel hold: %v", err)
			}
		}()
	}
	wg.Wait()
	var held int64
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM seat WHERE held_by = 'parallel'`).Scan(&held)
	if okCount.Load() != 4 || held != 4 {
		t.Fatalf("%d parallel holds succeeded, %d seats held; want 4", okCount.Load(), held)
	}
}

// A hold with one taken seat holds nothing; the 409 lists the taken seat.
func TestHoldAllOrNothing(t *testing.T) {
	e := newEnv(t)
	e.hold("first", "A-1-2")
	before := e.snapshot()
	r := e.do("POST", "/events/7/holds", `{"seats":["A-1-3","A-1-2","A-1-1"]}`, QueueTokenHeader, e.token("second"))
	if r.status != http.StatusConflict || r.errCode() != "seats_unavailable" {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	un := r.json(t)["error"].(map[string]any)["unavailable"].([]any)
	if len(un) != 1 || un[0] != "A-1-2" {
		t.Fatalf("unavailable = %v", un)
	}
	if after := e.snapshot(); after != before {
		t.Fatal("a failed hold changed the database")
	}
	// A seat that does not exist is bad input, named even beside a taken one.
	r = e.do("POST", "/events/7/holds", `{"seats":["A-1-2","Z-9-9","A-1-3"]}`, QueueTokenHeader, e.token("second"))
	if r.status != http.StatusBadRequest || r.errCode() != "unknown_seats" || !strings.Contains(string(r.body), "Z-9-9") || strings.Contains(string(r.body), "A-1-2") {
		t.Fatalf("unknown seat beside a taken one: %d %s", r.status, r.body)
	}
	if after := e.snapshot(); after != before {
		t.Fatal("a hold of an unknown seat changed the database")
	}
	// The hold's expiry comes from the database clock.
	r = e.do("POST", "/events/7/holds", `{"seats":["A-1-3"]}`, QueueTokenHeader, e.token("second"))
	h := r.json(t)
	exp, _ := time.Parse(time.RFC3339Nano, h["expiresAt"].(string))
	var dbExp time.Time
	if err := e.pool.QueryRow(context.Background(), `SELECT hold_expires_at FROM seat WHERE seat_id = 'A-1-3'`).Scan(&dbExp); err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(dbExp) || h["amount"] != "89.50" || h["currency"] != "EUR" {
		t.Fatalf("hold %v, seat expires %v", h, dbExp)
	}
	// The provider's checkout must end a minute before the hold: the
	// default payment timeout is 4/5 of the 5-minute hold TTL.
	payBy, _ := time.Parse(time.RFC3339Nano, h["payBy"].(string))
	if want := dbExp.Add(-time.Minute); !payBy.Equal(want) {
		t.Fatalf("payBy %v, want %v", payBy, want)
	}
	o := e.do("GET", "/orders/"+h["orderId"].(string), nil, QueueTokenHeader, e.token("second")).json(t)
	if orderPayBy, _ := time.Parse(time.RFC3339Nano, o["payBy"].(string)); !orderPayBy.Equal(payBy) {
		t.Fatalf("order payBy %v, hold payBy %v", o["payBy"], payBy)
	}
	// Every seat not taken is named, however many.
	r = e.do("POST", "/events/7/holds", `{"seats":["B-1-1","A-1-3","A-1-2"]}`, QueueTokenHeader, e.token("third"))
	if un := r.json(t)["error"].(map[string]any)["unavailable"].([]any); r.status != http.StatusConflict || len(un) != 2 || un[0] != "A-1-2" || un[1] != "A-1-3" {
		t.Fatalf("two taken seats: %d %s", r.status, r.body)
	}
	// A hold across sections costs the sum of its seats' prices, in the
	// answer, the order and the order's seats.
	r = e.do("POST", "/events/7/holds", `{"seats":["B-1-1","A-2-1","B-1-2"]}`, QueueTokenHeader, e.token("third"))
	if h = r.json(t); r.status != http.StatusCreated || h["amount"] != "179.50" {
		t.Fatalf("hold across sections: %d %s", r.status, r.body)
	}
	var orderAmount, seatsAmount string
	if err := e.pool.QueryRow(context.Background(), `SELECT o.amount::text, (SELECT sum(price)::text FROM order_seat WHERE order_id = o.id)
		FROM ticket_order o WHERE o.id = $1`, h["orderId"]).Scan(&orderAmount, &seatsAmount); err != nil || orderAmount != "179.50" || seatsAmount != "179.50" {
		t.Fatalf("order amount %s, its seats %s: %v", orderAmount, seatsAmount, err)
	}
}

// A payment timeout that is not shorter than the hold TTL is refused at
// start: a payment could then complete after its hold expired.
func TestPaymentTimeoutShorterThanHold(t *testing.T) {
	for _, d := range []time.Duration{5 * time.Minute, 6 * time.Minute, -time.Second} {
		cfg := testConfig(t)
		cfg.EventID, cfg.HTTPAddr = testEvent, "127.0.0.1:0"
		cfg.PaymentTimeout = d
		err := Run(context.Background(), cfg, nil)
		if err == nil || !strings.Contains(err.Error(), "shorter than the hold TTL") {
			t.Errorf("payment timeout %s with hold TTL %s: %v", d, cfg.HoldTTL, err)
		}
	}
}

// Releasing one's own hold frees the seats; someone else's is not found.
func TestReleaseHold(t *testing.T) {
	e := newEnv(t)
	id := e.hold("owner", "B-1-1", "B-1-2")
	if r := e.do("DELETE", "/events/7/holds/"+id, nil, QueueTokenHeader, e.token("thief")); r.status != http.StatusNotFound {
		t.Fatalf("someone else's release: %d %s", r.status, r.body)
	}
	r := e.do("DELETE", "/events/7/holds/"+id, nil, QueueTokenHeader, e.token("owner"))
	if r.status != http.StatusOK || r.json(t)["status"] != StatusCancelled {
		t.Fatalf("release: %d %s", r.status, r.body)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE status <> 'AVAILABLE'`); n != 0 {
		t.Fatalf("%d seats not available after release", n)
	}
	if r := e.do("DELETE", "/events/7/holds/"+id, nil, QueueTokenHeader, e.token("owner")); r.status != http.StatusConflict {
		t.Fatalf("second release: %d %s", r.status, r.body)
	}
	e.hold("next", "B-1-1")
}

// The sweeper frees expired holds, expires their orders, and publishes the
// remaining inventory to Redis.
func TestSweeper(t *testing.T) {
	e := newEnv(t, func(c *cfgBooking) { c.SweepInterval = 50 * time.Millisecond; c.SweepBatch = 2 })
	keep := e.hold("keep", "A-1-1")
	gone := e.hold("gone", "A-2-1", "A-2-2", "A-2-3")
	sold := e.hold("buyer", "B-1-1")
	// "twice" let one hold run out but holds other seats: still shopping.
	twiceOld := e.hold("twice", "A-5-1")
	e.hold("twice", "A-5-2")
	if r := e.webhook(testSecret, time.Now(), paymentBody(sold, "pay-sweep", "45.00", "succeeded")); r.status != http.StatusOK {
		t.Fatalf("pay: %d %s", r.status, r.body)
	}
	expire(t, e.pool, gone)
	expire(t, e.pool, twiceOld)
	deadline := time.Now().Add(10 * time.Second)
	for {
		status := e.scalar(`SELECT status FROM ticket_order WHERE id = $1`, gone)
		rem, _ := e.rdb.Get(context.Background(), zone.RemainingKey(testEvent)).Int64()
		if status == StatusExpired && rem == 249 && e.count(`SELECT count(*) FROM seat WHERE status = 'HELD'`) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after sweeping: order %v, remaining %d", status, rem)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := e.scalar(`SELECT status FROM ticket_order WHERE id = $1`, keep); st != StatusPending {
		t.Fatalf("live order became %v", st)
	}
	// The checkout that ran out ended its session; live shoppers keep theirs.
	for sid, want := range map[string]bool{"sess-gone": false, "sess-keep": true, "sess-twice": true} {
		active, err := zone.SessionActive(context.Background(), e.rdb, testEvent, sid)
		if err != nil || active != want {
			t.Errorf("session %s active=%v (%v), want %v", sid, active, err, want)
		}
	}
	tok, _, err := e.keys.Sign(testEvent, "gone", "sess-gone", time.Now(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-2-1"}}, QueueTokenHeader, tok); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "session_inactive") {
		t.Errorf("hold after the checkout ran out: %d %s, want 403 session_inactive", r.status, r.body)
	}
	m := e.do("GET", "/metrics", nil)
	if !containsAll(string(m.body), `ticketfair_booking_sweeper_rows_total{kind="seats"} 4`, `ticketfair_booking_sweeper_rows_total{kind="sessions"} 1`, `ticketfair_booking_holds_total{result="ok"} 5`,
		`ticketfair_booking_confirms_total{result="paid"} 1`, "ticketfair_booking_db_pool_max_conns 20") {
		t.Fatalf("metrics:\n%s", m.body)
	}
}
