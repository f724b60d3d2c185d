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
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
)

const (
	stripeSecret    = "whsec_stripe_current"
	stripeOldSecret = "whsec_stripe_previous"
)

func stripeEnv(t *testing.T) *env {
	return newEnv(t, func(c *config.Booking) { c.StripeWebhookSecrets = stripeSecret + "," + stripeOldSecret })
}

// stripeEvent is an event as Stripe sends it, object of type objType.
func stripeEvent(id string, typ stripe.EventType, object map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": stripe.APIVersion, "created": time.Now().Unix(),
		"livemode": false, "pending_webhooks": 1, "type": typ, "data": map[string]any{"object": object},
	})
	return b
}

func checkoutSession(orderID, status string, cents int64, currency string) map[string]any {
	return map[string]any{"id": "cs_test_" + orderID[:8], "object": "checkout.session", "payment_status": status,
		"amount_total": cents, "currency": currency, "payment_intent": "pi_" + orderID[:8],
		"metadata": map[string]string{StripeOrderKey: orderID}}
}

// sendStripe signs payload with stripe-go's own test helper and posts it.
func (e *env) sendStripe(secret string, at time.Time, payload []byte) response {
	e.t.Helper()
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at})
	return e.do("POST", StripeWebhookPath, sp.Payload, "Stripe-Signature", sp.Header)
}

// checkout.session.completed confirms through the same path as the signed
// webhook: once, whatever Stripe retries, with either rotated secret.
func TestStripeCheckoutCompleted(t *testing.T) {
	e := stripeEnv(t)
	orderID := e.hold("stripe-buyer", "A-1-1", "A-1-2") // 2 × 89.50
	ev := stripeEvent("evt_1", stripe.EventTypeCheckoutSessionCompleted, checkoutSession(orderID, "paid", 17900, "eur"))

	r := e.sendStripe(stripeSecret, time.Now(), ev)
	if r.status != http.StatusOK || r.json(t)["status"] != StatusPaid || r.json(t)["paymentId"] != "pi_"+orderID[:8] {
		t.Fatalf("checkout.session.completed: %d %s", r.status, r.body)
	}
	// Stripe retries (here signed with the previous secret): the same answer, nothing new.
	before := e.snapshot()
	if r2 := e.sendStripe(stripeOldSecret, time.Now(), ev); r2.status != http.StatusOK || r2.json(t)["status"] != StatusPaid {
		t.Fatalf("retry: %d %s", r2.status, r2.body)
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("a retried event changed the database")
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE key = $1`, orderID); n != 1 {
		t.Fatalf("%d outbox rows for the order, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE order_id = $1 AND status = 'SOLD'`, orderID); n != 2 {
		t.Fatalf("%d seats sold, want 2", n)
	}
}

// Bad signatures change nothing and answer the signed webhook's errors.
func TestStripeSignatures(t *testing.T) {
	e := stripeEnv(t)
	orderID := e.hold("stripe-sig", "A-2-1")
	ev := stripeEvent("evt_2", stripe.EventTypeCheckoutSessionCompleted, checkoutSession(orderID, "paid", 8950, "eur"))
	before := e.snapshot()
	for name, c := range map[string]struct {
		send   func() response
		status int
		code   string
	}{
		"wrong secret": {func() response { return e.sendStripe("whsec_other", time.Now(), ev) }, 401, "bad_signature"},
		"too old":      {func() response { return e.sendStripe(stripeSecret, time.Now().Add(-time.Hour), ev) }, 401, "stale_signature"},
		"unsigned":     {func() response { return e.do("POST", StripeWebhookPath, ev) }, 400, "bad_signature_header"},
		"tampered": {func() response {
			sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev, Secret: stripeSecret})
			return e.do("POST", StripeWebhookPath, strings.Replace(string(ev), "8950", "1", 1), "Stripe-Signature", sp.Header)
		}, 401, "bad_signature"},
	} {
		if r := c.send(); r.status != c.status || r.errCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.status, r.body, c.status, c.code)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a refused event changed the database")
	}
	// Without a Stripe secret the mode is off.
	off := newEnv(t)
	if r := off.sendStripe(stripeSecret, time.Now(), ev); r.status != http.StatusServiceUnavailable || r.errCode() != "webhook_not_configured" {
		t.Fatalf("not configured: %d %s", r.status, r.body)
	}
}

// A wrong amount takes the existing refund path (REFUND_REQUIRED and a
// refund-requested event); Stripe's charge.refunded for it is recorded.
// An expired checkout releases the hold; unknown events are acknowledged.
func TestStripeRefundsAndExpiry(t *testing.T) {
	e := stripeEnv(t)
	short := e.hold("stripe-short", "B-1-1") // 45.00
	r := e.sendStripe(stripeSecret, time.Now(), stripeEvent("evt_3", stripe.EventTypeCheckoutSessionCompleted, checkoutSession(short, "paid", 100, "eur")))
	if r.status != http.StatusOK || r.json(t)["status"] != StatusRefundRequired || r.json(t)["refundReason"] != ReasonAmountMismatch {
		t.Fatalf("wrong amount: %d %s", r.status, r.body)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE key = $1 AND topic = $2`, short, events.TopicRefundRequested); n != 1 {
		t.Fatalf("%d refund-requested rows, want 1", n)
	}
	charge := map[string]any{"id": "ch_1", "object": "charge", "amount": 100, "amount_refunded": 100, "refunded": true,
		"currency": "eur", "metadata": map[string]string{StripeOrderKey: short}}
	r = e.sendStripe(stripeSecret, time.Now(), stripeEvent("evt_4", stripe.EventTypeChargeRefunded, charge))
	if r.status != http.StatusOK || r.json(t)["ignored"] != true || !strings.Contains(r.json(t)["reason"].(string), StatusRefundRequired) {
		t.Fatalf("charge.refunded: %d %s", r.status, r.body)
	}
	if v := httpapitest.MetricValue(t, e.do("GET", "/metrics", nil).body, `ticketfair_booking_provider_refunds_total{order_status="REFUND_REQUIRED"}`); v != 1 {
		t.Fatalf("provider refunds counted %v, want 1", v)
	}

	gone := e.hold("stripe-gone", "B-1-2")
	r = e.sendStripe(stripeSecret, time.Now(), stripeEvent("evt_5", stripe.EventTypeCheckoutSessionExpired, checkoutSession(gone, "unpaid", 4500, "eur")))
	if r.status != http.StatusOK || r.json(t)["status"] != StatusCancelled {
		t.Fatalf("checkout.session.expired: %d %s", r.status, r.body)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE seat_id = 'B-1-2' AND status = 'AVAILABLE'`); n != 1 {
		t.Fatal("the expired checkout's seat was not released")
	}

	unpaid := e.hold("stripe-async", "B-1-3")
	before := e.snapshot()
	for _, ev := range [][]byte{
		stripeEvent("evt_6", stripe.EventTypeCheckoutSessionCompleted, checkoutSession(unpaid, "unpaid", 4500, "eur")),
		stripeEvent("evt_7", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}),
	} {
		if r := e.sendStripe(stripeSecret, time.Now(), ev); r.status != http.StatusOK || r.json(t)["ignored"] != true {
			t.Fatalf("acknowledged event: %d %s", r.status, r.body)
		}
	}
	if e.snapshot() != before {
		t.Fatal("an acknowledged event changed the database")
	}
	noOrder := checkoutSession(unpaid, "paid", 4500, "eur")
	noOrder["metadata"] = map[string]string{}
	if r := e.sendStripe(stripeSecret, time.Now(), stripeEvent("evt_8", stripe.EventTypeCheckoutSessionCompleted, noOrder)); r.status != 400 || r.errCode() != "bad_order_id" {
		t.Fatalf("no order id: %d %s", r.status, r.body)
	}
}
