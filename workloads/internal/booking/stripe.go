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
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// The Stripe-shaped payment webhook: Stripe-Signature verification and
// Stripe's event objects, handled by stripe-go's webhook package, mapped
// onto the same confirm and release paths as the signed webhook. The order
// id travels in the Checkout Session's (and its charge's) metadata.
//
//   - checkout.session.completed / async_payment_succeeded, paid: confirm,
//     idempotency key = the PaymentIntent (else the session) id, card =
//     the fingerprint of the intent's latest charge when expanded;
//   - checkout.session.expired / async_payment_failed: release the hold;
//   - charge.refunded: acknowledged and counted by the order's status
//     (REFUND_REQUIRED: the refund booking asked for is done; PAID: refunded
//     outside ticketfair, logged for the payment team);
//   - any other event: acknowledged and ignored, so Stripe stops retrying.
//
// Amounts are taken in minor units, so the event's currency must have two
// decimals (EUR, USD, ...); any other amount does not match the order and
// takes the refund path.

// StripeWebhookPath is where Stripe sends events.
const StripeWebhookPath = "/payments/stripe/webhook"

// StripeOrderKey is the metadata key of the order id.
const StripeOrderKey = "order_id"

var (
	errNoStripeSecret = &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "webhook_not_configured", Message: "no Stripe webhook secret is configured"}
	errStripeNoOrder  = badRequest("bad_order_id", "metadata.%s is required", StripeOrderKey)
)

func (s *service) stripeWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		return err
	}
	ev, err := s.stripeEvent(body, r.Header.Get("Stripe-Signature"))
	if err != nil {
		return err
	}
	var out any
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted, stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded,
		stripe.EventTypeCheckoutSessionExpired, stripe.EventTypeCheckoutSessionAsyncPaymentFailed:
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
			return badRequest("bad_json", "the event's checkout session does not decode: %v", err)
		}
		out, err = s.stripeCheckout(r.Context(), ev.Type, &cs)
	case stripe.EventTypeChargeRefunded:
		var ch stripe.Charge
		if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil {
			return badRequest("bad_json", "the event's charge does not decode: %v", err)
		}
		out, err = s.stripeRefunded(r.Context(), &ch)
	default:
		out = ignored("", "event "+truncate(string(ev.Type), 60))
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// stripeEvent verifies the signature with any of the secrets (several
// during rotation) and decodes the event.
func (s *service) stripeEvent(body []byte, header string) (stripe.Event, error) {
	if len(s.stripeSecrets) == 0 {
		return stripe.Event{}, errNoStripeSecret
	}
	opts := webhook.ConstructEventOptions{Tolerance: s.cfg.WebhookTolerance, IgnoreAPIVersionMismatch: true}
	var err error
	for _, secret := range s.stripeSecrets {
		var ev stripe.Event
		if ev, err = webhook.ConstructEventWithOptions(body, header, secret, opts); err == nil {
			if ev.Data == nil {
				return ev, badRequest("bad_json", "the event has no data.object")
			}
			return ev, nil
		}
		if !errors.Is(err, webhook.ErrNoValidSignature) {
			break // the same for every secret
		}
	}
	switch {
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader):
		return stripe.Event{}, badRequest("bad_signature_header", "Stripe-Signature must be t=<unix>,v1=<hex hmac>")
	case errors.Is(err, webhook.ErrTooOld):
		return stripe.Event{}, errStaleSignature
	case errors.Is(err, webhook.ErrNoValidSignature):
		return stripe.Event{}, errBadSignature
	}
	return stripe.Event{}, badRequest("bad_json", "webhook body is not a Stripe event: %v", err)
}

func (s *service) stripeCheckout(ctx context.Context, typ stripe.EventType, cs *stripe.CheckoutSession) (any, error) {
	orderID := cs.Metadata[StripeOrderKey]
	if orderID == "" {
		orderID = cs.ClientReferenceID
	}
	if orderID == "" {
		return nil, errStripeNoOrder
	}
	if typ == stripe.EventTypeCheckoutSessionExpired || typ == stripe.EventTypeCheckoutSessionAsyncPaymentFailed {
		o, err := s.store.Release(ctx, orderID, "")
		if errors.Is(err, ErrOrderNotPending) {
			return ignored(orderID, "order is not pending"), nil
		}
		return o, err
	}
	if cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid {
		// Paid later: async_payment_succeeded follows.
		return ignored(orderID, "payment status "+truncate(string(cs.PaymentStatus), 30)), nil
	}
	paymentID := cs.ID
	if cs.PaymentIntent != nil && cs.PaymentIntent.ID != "" {
		paymentID = cs.PaymentIntent.ID
	}
	amt := amount(cs.AmountTotal)
	cur := strings.ToUpper(string(cs.Currency))
	if err := checkPayment(paymentID, &amt, cur); err != nil {
		return nil, err
	}
	card := stripeCard(cs)
	if err := checkCard(card); err != nil {
		return nil, err
	}
	return s.settle(ctx, Payment{OrderID: orderID, IdempotencyKey: paymentID, PaymentID: paymentID, Amount: Cents(amt), Currency: cur,
		CardFingerprint: card})
}

// stripeCard is the fingerprint of the card that paid the session:
// payment_intent.latest_charge.payment_method_details.card.fingerprint,
// present when the session's payment intent and its charge are expanded;
// "" otherwise (the payment is then limited per customer only).
func stripeCard(cs *stripe.CheckoutSession) string {
	if pi := cs.PaymentIntent; pi != nil && pi.LatestCharge != nil && pi.LatestCharge.PaymentMethodDetails != nil &&
		pi.LatestCharge.PaymentMethodDetails.Card != nil {
		return pi.LatestCharge.PaymentMethodDetails.Card.Fingerprint
	}
	return ""
}

// stripeRefunded records a refund Stripe made for an order.
func (s *service) stripeRefunded(ctx context.Context, ch *stripe.Charge) (any, error) {
	orderID := ch.Metadata[StripeOrderKey]
	if orderID == "" {
		return nil, errStripeNoOrder
	}
	status, err := s.store.orderStatus(ctx, orderID)
	if err != nil {
		return nil, err
	}
	s.metrics.providerRefunds.WithLabelValues(status).Inc()
	if status == StatusPaid {
		slog.WarnContext(ctx, "a paid order was refunded at the payment provider; its seats stay sold",
			"order", orderID, "charge", ch.ID, "refunded", Cents(ch.AmountRefunded).String())
	}
	return ignored(orderID, "refund recorded for a "+status+" order"), nil
}

func ignored(orderID, reason string) map[string]any {
	return map[string]any{"orderId": orderID, "ignored": true, "reason": reason}
}

const orderStatusSQL = `SELECT status FROM ticket_order WHERE id = $1 AND event_id = $2`

// orderStatus is an order's status, for whoever holds a verified provider event.
func (s *Store) orderStatus(ctx context.Context, orderID string) (string, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return "", ErrOrderNotFound
	}
	var status string
	err := s.pool.QueryRow(ctx, orderStatusSQL, orderID, s.eventID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrOrderNotFound
	}
	if err != nil {
		return "", err
	}
	return status, nil
}
