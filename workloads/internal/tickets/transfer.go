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

package tickets

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
)

// Holder is who asks to see or hand on a ticket: a verified customer id
// and, when the identity token carries one, a verified email address (a
// ticket sent to an address belongs to whoever signs in with it).
type Holder struct {
	CustomerID string
	Email      string
}

// Recipient is who a ticket is handed to: a customer id, an email
// address, or both.
type Recipient struct {
	CustomerID string `json:"customerId,omitempty"`
	Email      string `json:"email,omitempty"`
}

// TransferRules come from the TicketEvent: how often a ticket may change
// hands, and until when.
type TransferRules struct {
	Max      int
	Cutoff   time.Duration
	StartsAt time.Time // zero: no cut-off
}

// Transfer refusals (business errors, mapped to HTTP in transferError).
var (
	ErrNotHolder        = errors.New("not the ticket's holder")
	ErrTransferLimit    = errors.New("transfer limit reached")
	ErrTransferClosed   = errors.New("transfers are closed")
	ErrAlreadyCheckedIn = errors.New("ticket already used at the gate")
	ErrCancelled        = errors.New("ticket cancelled")
	ErrSelfTransfer     = errors.New("recipient already holds the ticket")
)

// Transferred is the outcome of a transfer: the ticket with its new code.
// The new code goes to the recipient only: the answer to the giver does
// not carry it.
type Transferred struct {
	Ticket     Ticket    `json:"-"`
	TicketID   string    `json:"ticketId"`
	Generation int       `json:"generation"`
	To         Recipient `json:"to"`
	At         time.Time `json:"transferredAt"`
}

// TransferTicket hands ticketID from holder to rcpt: a new code one
// generation up replaces the old one, which every gate refuses from the
// moment this commits. The row lock orders it against a check-in of the
// same ticket (see CheckIn). inTx, when set, runs in the transaction, for
// what must happen exactly when the transfer does (the new holder's mail).
func TransferTicket(ctx context.Context, pool *pgxpool.Pool, keys *Keys, rules TransferRules, now time.Time,
	ticketID string, holder Holder, rcpt Recipient, inTx func(context.Context, pgx.Tx, Ticket) error) (Transferred, error) {
	if !rules.StartsAt.IsZero() && !now.Before(rules.StartsAt.Add(-rules.Cutoff)) {
		return Transferred{}, ErrTransferClosed
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return Transferred{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	var t Ticket
	var holderID, holderEmail *string
	var revoked *time.Time
	var paidAt time.Time
	err = tx.QueryRow(ctx, `SELECT ticket_id, order_id, seat_id, event_id, customer_id, section, price, issued_at,
			holder_id, holder_email, generation, revoked_at, issued_at
		FROM ticket WHERE ticket_id = $1 FOR UPDATE`, ticketID).
		Scan(&t.TicketID, &t.OrderID, &t.SeatID, &t.EventID, &t.CustomerID, &t.Section, &t.Price, &t.IssuedAt,
			&holderID, &holderEmail, &t.Generation, &revoked, &paidAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Transferred{}, ErrNotHolder
	}
	if err != nil {
		return Transferred{}, fmt.Errorf("ticket %s: %w", ticketID, err)
	}
	if !holds(holder, holderID, holderEmail) {
		return Transferred{}, ErrNotHolder // the same answer as for an unknown ticket
	}
	switch {
	case revoked != nil:
		return Transferred{}, ErrCancelled
	case t.Generation >= rules.Max:
		return Transferred{}, ErrTransferLimit
	case rcpt.CustomerID != "" && holderID != nil && rcpt.CustomerID == *holderID,
		rcpt.CustomerID == "" && holderEmail != nil && strings.EqualFold(rcpt.Email, *holderEmail):
		return Transferred{}, ErrSelfTransfer
	}
	// A new statement sees a check-in committed while this waited for the
	// row lock.
	var used bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkin WHERE ticket_id = $1)`, ticketID).Scan(&used); err != nil {
		return Transferred{}, fmt.Errorf("ticket %s: %w", ticketID, err)
	}
	if used {
		return Transferred{}, ErrAlreadyCheckedIn
	}
	t.Generation++
	t.Code, err = keys.Sign(t.TicketID, t.EventID, t.OrderID, t.SeatID, t.Section, t.Generation, paidAt)
	if err != nil {
		return Transferred{}, err
	}
	from := holder.CustomerID
	var at time.Time
	err = tx.QueryRow(ctx, `WITH u AS (
			UPDATE ticket SET generation = $2, code = $3, holder_id = $4, holder_email = $5 WHERE ticket_id = $1
		)
		INSERT INTO ticket_transfer (ticket_id, generation, from_holder, to_holder, to_email)
		VALUES ($1, $2, $6, $4, $5) RETURNING transferred_at`,
		ticketID, t.Generation, t.Code, nullable(rcpt.CustomerID), nullable(rcpt.Email), from).Scan(&at)
	if err != nil {
		return Transferred{}, fmt.Errorf("transfer %s: %w", ticketID, err)
	}
	t.HolderID, t.HolderEmail = rcpt.CustomerID, rcpt.Email
	if inTx != nil {
		if err := inTx(ctx, tx, t); err != nil {
			return Transferred{}, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Transferred{}, fmt.Errorf("commit transfer of %s: %w", ticketID, err)
	}
	return Transferred{Ticket: t, TicketID: t.TicketID, Generation: t.Generation, To: rcpt, At: at}, nil
}

func holds(h Holder, holderID, holderEmail *string) bool {
	if holderID != nil {
		return *holderID == h.CustomerID
	}
	return holderEmail != nil && h.Email != "" && strings.EqualFold(*holderEmail, h.Email)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// TransferRecord is one change of hands.
type TransferRecord struct {
	Generation int       `json:"generation"`
	From       string    `json:"from"`
	ToCustomer string    `json:"toCustomerId,omitempty"`
	ToEmail    string    `json:"toEmail,omitempty"`
	At         time.Time `json:"transferredAt"`
}

// TransferHistory returns the transfers of a ticket, oldest first.
func TransferHistory(ctx context.Context, pool *pgxpool.Pool, ticketID string) ([]TransferRecord, error) {
	rows, err := pool.Query(ctx, `SELECT generation, from_holder, coalesce(to_holder, ''), coalesce(to_email, ''), transferred_at
		FROM ticket_transfer WHERE ticket_id = $1 ORDER BY generation`, ticketID)
	if err != nil {
		return nil, fmt.Errorf("transfers of %s: %w", ticketID, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TransferRecord])
}

// transferError maps the transfer refusals to HTTP, in one place.
func transferError(err error) error {
	switch {
	case errors.Is(err, ErrNotHolder):
		return httpapi.Errorf(http.StatusNotFound, "not_found", "no such ticket of yours")
	case errors.Is(err, ErrTransferLimit):
		return httpapi.Errorf(http.StatusConflict, "transfer_limit", "this ticket has changed hands as often as the event allows")
	case errors.Is(err, ErrTransferClosed):
		return httpapi.Errorf(http.StatusConflict, "transfers_closed", "transfers are closed for this event")
	case errors.Is(err, ErrAlreadyCheckedIn):
		return httpapi.Errorf(http.StatusConflict, "already_used", "this ticket was already used at the gate")
	case errors.Is(err, ErrCancelled):
		return httpapi.Errorf(http.StatusGone, "revoked", "this ticket was cancelled")
	case errors.Is(err, ErrSelfTransfer):
		return httpapi.Errorf(http.StatusBadRequest, "self_transfer", "the recipient already holds this ticket")
	}
	return httpapi.DatabaseError(err)
}

// holderOf verifies the identity token of r.
func (s *Service) holderOf(r *http.Request) (Holder, error) {
	id, email, err := s.identity.Email(r)
	if err != nil {
		return Holder{}, &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid identity token is required", Err: err}
	}
	return Holder{CustomerID: id.Subject, Email: email}, nil
}

// ticketIDOf is the request's {ticketId}, checked.
func ticketIDOf(r *http.Request) (string, error) {
	id := r.PathValue("ticketId")
	if id == "" || len(id) > 64 || !httpapi.CleanText(id) {
		return "", httpapi.Errorf(http.StatusBadRequest, "bad_ticket_id", "ticket id must be 1-64 characters")
	}
	return id, nil
}

// transfer is POST /tickets/{ticketId}/transfers.
func (s *Service) transfer(w http.ResponseWriter, r *http.Request) error {
	holder, err := s.holderOf(r)
	if err != nil {
		return err
	}
	ticketID, err := ticketIDOf(r)
	if err != nil {
		return err
	}
	var rcpt Recipient
	if err := httpapi.DecodeJSON(w, r, &rcpt); err != nil {
		return err
	}
	if err := validRecipient(rcpt); err != nil {
		return err
	}
	res, err := TransferTicket(r.Context(), s.pool, s.keys, s.transfers, time.Now(), ticketID, holder, rcpt, s.onTransfer)
	if err != nil {
		return transferError(err)
	}
	s.m.transfers.Inc()
	if s.mailer != nil {
		s.mailer.Wake()
	}
	httpapi.WriteJSON(w, http.StatusCreated, res)
	return nil
}

// onTransfer enqueues the mail that brings a transferred ticket to its new
// holder, when mail is on and the recipient was named by address.
func (s *Service) onTransfer(ctx context.Context, tx pgx.Tx, t Ticket) error {
	if s.mailer == nil || t.HolderEmail == "" {
		return nil
	}
	return ticketmail.Enqueue(ctx, tx, ticketmail.Mail{Key: ticketmail.TransferKey(t.TicketID, t.Generation),
		Kind: ticketmail.KindTransfer, EventID: t.EventID, TicketIDs: []string{t.TicketID}, To: t.HolderEmail})
}

func validRecipient(rc Recipient) error {
	if rc.CustomerID == "" && rc.Email == "" {
		return httpapi.Errorf(http.StatusBadRequest, "bad_recipient", "name the recipient by customerId or email")
	}
	if len(rc.CustomerID) > 256 || !httpapi.CleanText(rc.CustomerID) {
		return httpapi.Errorf(http.StatusBadRequest, "bad_recipient", "customerId must be at most 256 printable characters")
	}
	if rc.Email != "" {
		a, err := mail.ParseAddress(rc.Email)
		if err != nil || a.Name != "" || a.Address != rc.Email || len(rc.Email) > 254 {
			return httpapi.Errorf(http.StatusBadRequest, "bad_recipient", "email must be a plain address such as friend@example.com")
		}
	}
	return nil
}

// myTickets is GET /tickets: the tickets the caller holds now, bought or
// received.
func (s *Service) myTickets(w http.ResponseWriter, r *http.Request) error {
	holder, err := s.holderOf(r)
	if err != nil {
		return err
	}
	ts, err := HeldBy(r.Context(), s.pool, holder)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	s.withQR(ts)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"tickets": ts})
	return nil
}

// ticketTransfers is GET /tickets/{ticketId}/transfers: the history, to
// the ticket's current holder or its buyer.
func (s *Service) ticketTransfers(w http.ResponseWriter, r *http.Request) error {
	holder, err := s.holderOf(r)
	if err != nil {
		return err
	}
	ticketID, err := ticketIDOf(r)
	if err != nil {
		return err
	}
	var buyer string
	var holderID, holderEmail *string
	err = s.pool.QueryRow(r.Context(), `SELECT customer_id, holder_id, holder_email FROM ticket WHERE ticket_id = $1`, ticketID).
		Scan(&buyer, &holderID, &holderEmail)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && buyer != holder.CustomerID && !holds(holder, holderID, holderEmail)) {
		return httpapi.Errorf(http.StatusNotFound, "not_found", "no such ticket of yours")
	}
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	hist, err := TransferHistory(r.Context(), s.pool, ticketID)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ticketId": ticketID, "transfers": hist})
	return nil
}
