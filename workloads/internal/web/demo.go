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

package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// LoginResponse is the answer of POST /demo/login.
type LoginResponse struct {
	Token      string    `json:"token"`
	CustomerID string    `json:"customerId"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// login issues an identity token for a new random customer, standing in for
// the identity provider a real deployment signs people in with.
func (e *edge) login(w http.ResponseWriter, r *http.Request) error {
	var b [16]byte
	_, _ = rand.Read(b[:])
	customer := "web-" + hex.EncodeToString(b[:])
	tok, err := identity.SignHS256(e.cfg.IdentitySecret, e.cfg.IdentityIssuer, e.cfg.IdentityAudience, customer, e.cfg.IdentityTTL)
	if err != nil {
		return fmt.Errorf("sign identity token: %w", err)
	}
	httpapi.WriteJSON(w, http.StatusCreated, LoginResponse{Token: tok, CustomerID: customer,
		ExpiresAt: time.Now().Add(e.cfg.IdentityTTL).UTC().Truncate(time.Second)})
	return nil
}

var (
	orderIDRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	amountRe   = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,2})?$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

// payment is what the simulated provider page shows and pays.
type payment struct {
	CSS      string
	OrderID  string
	Amount   string
	Currency string
	EventID  string
	PayBy    string // RFC 3339, when this checkout ends (booking's payBy); optional
	Error    string
}

func (e *edge) readPayment(r *http.Request, get func(string) string) (payment, error) {
	p := payment{CSS: e.site.hashed["app.css"], OrderID: r.PathValue("orderId"),
		Amount: get("amount"), Currency: get("currency"), EventID: get("event"), PayBy: get("payBy")}
	var payBy time.Time
	if p.PayBy != "" {
		var err error
		if payBy, err = time.Parse(time.RFC3339Nano, p.PayBy); err != nil {
			return p, httpapi.Errorf(http.StatusBadRequest, "bad_pay_by", "payBy must be an RFC 3339 time")
		}
	}
	switch {
	case !orderIDRe.MatchString(p.OrderID):
		return p, httpapi.Errorf(http.StatusBadRequest, "bad_order_id", "the order id is malformed")
	case !amountRe.MatchString(p.Amount):
		return p, httpapi.Errorf(http.StatusBadRequest, "bad_amount", "amount must look like 179.00")
	case !currencyRe.MatchString(p.Currency):
		return p, httpapi.Errorf(http.StatusBadRequest, "bad_currency", "currency must be an ISO 4217 code such as EUR")
	case !validEventID(p.EventID):
		return p, httpapi.Errorf(http.StatusBadRequest, "bad_event", "event must be a positive number")
	case !payBy.IsZero() && time.Now().After(payBy):
		// As a real provider's checkout session expires: the hold ends
		// soon after, so a payment now could arrive too late.
		return p, httpapi.Errorf(http.StatusGone, "checkout_expired", "this checkout ended at %s; pick seats again", payBy.UTC().Format(time.TimeOnly)+" UTC")
	}
	return p, nil
}

func (e *edge) renderPay(w http.ResponseWriter, status int, p payment) {
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var buf bytes.Buffer
	if err := e.site.pay.Execute(&buf, p); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// payPage is the simulated provider's checkout page.
func (e *edge) payPage(w http.ResponseWriter, r *http.Request) {
	p, err := e.readPayment(r, r.URL.Query().Get)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	e.renderPay(w, http.StatusOK, p)
}

// pay sends the signed "succeeded" webhook a real provider would send after
// taking the money, then returns the browser to the order page.
func (e *edge) pay(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, httpapi.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		httpapi.WriteError(w, r, httpapi.Errorf(http.StatusBadRequest, "bad_form", "the payment form could not be read"))
		return
	}
	p, err := e.readPayment(r, r.PostForm.Get)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	if err := e.sendWebhook(r.Context(), p, "pay_"+hex.EncodeToString(id[:])); err != nil {
		e.log.WarnContext(r.Context(), "demo payment webhook failed", "order", p.OrderID, "err", err)
		p.Error = "The shop did not accept the payment: " + err.Error()
		e.renderPay(w, http.StatusBadGateway, p)
		return
	}
	http.Redirect(w, r, "/sale/"+p.EventID+"/orders/"+p.OrderID, http.StatusSeeOther)
}

// WebhookEvent is the body of the payment webhook.
type WebhookEvent struct {
	OrderID   string `json:"orderId"`
	PaymentID string `json:"paymentId"`
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
}

func (e *edge) sendWebhook(ctx context.Context, p payment, paymentID string) error {
	target, err := parseServiceURL(e.cfg.BookingURL)
	if err != nil {
		return fmt.Errorf("booking URL: %w", err)
	}
	body, err := json.Marshal(WebhookEvent{OrderID: p.OrderID, PaymentID: paymentID,
		Amount: p.Amount, Currency: p.Currency, Status: "succeeded"})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.JoinPath("/payments/webhook").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooksig.Header, webhooksig.Sign(e.cfg.WebhookSecret, time.Now(), body))
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("booking unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil
	}
	var eb struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if json.Unmarshal(raw, &eb) == nil && eb.Error.Message != "" {
		return fmt.Errorf("%s (%d %s)", eb.Error.Message, resp.StatusCode, eb.Error.Code)
	}
	return fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
}
