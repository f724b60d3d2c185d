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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// Order statuses.
const (
	StatusPending        = "PENDING"
	StatusPaid           = "PAID"
	StatusExpired        = "EXPIRED"
	StatusRefundRequired = "REFUND_REQUIRED"
	StatusCancelled      = "CANCELLED"
)

// Refund reasons.
const (
	ReasonSeatTaken      = "seat_taken"
	ReasonAmountMismatch = "amount_mismatch"
	// ReasonSeatLimit: selling the order's seats would leave the customer
	// above the per-customer limit (a late payment after newer holds).
	ReasonSeatLimit = "seat_limit"
	// ReasonCardLimit: selling the order's seats would leave the paying
	// card above the per-customer limit, counting every customer's paid
	// orders with the card.
	ReasonCardLimit = "card_limit"
	// ReasonOrderSettled: a second payment for an order another payment
	// already settled.
	ReasonOrderSettled = "order_settled"
)

// Store is the booking logic on PostgreSQL. Every decision is made by the
// database (conditional UPDATEs, row locks, now()), so any number of
// replicas may share one database. The tables are
// workloads/internal/migrations/schema.sql; the stored functions its
// functions/ folder.
type Store struct {
	pool    *pgxpool.Pool
	eventID int64
	holdTTL time.Duration
	// paymentTimeout is how long after a hold its payment may complete
	// (payBy); shorter than holdTTL.
	paymentTimeout time.Duration
	maxSeats       int
	currency       string
	// phases are the rules of the sale's phases by name (parsePhases); nil
	// in a sale without phases.
	phases map[string]phaseRule
}

// NewStore returns the store of one event.
func NewStore(pool *pgxpool.Pool, eventID int64, holdTTL time.Duration, maxSeats int, currency string) *Store {
	return &Store{pool: pool, eventID: eventID, holdTTL: holdTTL, paymentTimeout: config.DefaultPaymentTimeout(holdTTL), maxSeats: maxSeats, currency: currency}
}

// inTx runs fn in a transaction, running it again on deadlocks and
// serialization failures so they never reach a user.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.retrying(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) })
}

// retrying runs one transaction, again after a deadlock, a serialization
// failure or a racing unique key.
func (s *Store) retrying(ctx context.Context, run func() error) error {
	for attempt := 0; ; attempt++ {
		err := run()
		if err == nil {
			return nil
		}
		if !retryable(err) || attempt >= 10 {
			return err
		}
		// 1-4 ms at first, doubling up to 80 ms.
		if err := retry.Sleep(ctx, retry.Backoff(attempt+2, time.Millisecond, 80*time.Millisecond)); err != nil {
			return err
		}
	}
}

// checkSeats validates a hold request's seats under r and returns them
// sorted (the order every transaction locks seats in, so holds cannot
// deadlock).
func (s *Store) checkSeats(seats []string, r phaseRule) ([]string, error) {
	if len(seats) == 0 {
		return nil, ErrNoSeats
	}
	if len(seats) > r.maxSeats {
		return nil, &TooManySeatsError{Limit: r.maxSeats, Phase: r.name}
	}
	sorted := slices.Clone(seats)
	slices.Sort(sorted)
	for i, id := range sorted {
		if _, ok := parseSeatID(id); !ok {
			return nil, &BadSeatIDError{Seat: id}
		}
		if i > 0 && sorted[i-1] == id {
			return nil, ErrDuplicateSeat
		}
	}
	if out := r.sectionsRefused(sorted); out != nil {
		return nil, &SectionNotInPhaseError{Phase: r.name, Seats: out, Sections: r.allowedSections()}
	}
	return sorted, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Hold is a successful hold.
type Hold struct {
	OrderID   string    `json:"orderId"`
	Seats     []string  `json:"seats"`
	Amount    string    `json:"amount"`
	Currency  string    `json:"currency"`
	ExpiresAt time.Time `json:"expiresAt"`
	// PayBy is when the payment provider's checkout must end: created +
	// payment timeout, before ExpiresAt.
	PayBy time.Time `json:"payBy"`
	// Places are the places a hold by quantity found, best first, for the
	// buyer to see.
	Places []Place `json:"places,omitempty"`
}

// holdSQL is a hold: one call of hold_seats
// (migrations/functions/hold_seats.sql), which takes the customer's lock,
// checks the limit, inserts the PENDING order and takes each seat in the
// given order, raising holdRefusedCode when a check refuses.
const holdSQL = `SELECT expires_at, amount FROM hold_seats($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// holdRefusedCode is the SQLSTATE of hold_seats's refusals.
const holdRefusedCode = "TFH01"

// Hold holds all of seats for customer, or none, in one round trip: one
// statement (holdSQL), which PostgreSQL runs as one implicit transaction.
// The customer's advisory lock (so parallel holds cannot add up past the
// limit), the limit check, the PENDING order with its amount, then one
// conditional UPDATE per seat in sorted order, each recording the seat as
// the order's. A refused check raises, which rolls it all back.
func (s *Store) Hold(ctx context.Context, customer, sessionID string, seats []string) (*Hold, error) {
	return s.HoldInPhase(ctx, customer, sessionID, "", "", seats)
}

// HoldInPhase is Hold for a customer admitted under phase ("": none, the
// event's limit and every section). The phase's seat limit replaces the
// event's in the limit check; a phase booking does not know and seats
// outside the phase's sections are refused before the database is asked.
// email is the buyer's verified address ("": none), kept with the order.
func (s *Store) HoldInPhase(ctx context.Context, customer, sessionID, phase, email string, seats []string) (*Hold, error) {
	r, err := s.rule(phase)
	if err != nil {
		return nil, err
	}
	sorted, err := s.checkSeats(seats, r)
	if err != nil {
		return nil, err
	}
	var res *Hold
	err = s.retrying(ctx, func() (err error) {
		res, err = s.holdOnce(ctx, customer, sessionID, email, sorted, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) holdOnce(ctx context.Context, customer, sessionID, email string, sorted []string, r phaseRule) (*Hold, error) {
	orderID := uuid.New()
	var (
		expires time.Time
		amount  string
	)
	err := s.pool.QueryRow(ctx, holdSQL, s.eventID, orderID, customer, sessionID, s.currency,
		s.holdTTL.Milliseconds(), r.maxSeats, sorted, nullText(email)).Scan(&expires, &amount)
	if err != nil {
		return nil, holdRefusal(err, r)
	}
	return s.held(orderID, sorted, nil, amount, expires)
}

// held is the answer to a hold of order orderID: its seats (sorted), the
// places of a hold by quantity, the amount and expiry the database wrote.
func (s *Store) held(orderID uuid.UUID, seats []string, places []Place, amount string, expires time.Time) (*Hold, error) {
	total, err := ParseCents(amount)
	if err != nil {
		return nil, fmt.Errorf("order %s amount: %w", orderID, err)
	}
	return &Hold{OrderID: orderID.String(), Seats: seats, Places: places, Amount: total.String(), Currency: s.currency,
		ExpiresAt: expires.UTC(), PayBy: expires.Add(s.paymentTimeout - s.holdTTL).UTC()}, nil
}

// holdRefusal turns hold_seats's refusal, under r, into the business error
// it stands for; any other error is returned as it is.
func holdRefusal(err error, r phaseRule) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != holdRefusedCode {
		return err
	}
	switch pe.Message {
	case "seat_limit":
		already, perr := strconv.ParseInt(pe.Detail, 10, 64)
		if perr != nil {
			return fmt.Errorf("seat_limit detail %q: %w", pe.Detail, perr)
		}
		return &SeatLimitError{Limit: r.maxSeats, Already: already, Phase: r.name}
	case "seats_unavailable":
		// The hint lists the refused seats that do not exist: an
		// unknown seat is bad input, a taken one a conflict.
		if unknown, _ := strings.CutPrefix(pe.Hint, "unknown:"); unknown != "" {
			return &UnknownSeatsError{Seats: strings.Split(unknown, ",")}
		}
		return &SeatsUnavailableError{Seats: strings.Split(pe.Detail, ",")}
	}
	return err
}

// Order is an order as the API shows it.
type Order struct {
	OrderID      string     `json:"orderId"`
	EventID      int64      `json:"eventId"`
	Status       string     `json:"status"`
	Seats        []string   `json:"seats"`
	Amount       string     `json:"amount"`
	Currency     string     `json:"currency"`
	ExpiresAt    time.Time  `json:"expiresAt"`
	PayBy        time.Time  `json:"payBy"` // created + payment timeout
	CreatedAt    time.Time  `json:"createdAt"`
	PaymentID    string     `json:"paymentId,omitempty"`
	SettledAt    *time.Time `json:"settledAt,omitempty"`
	RefundReason string     `json:"refundReason,omitempty"`
	// RefundedPayment is set in the answer to a payment that arrived after
	// the order was settled: that payment is refunded, the order unchanged.
	RefundedPayment *RefundedPayment `json:"refundedPayment,omitempty"`

	customerID string
	sessionID  string
}

const orderColumns = `id::text, event_id, customer_id, session_id, status, amount::text, currency, hold_expires_at,
	created_at, coalesce(payment_id, ''), settled_at, coalesce(refund_reason, '')`

// orderSQL reads an order of the event; lockOrderSQL also locks it.
const (
	orderSQL     = `SELECT ` + orderColumns + ` FROM ticket_order WHERE id = $1 AND event_id = $2`
	lockOrderSQL = orderSQL + ` FOR UPDATE`
)

func (s *Store) scanOrder(row pgx.Row) (*Order, error) {
	var o Order
	err := row.Scan(&o.OrderID, &o.EventID, &o.customerID, &o.sessionID, &o.Status, &o.Amount, &o.Currency, &o.ExpiresAt,
		&o.CreatedAt, &o.PaymentID, &o.SettledAt, &o.RefundReason)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrOrderNotFound
	}
	if err != nil {
		return nil, err
	}
	s.normalize(&o)
	return &o, nil
}

// normalize gives a scanned order's times in UTC and its payment deadline.
func (s *Store) normalize(o *Order) {
	o.ExpiresAt = o.ExpiresAt.UTC()
	o.CreatedAt = o.CreatedAt.UTC()
	o.PayBy = o.CreatedAt.Add(s.paymentTimeout)
	if o.SettledAt != nil {
		t := o.SettledAt.UTC()
		o.SettledAt = &t
	}
}

// loadSeats fills the order's seats in sorted order.
func loadSeats(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, o *Order) error {
	rows, err := q.Query(ctx, orderSeatsSQL, o.OrderID)
	if err != nil {
		return err
	}
	o.Seats, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return err
}

// orderSeatsSQL lists an order's seats in byte order, the order holds sort
// them in.
const orderSeatsSQL = `SELECT seat_id FROM order_seat WHERE order_id = $1 ORDER BY seat_id COLLATE "C"`

// Order returns the order if customer owns it; anyone else gets not found.
func (s *Store) Order(ctx context.Context, orderID, customer string) (*Order, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return nil, ErrOrderNotFound
	}
	o, err := s.scanOrder(s.pool.QueryRow(ctx, orderSQL, orderID, s.eventID))
	if err != nil {
		return nil, err
	}
	if o.customerID != customer {
		return nil, ErrOrderNotFound
	}
	if err := loadSeats(ctx, s.pool, o); err != nil {
		return nil, err
	}
	return o, nil
}

// releaseSeatsSQL frees the seats an order still holds, locking them in the
// same byte order holds use. A seat the order holds is one of its seats
// with hold_expires_at set (a sold seat has none): as in
// releaseExpiredSeatsSQL, a check on status would let the planner read
// them through a partial index on status instead of seat_order, 215-350 ms
// a release with the statistics of the seeded seats.
const releaseSeatsSQL = `
UPDATE seat SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL, updated_at = now()
 WHERE (event_id, seat_id) IN (
	SELECT event_id, seat_id FROM seat WHERE order_id = $1 AND hold_expires_at IS NOT NULL
	 ORDER BY seat_id COLLATE "C" FOR UPDATE)
   AND order_id = $1 AND hold_expires_at IS NOT NULL`

// Release cancels customer's pending order and frees its seats. customer ""
// skips the owner check (a failed payment reported by the provider).
func (s *Store) Release(ctx context.Context, orderID, customer string) (*Order, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return nil, ErrOrderNotFound
	}
	var o *Order
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		o, err = s.scanOrder(tx.QueryRow(ctx, lockOrderSQL, orderID, s.eventID))
		if err != nil {
			return err
		}
		if customer != "" && o.customerID != customer {
			return ErrOrderNotFound
		}
		if o.Status != StatusPending {
			return ErrOrderNotPending
		}
		if _, err := tx.Exec(ctx, releaseSeatsSQL, orderID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE ticket_order SET status = $2, updated_at = now() WHERE id = $1 RETURNING status`, orderID, StatusCancelled).Scan(&o.Status); err != nil {
			return err
		}
		return loadSeats(ctx, tx, o)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Payment is a confirmation request.
type Payment struct {
	OrderID        string
	IdempotencyKey string
	PaymentID      string
	Amount         Cents
	Currency       string
	// CardFingerprint identifies the card across customers ("" when the
	// provider sent none): the seat limit holds per card too.
	CardFingerprint string
}

// ConfirmResult tells whether this call settled the order (Fresh) or
// repeated an earlier settlement.
type ConfirmResult struct {
	Order *Order
	Fresh bool
}

// RefundedPayment is a payment that bought nothing and is paid back.
type RefundedPayment struct {
	PaymentID   string    `json:"paymentId"`
	Amount      string    `json:"amount"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	RequestedAt time.Time `json:"requestedAt"`
}

// confirmSQL is a payment: one call of confirm_payment
// (migrations/functions/confirm_payment.sql, which checks the limit the
// order was held under when it is lower than maxSeats), which reads,
// decides and writes the outcome with its outbox row, raising
// confirmRefusedCode when it refuses the payment. An order's payment and
// refund reason read as empty strings while unset, as in orderColumns.
const confirmSQL = `
SELECT r_fresh, r_event, r_customer, r_session, r_status, r_amount, r_currency, r_expires, r_created,
       coalesce(r_payment, ''), r_settled, coalesce(r_reason, ''), r_seats,
       r_extra_payment, r_extra_amount, r_extra_currency, r_extra_reason, r_extra_at
  FROM confirm_payment($1, $2, $3, $4, $5::numeric, $6, $7, nullif($8::text, ''))`

// confirmRefusedCode is the SQLSTATE of confirm_payment's refusals.
const confirmRefusedCode = "TFC01"

// Confirm settles an order with a payment, exactly once per idempotency
// key, in one round trip: one statement (confirmSQL), which PostgreSQL
// runs as one implicit transaction. The order row is locked, then the
// customer's lock that holds take, so the seat limit is decided against
// every concurrent hold and confirmation of the customer. Then either the
// order's seats become SOLD, the order PAID and a ticket-issued row is
// written to the outbox, or its remaining seats are freed, the order
// becomes REFUND_REQUIRED and a refund-requested row is written. Both
// outcomes commit.
//
// The order's status does not matter, only its seats and the limit: a
// payment that completes after the hold expired or was cancelled (a
// checkout finishing late, a card retried after a failed attempt) buys the
// seats if each is still held by the order or AVAILABLE again and the
// customer stays within the limit, counting their other SOLD and live
// HELD seats, and the payment's card within it too, counting the seats of
// every paid order with the card, whoever the customer (under the card's
// lock, taken after the customer's). Otherwise it is refunded (seat_taken,
// seat_limit, card_limit, amount_mismatch). A payment for an order already settled by another
// payment buys nothing: it is recorded in extra_payment and refunded
// (order_settled), once per payment id.
//
// As five round trips of pipelined batches, the transaction held its
// pooled connection, and on the paying path its seats' locks, across
// every wait between them: in a sale's opening burst most of booking's
// connections sat idle in it while holds queued for one.
func (s *Store) Confirm(ctx context.Context, p Payment) (*ConfirmResult, error) {
	if _, err := uuid.Parse(p.OrderID); err != nil {
		return nil, ErrOrderNotFound
	}
	var res *ConfirmResult
	err := s.retrying(ctx, func() (err error) {
		res, err = s.confirmOnce(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) confirmOnce(ctx context.Context, p Payment) (*ConfirmResult, error) {
	o := &Order{OrderID: p.OrderID}
	var (
		fresh                  bool
		extraPayment, extraAmt *string
		extraCurr, extraReason *string
		extraAt                *time.Time
	)
	err := s.pool.QueryRow(ctx, confirmSQL, s.eventID, p.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(),
		p.Currency, s.maxSeats, p.CardFingerprint).Scan(&fresh, &o.EventID, &o.customerID, &o.sessionID, &o.Status, &o.Amount, &o.Currency,
		&o.ExpiresAt, &o.CreatedAt, &o.PaymentID, &o.SettledAt, &o.RefundReason, &o.Seats,
		&extraPayment, &extraAmt, &extraCurr, &extraReason, &extraAt)
	if err != nil {
		return nil, confirmRefusal(err)
	}
	s.normalize(o)
	if extraPayment != nil {
		o.RefundedPayment = &RefundedPayment{PaymentID: *extraPayment, Amount: *extraAmt, Currency: *extraCurr,
			Reason: *extraReason, RequestedAt: extraAt.UTC()}
	}
	return &ConfirmResult{Order: o, Fresh: fresh}, nil
}

// confirmRefusal turns confirm_payment's refusal into the business error
// it stands for; any other error is returned as it is.
func confirmRefusal(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != confirmRefusedCode {
		return err
	}
	switch pe.Message {
	case "key_reused":
		return ErrIdempotencyKeyReused
	case "not_found":
		return ErrOrderNotFound
	case "order_settled":
		return ErrOrderSettled
	}
	return err
}

// expireOrdersSQL expires a batch of pending orders past their hold and
// tells, per session, whether it has no other live hold. The statuses are
// literals in the statement (not parameters) so that the partial index on
// pending orders serves it under a generic plan too.
const expireOrdersSQL = `
WITH expired AS (
	UPDATE ticket_order SET status = '` + StatusExpired + `', updated_at = now()
	 WHERE id = ANY (ARRAY(
		SELECT id FROM ticket_order
		 WHERE event_id = $1 AND status = '` + StatusPending + `' AND hold_expires_at <= now()
		 LIMIT $2 FOR UPDATE SKIP LOCKED))
	   AND status = '` + StatusPending + `'
	RETURNING session_id)
SELECT e.session_id, e.session_id <> '' AND NOT EXISTS (
	SELECT 1 FROM ticket_order o
	 WHERE o.event_id = $1 AND o.session_id = e.session_id
	   AND o.status = '` + StatusPending + `' AND o.hold_expires_at > now())
  FROM expired e`

// releaseExpiredSeatsSQL frees up to $2 expired holds' seats. The seats
// are claimed once, as an array, locked with their claim's conditions
// rechecked on the row they lock; then each is updated by its primary
// key. The update's own recheck is hold_expires_at alone, which only a
// HELD seat has set: a check on status would let the planner read the
// seats through an index whose predicate is on status (seat_held_expiry,
// seat_customer), and with statistics taken while every seat was
// AVAILABLE (autovacuum analyzes the table once it is seeded, before the
// sale) it did, testing each of the event's held seats against the whole
// batch: 230-460 ms a batch of 1,000 at 30,000 held seats, against 25 ms
// by the primary key. Migration 00008's CHECK seat_hold_expiry keeps
// hold_expires_at set exactly while the seat is HELD.
const releaseExpiredSeatsSQL = `
UPDATE seat SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL, updated_at = now()
 WHERE event_id = $1 AND seat_id = ANY (ARRAY(
	SELECT seat_id FROM seat
	 WHERE event_id = $1 AND status = 'HELD' AND hold_expires_at <= now()
	 LIMIT $2 FOR UPDATE SKIP LOCKED))
   AND hold_expires_at <= now()`

// Sweep frees expired holds and expires their pending orders, in batches
// of batch rows claimed with FOR UPDATE SKIP LOCKED, so every replica may
// sweep at once without waiting on the others or on live transactions.
// Each batch is claimed once, as an array (an InitPlan), and then updated
// by key: with statistics that lag a sale's first minute, an IN (subquery)
// was planned as a nested loop that claimed the batch again for every
// expired row, one statement running for seconds with seats locked. It
// returns the queue sessions whose checkout ran out: an order of theirs
// expired unpaid and they have no other live hold. Like a checkout timer,
// that ends their turn, so their slot in the seat-selection zone can go to
// the next person instead of idling until the access token expires.
func (s *Store) Sweep(ctx context.Context, batch int) (seats, orders int64, ended []string, err error) {
	for {
		tag, err := s.pool.Exec(ctx, releaseExpiredSeatsSQL, s.eventID, batch)
		if err != nil {
			return seats, orders, ended, err
		}
		seats += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	seen := map[string]bool{}
	for {
		// The outer query sees the snapshot before the UPDATE, in which the
		// expiring orders are PENDING but already past hold_expires_at.
		rows, err := s.pool.Query(ctx, expireOrdersSQL, s.eventID, batch)
		if err != nil {
			return seats, orders, ended, err
		}
		var n int64
		for rows.Next() {
			var sid string
			var end bool
			if err := rows.Scan(&sid, &end); err != nil {
				rows.Close()
				return seats, orders, ended, err
			}
			n++
			if end && !seen[sid] {
				seen[sid] = true
				ended = append(ended, sid)
			}
		}
		if err := rows.Err(); err != nil {
			return seats, orders, ended, err
		}
		orders += n
		if n < int64(batch) {
			break
		}
	}
	return seats, orders, ended, nil
}

// Inventory counts the event's seats by status in one statement, so the
// figures are one consistent snapshot; its Remaining (AVAILABLE or HELD) is
// what the queue may still admit people for.
func (s *Store) Inventory(ctx context.Context) (zone.Inventory, error) {
	var inv zone.Inventory
	if err := s.pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status = 'AVAILABLE'),
		       count(*) FILTER (WHERE status = 'HELD'),
		       count(*) FILTER (WHERE status = 'SOLD'),
		       count(DISTINCT order_id) FILTER (WHERE status = 'HELD')
		  FROM seat WHERE event_id = $1`, s.eventID).Scan(&inv.Available, &inv.Held, &inv.Sold, &inv.Holds); err != nil {
		return zone.Inventory{}, err
	}
	return inv, nil
}

// nullText is s, or NULL when empty.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
