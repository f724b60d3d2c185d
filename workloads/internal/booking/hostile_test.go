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
	"net/http"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// routePatterns are the patterns the service registers.
func routePatterns(e *env) []string {
	return (&service{metrics: newMetrics(e.pool, newGate(4))}).routes().Patterns()
}

// NUL, invalid UTF-8 and control characters in every wildcard, query and
// id-carrying header of every route, with valid credentials: never a 5xx,
// always the JSON error body, nothing written.
func TestHostileBytesEveryRoute(t *testing.T) {
	e := stripeEnv(t) // every route served, the Stripe-shaped webhook too
	// Another customer's order: requests that are valid apart from a
	// hostile header (a DELETE with a bad Idempotency-Key) must not cancel it.
	order := e.hold("bob", "A-9-9")
	ident, _ := identity.SignHS256(testIdentity, e.cfg.IdentityIssuer, e.cfg.IdentityAudience, "alice", time.Hour)
	queue := e.token("alice")
	before := e.snapshot()
	httpapitest.CheckBadBytes(t, e.base, routePatterns(e), map[string]string{"eventId": "7", "orderId": order},
		http.Header{QueueTokenHeader: {queue}, "Authorization": {"Bearer " + ident}},
		http.Header{QueueTokenHeader: {queue}, "Authorization": {"Bearer " + testServiceToken}, "Idempotency-Key": {"key-1"},
			SignatureHeader:    {webhooksig.Sign(testSecret, time.Now(), []byte("{}"))},
			"Stripe-Signature": {webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte("{}"), Secret: stripeSecret}).Header}},
	)
	if e.snapshot() != before {
		t.Fatal("hostile bytes changed the database")
	}
}

// The same bytes inside bodies, keys and verified tokens: refused at the
// edge with 400 or 401, never passed to PostgreSQL (which answers 22021).
func TestHostileBytesInBodiesAndTokens(t *testing.T) {
	e := newEnv(t)
	order := e.hold("alice", "A-9-8")
	queue := e.token("alice")
	nulSub, _ := identity.SignHS256(testIdentity, e.cfg.IdentityIssuer, e.cfg.IdentityAudience, "ali\x00ce", time.Hour)
	nulAccess, _, _ := e.keys.Sign(testEvent, "ali\x00ce", "sess-alice", time.Now(), time.Minute)
	confirm := "/orders/" + order + "/confirm"
	auth := "Bearer " + testServiceToken
	webhook := func(body string) []string {
		return []string{SignatureHeader, webhooksig.Sign(testSecret, time.Now(), []byte(body))}
	}
	before := e.snapshot()
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		code                     string
	}{
		{"webhook paymentId NUL", "POST", "/payments/webhook", `{"orderId":"` + order + `","paymentId":"p\u0000","amount":"89.50","currency":"EUR","status":"succeeded"}`, nil, 400, "bad_payment_id"},
		{"webhook paymentId control", "POST", "/payments/webhook", `{"orderId":"` + order + `","paymentId":"p\u0007","amount":"89.50","currency":"EUR","status":"succeeded"}`, nil, 400, "bad_payment_id"},
		{"webhook currency NUL", "POST", "/payments/webhook", `{"orderId":"` + order + `","paymentId":"p1","amount":"89.50","currency":"E\u0000R","status":"succeeded"}`, nil, 400, "bad_currency"},
		{"webhook orderId NUL", "POST", "/payments/webhook", `{"orderId":"\u0000","paymentId":"p1","amount":"89.50","currency":"EUR","status":"succeeded"}`, nil, 404, "order_not_found"},
		{"webhook failed, orderId NUL", "POST", "/payments/webhook", `{"orderId":"\u0000","paymentId":"p1","amount":"89.50","currency":"EUR","status":"failed"}`, nil, 404, "order_not_found"},
		{"confirm paymentId NUL", "POST", confirm, `{"paymentId":"p\u0000","amount":"89.50","currency":"EUR"}`, []string{"Authorization", auth, "Idempotency-Key", "k1"}, 400, "bad_payment_id"},
		{"confirm key invalid UTF-8", "POST", confirm, `{"paymentId":"p1","amount":"89.50","currency":"EUR"}`, []string{"Authorization", auth, "Idempotency-Key", "k\xff\xc0\x80"}, 400, "bad_idempotency_key"},
		{"hold seat NUL", "POST", "/events/7/holds", `{"seats":["A-1-1\u0000"]}`, []string{QueueTokenHeader, queue}, 400, "bad_seat_id"},
		{"identity sub NUL", "GET", "/orders/" + order, "", []string{"Authorization", "Bearer " + nulSub}, 401, "unauthenticated"},
		{"access token sub NUL, hold", "POST", "/events/7/holds", `{"seats":["A-1-1"]}`, []string{QueueTokenHeader, nulAccess}, 401, "invalid_token"},
		{"access token sub NUL, order", "GET", "/orders/" + order, "", []string{QueueTokenHeader, nulAccess}, 401, "invalid_token"},
	} {
		headers := tc.headers
		if tc.path == "/payments/webhook" {
			headers = webhook(tc.body)
		}
		r := e.do(tc.method, tc.path, tc.body, headers...)
		if r.status != tc.status || r.errCode() != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
	if e.snapshot() != before {
		t.Fatal("hostile input changed the database")
	}
}

// Every route asked with a wrong method: 405 with Allow, JSON error body.
func TestWrongMethodEveryRoute(t *testing.T) {
	e := newEnv(t)
	httpapitest.CheckWrongMethods(t, e.base, routePatterns(e), map[string]string{"eventId": "7"})
	// The examples.
	for _, c := range [][2]string{{"PATCH", "/events/7/holds"}, {"GET", "/payments/webhook"}} {
		if r := e.do(c[0], c[1], nil); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") == "" {
			t.Errorf("%s %s: %d Allow=%q", c[0], c[1], r.status, r.header.Get("Allow"))
		}
	}
}

// The live /metrics passes the Prometheus linter, with every family
// present (after a hold, a confirm and a sweep).
func TestMetricsLint(t *testing.T) {
	e := newEnv(t, func(c *cfgBooking) { c.SweepInterval = 20 * time.Millisecond })
	order := e.hold("linter", "B-5-1")
	e.pay(order, "pay-lint", "45.00")
	time.Sleep(100 * time.Millisecond)
	r := e.do("GET", "/metrics", nil)
	for _, name := range []string{"ticketfair_booking_db_pool_acquire_total counter", "ticketfair_booking_db_pool_empty_acquire_total counter", "ticketfair_booking_db_pool_acquire_wait_seconds_total counter",
		"ticketfair_booking_db_pool_acquired_conns gauge", "ticketfair_booking_confirms_total counter"} {
		if !containsAll(string(r.body), "# TYPE "+name) {
			t.Errorf("/metrics has no %q", "# TYPE "+name)
		}
	}
	httpapitest.LintMetrics(t, e.base+"/metrics")
}
