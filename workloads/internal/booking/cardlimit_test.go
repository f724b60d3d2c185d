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
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// payCard delivers a succeeded webhook paid with card and returns the
// answer, wanting 200.
func (e *env) payCard(order, paymentID, amount, card string) map[string]any {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"orderId": order, "paymentId": paymentID, "amount": amount, "currency": "EUR",
		"status": "succeeded", "cardFingerprint": card})
	r := e.webhook(testSecret, time.Now(), body)
	if r.status != http.StatusOK {
		e.t.Fatalf("pay %s with %s: %d %s", order, paymentID, r.status, r.body)
	}
	return r.json(e.t)
}

// onCard counts the seats of the event's paid orders with card.
func (e *env) onCard(card string) int64 {
	e.t.Helper()
	return e.count(`SELECT count(*) FROM ticket_order t JOIN order_seat os ON os.order_id = t.id
	                 WHERE t.card_fingerprint = $1 AND t.status = 'PAID'`, card)
}

// The seat limit (4) holds per card across identities: two customers buy
// two seats each with one card, a third customer's payment with it is
// refunded (card_limit) once however often it is redelivered, its seats
// freed; another card and a payment without a card buy as before.
func TestCardLimitAcrossIdentities(t *testing.T) {
	e := newEnv(t)
	const card = "fpScalper01"
	o1 := e.hold("acct-1", "A-1-1", "A-1-2")
	o2 := e.hold("acct-2", "A-1-3", "A-1-4")
	o3 := e.hold("acct-3", "A-1-5", "A-1-6")
	o4 := e.hold("acct-4", "A-1-7", "A-1-8")
	o5 := e.hold("acct-5", "A-1-9", "A-1-10")
	for i, o := range []string{o1, o2} {
		if a := e.payCard(o, fmt.Sprintf("pay-%d", i+1), "179.00", card); a["status"] != StatusPaid {
			t.Fatalf("payment %d with the card: %v", i+1, a)
		}
	}
	a := e.payCard(o3, "pay-3", "179.00", card)
	if a["status"] != StatusRefundRequired || a["refundReason"] != ReasonCardLimit {
		t.Fatalf("third account's payment with the card: %v, want REFUND_REQUIRED card_limit", a)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE seat_id IN ('A-1-5', 'A-1-6') AND status = 'AVAILABLE'`); n != 2 {
		t.Fatalf("%d of the refunded order's seats free, want 2", n)
	}
	// Redelivered, the same answer and nothing written.
	before := e.snapshot()
	for range 3 {
		if again := e.payCard(o3, "pay-3", "179.00", card); again["status"] != StatusRefundRequired || again["refundReason"] != ReasonCardLimit {
			t.Fatalf("redelivery: %v", again)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a redelivered payment changed the database")
	}
	if n := e.refundsFor("pay-3"); n != 1 {
		t.Fatalf("%d refund-requested rows for the card_limit payment, want 1", n)
	}
	if reason := e.scalar(`SELECT payload->>'reason' FROM outbox WHERE payload->>'paymentId' = 'pay-3'`); reason != ReasonCardLimit {
		t.Fatalf("refund reason in the outbox %v, want card_limit", reason)
	}
	// Another card, and no card at all, are limited per customer only.
	if a := e.payCard(o4, "pay-4", "179.00", "fpOtherCard"); a["status"] != StatusPaid {
		t.Fatalf("another card: %v", a)
	}
	if a := e.pay(o5, "pay-5", "179.00"); a["status"] != StatusPaid {
		t.Fatalf("no card: %v", a)
	}
	if got := e.onCard(card); got != 4 {
		t.Fatalf("%d seats paid with the card, want 4", got)
	}
	// Only paid orders keep the fingerprint.
	if n := e.count(`SELECT count(*) FROM ticket_order WHERE card_fingerprint IS NOT NULL`); n != 3 {
		t.Fatalf("%d orders keep a fingerprint, want the 3 paid with a card", n)
	}
	e.accounted("pay-1", "pay-2", "pay-3", "pay-4", "pay-5")
}

// Many accounts pay at once with one card, each payment delivered twice
// concurrently, in several rounds of a fresh card each: the card never
// buys more than the limit, every other payment is refunded exactly once
// (card_limit) and its seats are freed.
func TestCardLimitRace(t *testing.T) {
	e := newEnv(t)
	st := NewStore(e.pool, testEvent, time.Minute, 4, "EUR")
	const (
		rounds   = 3
		accounts = 16
		limit    = 4
	)
	for round := range rounds {
		card := fmt.Sprintf("fpRace%d", round)
		orders := make([]string, accounts)
		for i := range orders {
			orders[i] = e.hold(fmt.Sprintf("racer-%d-%02d", round, i), fmt.Sprintf("A-%d-%d", round+1, i+1))
		}
		var wg sync.WaitGroup
		results := make([][2]*ConfirmResult, accounts)
		start := make(chan struct{})
		for i, o := range orders {
			for d := range 2 {
				wg.Go(func() {
					<-start
					id := fmt.Sprintf("race-pay-%d-%02d", round, i)
					res, err := st.Confirm(context.Background(), Payment{OrderID: o, IdempotencyKey: id, PaymentID: id,
						Amount: 8950, Currency: "EUR", CardFingerprint: card})
					if err != nil {
						t.Errorf("payment %s: %v", id, err)
						return
					}
					results[i][d] = res
				})
			}
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		var paid, refunded int
		payments := make([]string, accounts)
		for i, r := range results {
			payments[i] = fmt.Sprintf("race-pay-%d-%02d", round, i)
			a, b := r[0].Order, r[1].Order
			if a.Status != b.Status || a.RefundReason != b.RefundReason || r[0].Fresh == r[1].Fresh {
				t.Errorf("payment %s answered %s/%s (fresh %v) and %s/%s (fresh %v): want one settlement and its repeat",
					payments[i], a.Status, a.RefundReason, r[0].Fresh, b.Status, b.RefundReason, r[1].Fresh)
			}
			switch {
			case a.Status == StatusPaid:
				paid++
			case a.Status == StatusRefundRequired && a.RefundReason == ReasonCardLimit:
				refunded++
			default:
				t.Errorf("payment %s: %s %s", payments[i], a.Status, a.RefundReason)
			}
		}
		if paid != limit || refunded != accounts-limit {
			t.Fatalf("round %d: %d paid, %d refunded; want %d and %d", round, paid, refunded, limit, accounts-limit)
		}
		if got := e.onCard(card); got != limit {
			t.Fatalf("round %d: %d seats paid with the card, want %d", round, got, limit)
		}
		e.accounted(payments...)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE status <> 'AVAILABLE'`); n != rounds*limit {
		t.Fatalf("%d seats not free, want only the %d sold", n, rounds*limit)
	}
}

// A fingerprint that is no short identifier is refused before anything is
// decided.
func TestCardFingerprintValidated(t *testing.T) {
	e := newEnv(t)
	o := e.hold("careful", "A-3-1")
	before := e.snapshot()
	for _, fp := range []string{"a b", "fp\u0000", "fp\xff", "fp\n", string(make([]byte, 65))} {
		body, _ := json.Marshal(map[string]string{"orderId": o, "paymentId": "p-bad-card", "amount": "89.50", "currency": "EUR",
			"status": "succeeded", "cardFingerprint": fp})
		if r := e.webhook(testSecret, time.Now(), body); r.status != http.StatusBadRequest || r.errCode() != "bad_card_fingerprint" {
			t.Errorf("fingerprint %q: %d %s, want 400 bad_card_fingerprint", fp, r.status, r.body)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a refused fingerprint changed the database")
	}
}

// Stripe's checkout session carries the card on its payment intent's
// latest charge (expanded): the card limit applies to it too.
func TestStripeCheckoutCardLimit(t *testing.T) {
	e := stripeEnv(t)
	session := func(orderID string) map[string]any {
		cs := checkoutSession(orderID, "paid", 17900, "eur")
		cs["payment_intent"] = map[string]any{"id": "pi_" + orderID[:8], "object": "payment_intent",
			"latest_charge": map[string]any{"id": "ch_" + orderID[:8], "object": "charge",
				"payment_method_details": map[string]any{"type": "card", "card": map[string]any{"fingerprint": "fpStripeCard"}}}}
		return cs
	}
	o1 := e.hold("stripe-1", "A-4-1", "A-4-2")
	o2 := e.hold("stripe-2", "A-4-3", "A-4-4")
	o3 := e.hold("stripe-3", "A-4-5", "A-4-6")
	var last response
	for i, o := range []string{o1, o2, o3} {
		last = e.sendStripe(stripeSecret, time.Now(), stripeEvent(fmt.Sprintf("evt_card_%d", i), stripe.EventTypeCheckoutSessionCompleted, session(o)))
		if last.status != http.StatusOK {
			t.Fatalf("order %d: %d %s", i+1, last.status, last.body)
		}
	}
	if a := last.json(t); a["status"] != StatusRefundRequired || a["refundReason"] != ReasonCardLimit {
		t.Fatalf("third session with the card: %v", a)
	}
	if got := e.onCard("fpStripeCard"); got != 4 {
		t.Fatalf("%d seats on the card, want 4", got)
	}
}
