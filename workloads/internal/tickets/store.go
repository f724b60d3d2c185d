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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
)

// ConsumerName keys this consumer's rows in processed_message.
const ConsumerName = "tickets"

// ErrInvalidMessage marks a message that can never be applied (bad JSON or
// missing fields); the consumer logs and skips it instead of retrying forever.
var ErrInvalidMessage = errors.New("invalid ticket-issued message")

// Ticket is one issued ticket.
type Ticket struct {
	TicketID   string    `json:"ticketId"`
	OrderID    string    `json:"orderId"`
	SeatID     string    `json:"seatId"`
	EventID    int64     `json:"eventId"`
	CustomerID string    `json:"-"`
	Section    string    `json:"section"`
	Price      string    `json:"price"`
	Code       string    `json:"code"`
	IssuedAt   time.Time `json:"issuedAt"`
	// Generation counts the ticket's transfers; Code is the current one.
	Generation int `json:"generation"`
	// QR is Code as a QR image (a data URL), for pages.
	QR          string `json:"qr,omitempty"`
	HolderID    string `json:"-"`
	HolderEmail string `json:"-"`
}

// ticketColumns are what scanTicket reads, in its order.
const ticketColumns = `ticket_id, order_id, seat_id, event_id, customer_id, section, price, code, issued_at,
	generation, coalesce(holder_id, ''), coalesce(holder_email, '')`

func scanTicket(row pgx.CollectableRow) (Ticket, error) {
	var t Ticket
	err := row.Scan(&t.TicketID, &t.OrderID, &t.SeatID, &t.EventID, &t.CustomerID, &t.Section, &t.Price, &t.Code, &t.IssuedAt,
		&t.Generation, &t.HolderID, &t.HolderEmail)
	return t, err
}

func validate(m *events.TicketIssued) error {
	switch {
	case m.OrderID == "":
		return fmt.Errorf("%w: no orderId", ErrInvalidMessage)
	case m.CustomerID == "":
		return fmt.Errorf("%w: order %s has no customerId", ErrInvalidMessage, m.OrderID)
	case len(m.Seats) == 0:
		return fmt.Errorf("%w: order %s has no seats", ErrInvalidMessage, m.OrderID)
	}
	for _, s := range m.Seats {
		if s.SeatID == "" {
			return fmt.Errorf("%w: order %s has a seat without seatId", ErrInvalidMessage, m.OrderID)
		}
	}
	return nil
}

// Issue stores one ticket per seat of the order in one transaction and
// returns how many were new. outboxID (0 when unknown) is recorded first, so
// a redelivered message is recognised before any work; the unique (order,
// seat) constraint makes a replay under another outbox id create nothing
// either.
func Issue(ctx context.Context, pool *pgxpool.Pool, keys *Keys, outboxID int64, m *events.TicketIssued) (int, error) {
	return IssueAndMail(ctx, pool, keys, outboxID, m, false)
}

// IssueAndMail is Issue that, when mail is on and the buyer has an
// address, also enqueues the order's mail in the same transaction: the
// tickets and the mail that carries them exist together or not at all, and
// a redelivered message enqueues nothing (the mail's key is the order's).
func IssueAndMail(ctx context.Context, pool *pgxpool.Pool, keys *Keys, outboxID int64, m *events.TicketIssued, mail bool) (int, error) {
	if err := validate(m); err != nil {
		return 0, err
	}
	var ids, orders, seats, customers, sections, prices, codes []string
	var eventIDs, outboxIDs []int64
	seen := map[string]bool{}
	for _, s := range m.Seats {
		if seen[s.SeatID] {
			continue
		}
		seen[s.SeatID] = true
		id := TicketID(m.OrderID, s.SeatID)
		code, err := keys.Sign(id, m.EventID, m.OrderID, s.SeatID, s.Section, 0, m.PaidAt)
		if err != nil {
			return 0, err
		}
		ids, orders, seats, customers = append(ids, id), append(orders, m.OrderID), append(seats, s.SeatID), append(customers, m.CustomerID)
		sections, prices, codes = append(sections, s.Section), append(prices, s.Price), append(codes, code)
		eventIDs, outboxIDs = append(eventIDs, m.EventID), append(outboxIDs, outboxID)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	if outboxID > 0 {
		tag, err := tx.Exec(ctx, `INSERT INTO processed_message (consumer, outbox_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			ConsumerName, outboxID)
		if err != nil {
			return 0, fmt.Errorf("record message %d: %w", outboxID, err)
		}
		if tag.RowsAffected() == 0 {
			return 0, nil // already applied
		}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO ticket (ticket_id, order_id, seat_id, event_id, customer_id, section, price, code, outbox_id, holder_id)
		SELECT *, c FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[])
			AS u (i, o, s, e, c, sec, p, code, ob)
		ON CONFLICT DO NOTHING`, ids, orders, seats, eventIDs, customers, sections, prices, codes, outboxIDs)
	if err != nil {
		return 0, fmt.Errorf("insert tickets of order %s: %w", m.OrderID, err)
	}
	if mail && m.Email != "" {
		err := ticketmail.Enqueue(ctx, tx, ticketmail.Mail{Key: ticketmail.OrderKey(m.OrderID), Kind: ticketmail.KindOrder,
			EventID: m.EventID, OrderID: m.OrderID, TicketIDs: ids, To: m.Email})
		// An address no server takes loses the mail, not the tickets: they
		// are on the order page.
		if err != nil && !errors.Is(err, ticketmail.ErrInvalidRecipient) {
			return 0, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("commit tickets of order %s: %w", m.OrderID, err)
	}
	return int(tag.RowsAffected()), nil
}

// ForOrder returns the tickets of an order, seat order.
func ForOrder(ctx context.Context, pool *pgxpool.Pool, orderID string) ([]Ticket, error) {
	rows, err := pool.Query(ctx, `SELECT `+ticketColumns+` FROM ticket WHERE order_id = $1 ORDER BY seat_id`, orderID)
	if err != nil {
		return nil, fmt.Errorf("tickets of order %s: %w", orderID, err)
	}
	ts, err := pgx.CollectRows(rows, scanTicket)
	if err != nil {
		return nil, fmt.Errorf("tickets of order %s: %w", orderID, err)
	}
	return ts, nil
}

// HeldBy returns the tickets h holds now: by customer id, or sent to h's
// verified address and not yet claimed by another customer.
func HeldBy(ctx context.Context, pool *pgxpool.Pool, h Holder) ([]Ticket, error) {
	rows, err := pool.Query(ctx, `SELECT `+ticketColumns+` FROM ticket
		WHERE revoked_at IS NULL AND (holder_id = $1 OR (holder_id IS NULL AND $2 <> '' AND lower(holder_email) = lower($2)))
		ORDER BY event_id, order_id, seat_id LIMIT 200`, h.CustomerID, h.Email)
	if err != nil {
		return nil, fmt.Errorf("tickets of %s: %w", h.CustomerID, err)
	}
	ts, err := pgx.CollectRows(rows, scanTicket)
	if err != nil {
		return nil, fmt.Errorf("tickets of %s: %w", h.CustomerID, err)
	}
	return ts, nil
}

// Count returns how many tickets were issued for an event (for the local
// sale's report and tests).
func Count(ctx context.Context, pool *pgxpool.Pool, eventID int64) (int, error) {
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ticket WHERE event_id = $1`, eventID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tickets: %w", err)
	}
	return n, nil
}

// SeatsSoldTwice returns how many seats of an event carry tickets of more
// than one order: an oversell check for the local sale's report (0 when
// booking is correct; the unique constraint already rules out two tickets
// for one seat of one order).
func SeatsSoldTwice(ctx context.Context, pool *pgxpool.Pool, eventID int64) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM ticket WHERE event_id = $1
		GROUP BY seat_id HAVING count(DISTINCT order_id) > 1) d`, eventID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count seats sold twice: %w", err)
	}
	return n, nil
}
