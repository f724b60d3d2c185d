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
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// testPhases: a members' presale of at most 2 seats in section A, then the
// general sale with the event's limit (4) and every section.
func testPhases() string {
	at := time.Now().UTC().Add(-time.Hour)
	b, _ := json.Marshal([]config.Phase{
		{Name: "presale", OpensAt: at, MaxSeatsPerCustomer: 2, Sections: []string{"A"},
			Queues: []config.PhaseQueue{{Name: "members", Weight: 1, Tiers: []string{"member"}}}},
		{Name: "sale", OpensAt: at.Add(time.Minute), Queues: []config.PhaseQueue{{Name: "general", Weight: 1}}},
	})
	return string(b)
}

func withPhases(c *config.Booking) { c.Phases = testPhases() }

// phaseToken admits customer under phase in session sid: an access token
// naming the phase plus an active queue session.
func (e *env) phaseToken(customer, sid, phase string) string {
	e.t.Helper()
	tok, _, err := e.keys.SignPhase(testEvent, customer, sid, phase, time.Now(), 10*time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	exp := float64(time.Now().Add(10 * time.Minute).UnixMilli())
	if err := e.rdb.ZAdd(context.Background(), zone.ActiveKey(testEvent), redis.Z{Score: exp, Member: sid}).Err(); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// A member admitted in the presale (limit 2, section A) cannot hold 3
// seats at once, nor a seat in B, nor a third seat later; each refusal
// names the phase and changes nothing. The same customer admitted again in
// the general sale holds up to the event's limit of 4, in any section. A
// token naming a phase the sale does not have is refused.
func TestHoldPhaseLimitAndSections(t *testing.T) {
	e := newEnv(t, withPhases)
	pre := e.phaseToken("m1", "sess-m1-pre", "presale")
	before := e.snapshot()

	r := e.holdWith(pre, "A-1-1", "A-1-2", "A-1-3")
	if m := r.json(t); r.status != 400 || r.errCode() != "too_many_seats" || m["error"].(map[string]any)["phase"] != "presale" ||
		m["error"].(map[string]any)["limit"] != 2.0 {
		t.Fatalf("3 seats in the presale: %d %s", r.status, r.body)
	}
	r = e.holdWith(pre, "A-1-1", "B-1-1")
	if m := r.json(t)["error"].(map[string]any); r.status != 403 || r.errCode() != "section_not_in_phase" || m["phase"] != "presale" ||
		fmt.Sprint(m["seats"]) != "[B-1-1]" || fmt.Sprint(m["sections"]) != "[A]" || !strings.Contains(m["message"].(string), "presale") {
		t.Fatalf("a seat in B in the presale: %d %s", r.status, r.body)
	}
	if after := e.snapshot(); after != before {
		t.Fatal("a refused presale hold changed the database")
	}
	if r := e.holdWith(pre, "A-1-1", "A-1-2"); r.status != 201 {
		t.Fatalf("2 seats in A in the presale: %d %s", r.status, r.body)
	}
	r = e.holdWith(pre, "A-1-3")
	if m := r.json(t)["error"].(map[string]any); r.status != 409 || r.errCode() != "seat_limit" || m["phase"] != "presale" ||
		m["limit"] != 2.0 || m["alreadyHeld"] != 2.0 {
		t.Fatalf("a third seat in the presale: %d %s", r.status, r.body)
	}

	sale := e.phaseToken("m1", "sess-m1-sale", "sale")
	if r := e.holdWith(sale, "A-1-3", "B-1-1"); r.status != 201 {
		t.Fatalf("the same customer in the general sale, seats 3 and 4: %d %s", r.status, r.body)
	}
	r = e.holdWith(sale, "B-1-2")
	if m := r.json(t)["error"].(map[string]any); r.status != 409 || r.errCode() != "seat_limit" || m["limit"] != 4.0 || m["phase"] != "sale" {
		t.Fatalf("a fifth seat in the general sale: %d %s", r.status, r.body)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE held_by = 'm1' AND status = 'HELD'`); n != 4 {
		t.Fatalf("m1 holds %d seats, want 4", n)
	}

	before = e.snapshot()
	r = e.holdWith(e.phaseToken("x1", "sess-x1", "nope"), "A-2-1")
	if r.status != 403 || r.errCode() != "unknown_phase" {
		t.Fatalf("a token of an unknown phase: %d %s", r.status, r.body)
	}
	if e.snapshot() != before {
		t.Fatal("a hold with an unknown phase changed the database")
	}
	// A token without a phase (signed before the sale had phases) holds
	// under the event's rule.
	if r := e.holdWith(e.token("p1"), "B-2-1", "B-2-2", "B-2-3"); r.status != 201 {
		t.Fatalf("a token without a phase: %d %s", r.status, r.body)
	}
}

// A booking service without phases refuses a token naming one: it cannot
// tell that phase's limit.
func TestHoldPhaseWithoutPhases(t *testing.T) {
	e := newEnv(t)
	if r := e.holdWith(e.phaseToken("m1", "sess-m1", "presale"), "A-1-1"); r.status != 403 || r.errCode() != "unknown_phase" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// The phase's refusals come before the database: a store without one
// answers them.
func TestPhaseRefusalsNeedNoDatabase(t *testing.T) {
	ps, err := parsePhases(testPhases(), 4, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{maxSeats: 4, phases: ps} // no pool: a query would panic
	ctx := context.Background()
	var (
		outside *SectionNotInPhaseError
		tooMany *TooManySeatsError
		unknown *UnknownPhaseError
	)
	if _, err := s.HoldInPhase(ctx, "m1", "s", "presale", "", []string{"B-1-1"}); !errors.As(err, &outside) || outside.Phase != "presale" {
		t.Errorf("section B in the presale: %v", err)
	}
	if _, err := s.HoldInPhase(ctx, "m1", "s", "presale", "", []string{"A-1-1", "A-1-2", "A-1-3"}); !errors.As(err, &tooMany) || tooMany.Limit != 2 {
		t.Errorf("3 seats in the presale: %v", err)
	}
	if _, err := s.HoldInPhase(ctx, "m1", "s", "vip", "", []string{"A-1-1"}); !errors.As(err, &unknown) {
		t.Errorf("unknown phase: %v", err)
	}
}

// Many holds of one presale customer at once, each of one or two seats
// of section A, from two sessions: the customer's seats never pass the
// phase's limit of 2.
func TestHoldPhaseLimitRace(t *testing.T) {
	e := newEnv(t, withPhases)
	tokens := []string{e.phaseToken("m1", "sess-a", "presale"), e.phaseToken("m1", "sess-b", "presale")}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		held   int
		status = map[string]int{}
	)
	start := make(chan struct{})
	for i := range 40 {
		// Distinct seats per hold, so only the limit refuses.
		row, seat := i%10+1, i/10*2+1
		seats := []string{fmt.Sprintf("A-%d-%d", row, seat)}
		if i%2 == 1 {
			seats = append(seats, fmt.Sprintf("A-%d-%d", row, seat+1))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.holdWith(tokens[i%2], seats...)
			mu.Lock()
			defer mu.Unlock()
			status[fmt.Sprint(r.status, " ", r.errCode())]++
			if r.status == http.StatusCreated {
				held += len(seats)
			}
		}()
	}
	close(start)
	wg.Wait()
	n := e.count(`SELECT count(*) FROM seat WHERE held_by = 'm1' AND status = 'HELD'`)
	if held > 2 || n != int64(held) || held == 0 {
		t.Fatalf("held %d seats by the answers, %d in the database, want 1 or 2; answers %v", held, n, status)
	}
	for s := range status {
		if s != "201 " && s != "409 seat_limit" {
			t.Errorf("unexpected answers %v", status)
		}
	}
	t.Logf("answers %v; %d seats held", status, held)
}

// Booking refuses, at start, a phase whose limit passes the event's or
// whose sections the seating does not have.
func TestPhasesCheckedAtStart(t *testing.T) {
	for name, tc := range map[string]struct {
		phases, want string
	}{
		"limit above the event's": {`[{"name":"presale","maxSeatsPerCustomer":5}]`, "TICKETFAIR_PHASES[0].maxSeatsPerCustomer (--phases): 5: must not exceed the event's limit, 4"},
		"unknown section":         {`[{"name":"presale","sections":["Z"]}]`, `TICKETFAIR_PHASES[0].sections[0]: "Z": not a section of the seating`},
		"unnamed":                 {`[{"maxSeatsPerCustomer":1}]`, `TICKETFAIR_PHASES[0].name (--phases): "": must be lower-case letters`},
		"twice":                   {`[{"name":"a"},{"name":"a"}]`, `TICKETFAIR_PHASES[1].name (--phases): "a": named twice`},
		"not JSON":                {`presale`, "TICKETFAIR_PHASES"},
	} {
		cfg := testConfig(t)
		cfg.EventID = testEvent
		cfg.Seating = testSeating
		cfg.Phases = tc.phases
		err := Run(context.Background(), cfg, func(net.Addr) {})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
}

// A payment is checked against the limit its order was held under. A
// presale customer (limit 2) whose hold expired, who held again and paid,
// is refunded (seat_limit) when the first payment completes late, however
// the two payments race; under the event's limit (4) it would have bought
// two more seats. The same late payment of a general-sale order (limit 4)
// buys its seats. The phase's limit binds the card too: a second member
// paying for presale seats with a card that already bought the phase's 2
// is refunded (card_limit).
func TestLatePaymentKeepsThePhasesLimit(t *testing.T) {
	e := newEnv(t, withPhases)
	pre := e.phaseToken("m1", "sess-m1-pre", "presale")
	first := e.holdIn(pre, "A-3-1", "A-3-2")
	expire(t, e.pool, first)
	e.sweep()
	second := e.holdIn(pre, "A-3-3", "A-3-4")
	if n := e.count(`SELECT seat_limit::bigint FROM ticket_order WHERE id = $1`, second); n != 2 {
		t.Fatalf("the presale order was held under a limit of %d, want 2", n)
	}
	var wg sync.WaitGroup
	answers := make([]response, 6)
	for i := range answers {
		order, payment := first, "pay-late"
		if i%2 == 1 {
			order, payment = second, "pay-on-time"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.webhook(testSecret, time.Now(), paymentBody(order, payment, "179.00", "succeeded"))
		}()
	}
	wg.Wait()
	for i, r := range answers {
		want, reason := StatusRefundRequired, ReasonSeatLimit
		if i%2 == 1 {
			want, reason = StatusPaid, ""
		}
		if r.status != http.StatusOK {
			t.Fatalf("payment %d: %d %s", i, r.status, r.body)
		}
		if a := r.json(t); a["status"] != want || (reason != "" && a["refundReason"] != reason) {
			t.Fatalf("payment %d: %v, want %s %s", i, a, want, reason)
		}
	}
	if n := e.owned("m1"); n != 2 {
		t.Fatalf("the presale customer owns %d seats, the phase's limit is 2", n)
	}
	e.accounted("pay-late", "pay-on-time")

	sale := e.phaseToken("m2", "sess-m2-sale", "sale")
	late := e.holdIn(sale, "B-3-1", "B-3-2")
	expire(t, e.pool, late)
	e.sweep()
	e.holdIn(sale, "B-3-3", "B-3-4")
	if a := e.pay(late, "pay-sale-late", "90.00"); a["status"] != StatusPaid {
		t.Fatalf("a late general-sale payment within the event's limit: %v", a)
	}
	if n := e.owned("m2"); n != 4 {
		t.Fatalf("the general-sale customer owns %d seats, want 4", n)
	}

	const card = "fpPresaleCard"
	o1 := e.holdIn(e.phaseToken("m3", "sess-m3-pre", "presale"), "A-4-1", "A-4-2")
	o2 := e.holdIn(e.phaseToken("m4", "sess-m4-pre", "presale"), "A-4-3", "A-4-4")
	if a := e.payCard(o1, "pay-card-1", "179.00", card); a["status"] != StatusPaid {
		t.Fatalf("the first member's payment with the card: %v", a)
	}
	if a := e.payCard(o2, "pay-card-2", "179.00", card); a["status"] != StatusRefundRequired || a["refundReason"] != ReasonCardLimit {
		t.Fatalf("a second member's presale payment with the same card: %v, want REFUND_REQUIRED card_limit", a)
	}
	e.accounted("pay-sale-late", "pay-card-1", "pay-card-2")
}
