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
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

func (e *env) cancel(customer, order string) {
	e.t.Helper()
	r := e.do("DELETE", "/events/7/holds/"+order, nil, QueueTokenHeader, e.token(customer))
	if r.status != http.StatusOK || r.json(e.t)["status"] != StatusCancelled {
		e.t.Fatalf("cancel %s: %d %s", order, r.status, r.body)
	}
}

func (e *env) sweep() {
	e.t.Helper()
	if _, _, _, err := NewStore(e.pool, testEvent, time.Minute, 4, "EUR").Sweep(context.Background(), 100); err != nil {
		e.t.Fatal(err)
	}
}

// pay delivers a succeeded webhook and wants 200; it returns the answer.
func (e *env) pay(order, paymentID, amount string) map[string]any {
	e.t.Helper()
	r := e.webhook(testSecret, time.Now(), paymentBody(order, paymentID, amount, "succeeded"))
	if r.status != http.StatusOK {
		e.t.Fatalf("pay %s with %s: %d %s", order, paymentID, r.status, r.body)
	}
	return r.json(e.t)
}

// owned counts the customer's SOLD and live HELD seats: what the limit caps.
func (e *env) owned(customer string) int64 {
	e.t.Helper()
	return e.count(`SELECT count(*) FROM seat WHERE held_by = $1 AND (status = 'SOLD' OR (status = 'HELD' AND hold_expires_at > now()))`, customer)
}

// refundsFor counts refund-requested outbox rows for a payment.
func (e *env) refundsFor(paymentID string) int64 {
	e.t.Helper()
	return e.count(`SELECT count(*) FROM outbox WHERE topic = $1 AND event_type = $2 AND payload->>'paymentId' = $3`,
		events.TopicRefundRequested, events.TypeRefundRequested, paymentID)
}

// accounted checks the money rule for each successful payment: it either
// settled a PAID order (with its one ticket-issued row) or has exactly one
// refund-requested row, never both, never neither.
func (e *env) accounted(paymentIDs ...string) {
	e.t.Helper()
	for _, p := range paymentIDs {
		paid := e.count(`SELECT count(*) FROM ticket_order WHERE status = 'PAID' AND payment_id = $1`, p)
		issued := e.count(`SELECT count(*) FROM outbox WHERE topic = $1 AND payload->>'paymentId' = $2`, events.TopicTicketIssued, p)
		refunds := e.refundsFor(p)
		if paid != issued || paid+refunds != 1 {
			e.t.Errorf("payment %s: %d paid orders, %d ticket-issued, %d refund-requested; want exactly one of paid or refunded", p, paid, issued, refunds)
		}
	}
}

// The reproduction, limit 4: O1 and O2 of two seats, cancel O1,
// O3 of two seats, then a valid webhook for each. O1's late payment would
// take the customer to six seats: it is refunded (seat_limit), with one
// refund-requested event, and its seats stay free.
func TestLatePaymentForCancelledOrderKeepsSeatLimit(t *testing.T) {
	e := newEnv(t)
	o1 := e.hold("fan", "A-1-1", "A-1-2")
	o2 := e.hold("fan", "A-1-3", "A-1-4")
	e.cancel("fan", o1)
	o3 := e.hold("fan", "A-1-5", "A-1-6")
	answers := map[string]map[string]any{}
	for i, o := range []string{o1, o2, o3} {
		answers[o] = e.pay(o, fmt.Sprintf("pay-%d", i+1), "179.00")
	}
	if m := answers[o1]; m["status"] != StatusRefundRequired || m["refundReason"] != ReasonSeatLimit {
		t.Fatalf("late payment of the cancelled order: %v", m)
	}
	for _, o := range []string{o2, o3} {
		if answers[o]["status"] != StatusPaid {
			t.Fatalf("order %s: %v", o, answers[o])
		}
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE held_by = 'fan' AND status = 'SOLD'`); n != 4 {
		t.Fatalf("%d seats sold to one customer, limit 4", n)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE seat_id IN ('A-1-1', 'A-1-2') AND status = 'AVAILABLE'`); n != 2 {
		t.Fatalf("the refunded order's seats: %d AVAILABLE, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE topic = $1 AND key = $2`, events.TopicRefundRequested, o1); n != 1 {
		t.Fatalf("%d refund-requested rows for the cancelled order, want 1", n)
	}
	e.accounted("pay-1", "pay-2", "pay-3")
	// The provider retries: the same answer, nothing new.
	before := e.snapshot()
	if m := e.pay(o1, "pay-1", "179.00"); m["status"] != StatusRefundRequired {
		t.Fatalf("retry: %v", m)
	}
	if e.snapshot() != before {
		t.Fatal("a retried callback changed the database")
	}
}

// An EXPIRED order's late payment: refunded when the customer has since
// held up to the limit; honoured (its free seats re-taken in the same
// transaction) when the limit allows. A late payment for a cancelled order
// within the limit is honoured the same way.
func TestLatePaymentForExpiredOrder(t *testing.T) {
	e := newEnv(t)
	o1 := e.hold("late", "A-2-1", "A-2-2")
	expire(t, e.pool, o1)
	e.sweep()
	if st := e.scalar(`SELECT status FROM ticket_order WHERE id = $1`, o1); st != StatusExpired {
		t.Fatalf("order is %v, want EXPIRED", st)
	}
	o2 := e.hold("late", "A-2-3", "A-2-4")
	o3 := e.hold("late", "A-2-5", "A-2-6")
	if m := e.pay(o1, "pay-exp-1", "179.00"); m["status"] != StatusRefundRequired || m["refundReason"] != ReasonSeatLimit {
		t.Fatalf("expired order over the limit: %v", m)
	}
	e.pay(o2, "pay-exp-2", "179.00")
	e.pay(o3, "pay-exp-3", "179.00")
	if n := e.owned("late"); n != 4 {
		t.Fatalf("customer owns %d seats, want 4", n)
	}
	e.accounted("pay-exp-1", "pay-exp-2", "pay-exp-3")

	// Within the limit and the seats still free: the payment buys them.
	o4 := e.hold("slow", "B-1-1", "B-1-2")
	expire(t, e.pool, o4)
	e.sweep()
	e.hold("slow", "B-1-3", "B-1-4")
	if m := e.pay(o4, "pay-slow", "90.00"); m["status"] != StatusPaid {
		t.Fatalf("expired order within the limit: %v", m)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE order_id = $1 AND status = 'SOLD' AND held_by = 'slow'`, o4); n != 2 {
		t.Fatalf("%d seats re-taken, want 2", n)
	}
	o5 := e.hold("undecided", "B-2-1")
	e.cancel("undecided", o5)
	if m := e.pay(o5, "pay-undecided", "45.00"); m["status"] != StatusPaid {
		t.Fatalf("cancelled order within the limit: %v", m)
	}
	e.accounted("pay-slow", "pay-undecided")
}

// One customer, limit 4: eight cancelled two-seat orders whose payments all
// arrive at once (each delivered three times), racing new holds of the same
// customer. The customer never ends above four seats, and every payment is
// either PAID or refunded exactly once.
func TestSeatLimitUnderConcurrentPaymentsAndHolds(t *testing.T) {
	e := newEnv(t)
	const orders = 8
	var ids, pays []string
	for i := range orders {
		o := e.hold("racer", fmt.Sprintf("A-%d-1", i+1), fmt.Sprintf("A-%d-2", i+1))
		e.cancel("racer", o)
		ids, pays = append(ids, o), append(pays, fmt.Sprintf("race-pay-%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i, o := range ids {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.webhook(testSecret, time.Now(), paymentBody(o, pays[i], "179.00", "succeeded"))
				if r.status != http.StatusOK {
					errs <- fmt.Sprintf("webhook %s: %d %s", o, r.status, r.body)
				}
			}()
		}
	}
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				seats := []string{fmt.Sprintf("A-%d-%d", i+1, 5+2*j), fmt.Sprintf("A-%d-%d", i+1, 6+2*j)}
				// A paid order ends the customer's queue session; admit
				// them again so holds keep racing the payments.
				r := e.do("POST", "/events/7/holds", map[string]any{"seats": seats}, QueueTokenHeader, e.token("racer"))
				if r.status != http.StatusCreated && r.errCode() != "seat_limit" && r.errCode() != "session_inactive" {
					errs <- fmt.Sprintf("hold: %d %s", r.status, r.body)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if n := e.owned("racer"); n > 4 {
		t.Fatalf("customer owns %d seats, limit 4", n)
	}
	if n := e.count(`SELECT count(*) FROM ticket_order WHERE id = ANY($1::uuid[]) AND status NOT IN ('PAID', 'REFUND_REQUIRED')`, ids); n != 0 {
		t.Fatalf("%d paid orders left unsettled", n)
	}
	if n := e.count(`SELECT count(*) FROM ticket_order WHERE id = ANY($1::uuid[]) AND status = 'PAID'`, ids); n > 2 {
		t.Fatalf("%d two-seat orders paid, at most 2 fit the limit", n)
	}
	e.accounted(pays...)
}

// A second, different payment for a settled order buys nothing: it is
// answered 200 (the provider stops retrying) and refunded exactly once,
// however often it is delivered, concurrently or not. The same holds for
// an order whose first payment was already refunded, and through the
// confirm endpoint.
func TestSecondPaymentRefundedOnce(t *testing.T) {
	e := newEnv(t)
	order := e.hold("twice", "B-4-1", "B-4-2")
	if m := e.pay(order, "pay-first", "90.00"); m["status"] != StatusPaid {
		t.Fatalf("first payment: %v", m)
	}
	body := paymentBody(order, "pay-second", "90.00", "succeeded")
	var wg sync.WaitGroup
	results := make([]response, 10)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = e.webhook(testSecret, time.Now(), body) }()
	}
	wg.Wait()
	for i, r := range results {
		if r.status != http.StatusOK || string(r.body) != string(results[0].body) {
			t.Fatalf("delivery %d: %d %s (first %s)", i, r.status, r.body, results[0].body)
		}
	}
	m := results[0].json(t)
	rp, _ := m["refundedPayment"].(map[string]any)
	if m["status"] != StatusPaid || m["paymentId"] != "pay-first" || rp["paymentId"] != "pay-second" ||
		rp["reason"] != ReasonOrderSettled || rp["amount"] != "90.00" || rp["currency"] != "EUR" {
		t.Fatalf("answer %s", results[0].body)
	}
	// Ten sequential deliveries of a third payment: one more refund.
	for range 10 {
		e.pay(order, "pay-third", "90.00")
	}
	e.accounted("pay-first", "pay-second", "pay-third")
	if n := e.count(`SELECT count(*) FROM seat WHERE order_id = $1 AND status = 'SOLD'`, order); n != 2 {
		t.Fatalf("%d seats sold, want 2", n)
	}

	// The order's first payment was refunded (wrong amount); a second one
	// is refunded too.
	cheap := e.hold("cheap", "B-4-3")
	if m := e.pay(cheap, "pay-cheap-1", "1.00"); m["status"] != StatusRefundRequired {
		t.Fatalf("wrong amount: %v", m)
	}
	if m := e.pay(cheap, "pay-cheap-2", "45.00"); m["status"] != StatusRefundRequired || m["refundedPayment"] == nil {
		t.Fatalf("second payment of a refunded order: %v", m)
	}
	e.accounted("pay-cheap-1", "pay-cheap-2")

	// The confirm endpoint: another key and payment → refunded; a replay
	// of it → the same answer; its payment id under yet another key, or
	// for another order → 422; the settling payment under another key →
	// 409, nothing written.
	path := "/orders/" + order + "/confirm"
	auth := "Bearer " + testServiceToken
	r := e.do("POST", path, `{"paymentId":"pay-4","amount":"90.00","currency":"EUR"}`, "Authorization", auth, "Idempotency-Key", "k4")
	if r.status != http.StatusOK || r.json(t)["refundedPayment"] == nil {
		t.Fatalf("confirm with another payment: %d %s", r.status, r.body)
	}
	again := e.do("POST", path, `{"paymentId":"pay-4","amount":"90.00","currency":"EUR"}`, "Authorization", auth, "Idempotency-Key", "k4")
	if again.status != http.StatusOK || string(again.body) != string(r.body) {
		t.Fatalf("replay: %d %s, first %s", again.status, again.body, r.body)
	}
	before := e.snapshot()
	for name, tc := range map[string]struct {
		path, key, body string
		status          int
	}{
		"payment id under another key": {path, "k5", `{"paymentId":"pay-4","amount":"90.00","currency":"EUR"}`, 422},
		"key with another payment":     {path, "k4", `{"paymentId":"pay-5","amount":"90.00","currency":"EUR"}`, 422},
		"payment for another order":    {"/orders/" + cheap + "/confirm", "k4", `{"paymentId":"pay-4","amount":"90.00","currency":"EUR"}`, 422},
		"settling payment, other key":  {path, "k6", `{"paymentId":"pay-first","amount":"90.00","currency":"EUR"}`, 409},
	} {
		if r := e.do("POST", tc.path, tc.body, "Authorization", auth, "Idempotency-Key", tc.key); r.status != tc.status {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.body, tc.status)
		}
	}
	if e.snapshot() != before || e.count(`SELECT count(*) FROM extra_payment`) != 4 {
		t.Fatal("refused confirms changed the database")
	}
	e.accounted("pay-4")
}
