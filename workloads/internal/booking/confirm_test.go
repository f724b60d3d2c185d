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

	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// 100 concurrent identical webhooks: one PAID order, one outbox row, every
// caller gets the same answer, and the customer's queue session is freed.
func TestConcurrentWebhooks(t *testing.T) {
	e := newEnv(t)
	order := e.hold("payer", "A-3-1", "A-3-2")
	body := paymentBody(order, "pay-100", "179.00", "succeeded")
	var wg sync.WaitGroup
	results := make([]response, 100)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = e.webhook(testSecret, time.Now(), body) }()
	}
	wg.Wait()
	for i, r := range results {
		if r.status != http.StatusOK {
			t.Fatalf("webhook %d: %d %s", i, r.status, r.body)
		}
		m := r.json(t)
		if m["status"] != StatusPaid || m["orderId"] != order || m["paymentId"] != "pay-100" || m["settledAt"] != results[0].json(t)["settledAt"] {
			t.Fatalf("webhook %d answered %s", i, r.body)
		}
	}
	if n := e.count(`SELECT count(*) FROM outbox`); n != 1 {
		t.Fatalf("%d outbox rows, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM ticket_order WHERE status = 'PAID'`); n != 1 {
		t.Fatalf("%d paid orders, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE status = 'SOLD' AND order_id = $1`, order); n != 2 {
		t.Fatalf("%d seats sold, want 2", n)
	}
	var topic, key, typ string
	var payload []byte
	if err := e.pool.QueryRow(context.Background(), `SELECT topic, key, event_type, payload FROM outbox`).Scan(&topic, &key, &typ, &payload); err != nil {
		t.Fatal(err)
	}
	var ev events.TicketIssued
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	if topic != events.TopicTicketIssued || typ != events.TypeTicketIssued || key != order || ev.OrderID != order ||
		ev.CustomerID != "payer" || ev.Amount != "179.00" || ev.Currency != "EUR" || len(ev.Seats) != 2 ||
		ev.Seats[0] != (events.Seat{SeatID: "A-3-1", Section: "A", Price: "89.50"}) || ev.EventID != testEvent || ev.PaymentID != "pay-100" {
		t.Fatalf("outbox row %s %s %s %s", topic, key, typ, payload)
	}
	// The queue session is released (in the background).
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := e.rdb.ZScore(context.Background(), zone.ActiveKey(testEvent), "sess-payer").Result()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("queue session still active after payment")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The customer's order, through the queue token and an identity token.
	r := e.do("GET", "/orders/"+order, nil, QueueTokenHeader, e.token("payer"))
	if r.status != http.StatusOK || r.json(t)["status"] != StatusPaid {
		t.Fatalf("GET order: %d %s", r.status, r.body)
	}
}

func TestConfirmEndpoint(t *testing.T) {
	e := newEnv(t)
	order := e.hold("c", "B-2-1")
	path := "/orders/" + order + "/confirm"
	auth := "Bearer " + testServiceToken
	body := `{"paymentId":"p1","amount":"45.00","currency":"EUR"}`
	before := e.snapshot()
	for name, tc := range map[string]struct {
		headers []string
		body    string
		status  int
		code    string
	}{
		"no service token":    {[]string{"Idempotency-Key", "k1"}, body, 401, "unauthorized"},
		"wrong service token": {[]string{"Authorization", "Bearer nope", "Idempotency-Key", "k1"}, body, 401, "unauthorized"},
		"no idempotency key":  {[]string{"Authorization", auth}, body, 400, "missing_idempotency_key"},
		"bad amount":          {[]string{"Authorization", auth, "Idempotency-Key", "k1"}, `{"paymentId":"p1","amount":"45.001","currency":"EUR"}`, 400, "bad_json"},
		"no currency":         {[]string{"Authorization", auth, "Idempotency-Key", "k1"}, `{"paymentId":"p1","amount":"45.00"}`, 400, "bad_currency"},
		"malformed":           {[]string{"Authorization", auth, "Idempotency-Key", "k1"}, `{"paymentId":`, 400, "bad_json"},
	} {
		r := e.do("POST", path, tc.body, tc.headers...)
		if r.status != tc.status || r.errCode() != tc.code {
			t.Errorf("%s: got %d %s, want %d %s", name, r.status, r.body, tc.status, tc.code)
		}
	}
	if e.snapshot() != before {
		t.Fatal("rejected confirms changed the database")
	}
	r := e.do("POST", path, body, "Authorization", auth, "Idempotency-Key", "k1")
	if r.status != http.StatusOK || r.json(t)["status"] != StatusPaid {
		t.Fatalf("confirm: %d %s", r.status, r.body)
	}
	// A number amount is the same payment.
	again := e.do("POST", path, `{"paymentId":"p1","amount":45,"currency":"EUR"}`, "Authorization", auth, "Idempotency-Key", "k1")
	if again.status != http.StatusOK || string(again.body) != string(r.body) {
		t.Fatalf("repeat: %d %s, first %s", again.status, again.body, r.body)
	}
	other := e.hold("d", "B-2-2")
	after := e.snapshot()
	for name, tc := range map[string]struct {
		path, key, body string
		status          int
	}{
		"same key, other amount":  {path, "k1", `{"paymentId":"p1","amount":"46.00","currency":"EUR"}`, 422},
		"same key, other order":   {"/orders/" + other + "/confirm", "k1", body, 422},
		"other key, same payment": {path, "k2", `{"paymentId":"p1","amount":"45.00","currency":"EUR"}`, 409},
		"unknown order":           {"/orders/00000000-0000-0000-0000-000000000000/confirm", "k3", body, 404},
	} {
		r := e.do("POST", tc.path, tc.body, "Authorization", auth, "Idempotency-Key", tc.key)
		if r.status != tc.status {
			t.Errorf("%s: got %d %s, want %d", name, r.status, r.body, tc.status)
		}
	}
	if e.snapshot() != after {
		t.Fatal("rejected confirms changed the database")
	}
	if n := e.count(`SELECT count(*) FROM outbox`); n != 1 {
		t.Fatalf("%d outbox rows, want 1", n)
	}
}

// A payment for an expired hold whose seat someone else took: the order
// becomes REFUND_REQUIRED with a refund-requested event, committed; the
// other customer's hold is untouched. A wrong amount is refunded too.
func TestRefundRequired(t *testing.T) {
	e := newEnv(t)
	late := e.hold("late", "A-5-1", "A-5-2")
	expire(t, e.pool, late)
	taker := e.hold("taker", "A-5-2")
	r := e.webhook(testSecret, time.Now(), paymentBody(late, "pay-late", "179.00", "succeeded"))
	if r.status != http.StatusOK {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	if m := r.json(t); m["status"] != StatusRefundRequired || m["refundReason"] != ReasonSeatTaken {
		t.Fatalf("answer %s", r.body)
	}
	if st := e.scalar(`SELECT status || ' ' || order_id::text FROM seat WHERE seat_id = 'A-5-2'`); st != "HELD "+taker {
		t.Fatalf("taken seat is %v", st)
	}
	if st := e.scalar(`SELECT status FROM seat WHERE seat_id = 'A-5-1'`); st != "AVAILABLE" {
		t.Fatalf("the late order's other seat is %v, want AVAILABLE", st)
	}
	var ev events.RefundRequested
	if payload := outboxPayload(t, e.pool, events.TopicRefundRequested, events.TypeRefundRequested, late, &ev); ev.Reason != ReasonSeatTaken || ev.Amount != "179.00" || ev.CustomerID != "late" {
		t.Fatalf("refund event %s", payload)
	}
	// Repeating the callback repeats the answer and writes nothing.
	if r2 := e.webhook(testSecret, time.Now(), paymentBody(late, "pay-late", "179.00", "succeeded")); r2.status != http.StatusOK || string(r2.body) != string(r.body) {
		t.Fatalf("repeat: %d %s", r2.status, r2.body)
	}
	// Expired but not taken: the payment still buys the seats.
	slow := e.hold("slow", "A-6-1")
	expire(t, e.pool, slow)
	if r := e.webhook(testSecret, time.Now(), paymentBody(slow, "pay-slow", "89.50", "succeeded")); r.json(t)["status"] != StatusPaid {
		t.Fatalf("expired, not taken: %s", r.body)
	}
	// Wrong amount.
	cheap := e.hold("cheap", "A-7-1")
	r = e.webhook(testSecret, time.Now(), paymentBody(cheap, "pay-cheap", "1.00", "succeeded"))
	if m := r.json(t); m["status"] != StatusRefundRequired || m["refundReason"] != ReasonAmountMismatch {
		t.Fatalf("wrong amount: %s", r.body)
	}
	if st := e.scalar(`SELECT status FROM seat WHERE seat_id = 'A-7-1'`); st != "AVAILABLE" {
		t.Fatalf("seat of refunded order is %v", st)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE topic = $1`, events.TopicRefundRequested); n != 2 {
		t.Fatalf("%d refund events, want 2", n)
	}
}

// Tampered body, unknown secret, stale or future timestamp, malformed
// header: rejected, nothing written. Rotation: the old secret and a header
// with several v1 signatures verify.
func TestWebhookSignatures(t *testing.T) {
	e := newEnv(t)
	order := e.hold("w", "B-3-1")
	body := paymentBody(order, "pay-w", "45.00", "succeeded")
	before := e.snapshot()
	tampered := paymentBody(order, "pay-w", "0.01", "succeeded")
	for name, tc := range map[string]struct {
		header string
		body   []byte
		status int
		code   string
	}{
		"tampered body":  {webhooksig.Sign(testSecret, time.Now(), body), tampered, 401, "bad_signature"},
		"wrong secret":   {webhooksig.Sign("whsec_attacker", time.Now(), body), body, 401, "bad_signature"},
		"stale":          {webhooksig.Sign(testSecret, time.Now().Add(-6*time.Minute), body), body, 401, "stale_signature"},
		"future":         {webhooksig.Sign(testSecret, time.Now().Add(6*time.Minute), body), body, 401, "stale_signature"},
		"no header":      {"", body, 400, "bad_signature_header"},
		"garbage header": {"v1=zz,t=abc", body, 400, "bad_signature_header"},
		"no v1":          {fmt.Sprintf("t=%d", time.Now().Unix()), body, 400, "bad_signature_header"},
	} {
		r := e.do("POST", "/payments/webhook", tc.body, SignatureHeader, tc.header)
		if r.status != tc.status || r.errCode() != tc.code {
			t.Errorf("%s: got %d %s, want %d %s", name, r.status, r.body, tc.status, tc.code)
		}
	}
	if e.snapshot() != before {
		t.Fatal("rejected webhooks changed the database")
	}
	// During rotation the provider signs with both secrets.
	now := time.Now()
	h := webhooksig.Sign("whsec_attacker", now, body) + "," + webhooksig.Sign(testOldSecret, now, body)[len(fmt.Sprintf("t=%d,", now.Unix())):]
	r := e.do("POST", "/payments/webhook", body, SignatureHeader, h)
	if r.status != http.StatusOK || r.json(t)["status"] != StatusPaid {
		t.Fatalf("rotated secret: %d %s", r.status, r.body)
	}
	// A failed payment releases the hold; an unknown status is acknowledged.
	other := e.hold("f", "B-3-2")
	if r := e.webhook(testSecret, time.Now(), paymentBody(other, "pay-f", "45.00", "failed")); r.json(t)["status"] != StatusCancelled {
		t.Fatalf("failed payment: %s", r.body)
	}
	if r := e.webhook(testSecret, time.Now(), paymentBody(other, "pay-f", "45.00", "processing")); r.status != 200 || r.json(t)["ignored"] != true {
		t.Fatalf("processing: %s", r.body)
	}
}
