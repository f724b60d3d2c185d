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

	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

// The buyer's verified address rides from the identity token sent with
// the hold to the paid order's ticket-issued event, where the mailer
// finds it; a hold without one pays the same and carries none.
func TestHoldKeepsBuyerEmail(t *testing.T) {
	e := newEnv(t)
	signer := identity.NewHS256Signer(testIdentity, e.cfg.IdentityIssuer, e.cfg.IdentityAudience)
	holdAs := func(customer, idToken string, seat string) response {
		return e.do("POST", "/events/7/holds", map[string]any{"seats": []string{seat}},
			QueueTokenHeader, e.token(customer), "Authorization", "Bearer "+idToken)
	}
	if r := holdAs("buyer-1", signer.SignTier("someone-else", "email", "x@example.com", time.Minute), "A-1-1"); r.status != http.StatusForbidden || r.errCode() != "identity_mismatch" {
		t.Errorf("identity token of another customer: %d %s, want 403 identity_mismatch", r.status, r.body)
	}
	if r := holdAs("buyer-1", "not-a-token", "A-1-1"); r.status != http.StatusUnauthorized {
		t.Errorf("invalid identity token: %d %s, want 401", r.status, r.body)
	}
	if n := e.count(`SELECT count(*) FROM ticket_order`); n != 0 {
		t.Fatalf("refused holds left %d orders", n)
	}

	r := holdAs("buyer-1", signer.SignTier("buyer-1", "email", "buyer@example.com", time.Minute), "A-1-1")
	if r.status != http.StatusCreated {
		t.Fatalf("hold: %d %s", r.status, r.body)
	}
	withMail := r.json(t)
	withoutMail := e.holdWith(e.token("buyer-2"), "A-1-2").json(t)
	for _, o := range []map[string]any{withMail, withoutMail} {
		body := paymentBody(o["orderId"].(string), "pay-"+o["orderId"].(string), o["amount"].(string), "succeeded")
		if r := e.webhook(testSecret, time.Now(), body); r.status != http.StatusOK {
			t.Fatalf("payment: %d %s", r.status, r.body)
		}
	}
	if got := e.scalar(`SELECT coalesce(payload->>'email', '') FROM outbox WHERE topic = 'ticket-issued' AND key = $1`, withMail["orderId"]); got != "buyer@example.com" {
		t.Errorf("ticket-issued email: %q, want buyer@example.com", got)
	}
	if got := e.scalar(`SELECT payload ? 'email' FROM outbox WHERE topic = 'ticket-issued' AND key = $1`, withoutMail["orderId"]); got != false {
		t.Errorf("ticket-issued of a hold without identity token carries an email: %v", got)
	}
}
