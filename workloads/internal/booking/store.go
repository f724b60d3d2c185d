package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/events"
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
)

// Store is the booking logic on PostgreSQL. Every decision is made by the
// database (conditional UPDATEs, row locks, now()), so any number of
// replicas may share one database.
type Store struct {
	pool    *pgxpool.Pool
	eventID int64
	holdTTL time.Duration
	// paymentTimeout is how long after a hold its payment may complete
	// (payBy); shorter than holdTTL.
	paymentTimeout time.Duration
	maxSeats       int
	currency       string
}

// NewStore returns the store of one event.
func NewStore(pool *pgxpool.Pool, eventID int64, holdTTL time.Duration, maxSeats int, currency string) *Store {
	return &Store{pool: pool, eventID: eventID, holdTTL: holdTTL, paymentTimeout: defaultPaymentTimeout(holdTTL), maxSeats: maxSeats, currency: currency}
}

// defaultPaymentTimeout leaves the last fifth of a hold (a minute of the
// default five) between the end of the provider's checkout and the hold's.
func defaultPaymentTimeout(holdTTL time.Duration) time.Duration { return holdTTL * 4 / 5 }

// inTx runs fn in a transaction, running it again on deadlocks and
// serialization failures so they never reach a user.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.retry(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) })
}

// retry runs fn (one transaction) again on deadlocks, serialization
// failures and a racing unique key, with jittered backoff.
func (s *Store) retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if retryable(err) && attempt < 10 {
			backoff := time.Duration(1+rand.IntN(5<<min(attempt, 4))) * time.Millisecond
			select {
			case <-time.After(backoff):
				continue
			case <-ctx.Done():
				return dbError(ctx.Err())
			}
		}
		return dbError(err)
	}
}

// checkSeats validates a hold request's seats and returns them sorted (the
// order every transaction locks seats in, so holds cannot deadlock).
func (s *Store) checkSeats(seats []string) ([]string, error) {
	if len(seats) == 0 {
		return nil, errNoSeats
	}
	if len(seats) > s.maxSeats {
		return nil, errTooManySeats(s.maxSeats)
	}
	sorted := slices.Clone(seats)
	slices.Sort(sorted)
	for i, id := range sorted {
		if _, ok := parseSeatID(id); !ok {
			return nil, badRequest("bad_seat_id", "seat id %q is not of the form <section>-<row>-<seat>", truncate(id, 40))
		}
		if i > 0 && sorted[i-1] == id {
			return nil, errDuplicateSeat
		}
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
}

// Hold holds all of seats for customer, or none, in one database round
// trip: the hold_seats function (migration 00004) called as one statement,
// its own transaction. It takes the customer's advisory lock (so parallel
// holds cannot add up past the limit), counts the customer's seats under
// it, locks the seats in sorted order, and writes the PENDING order, the
// seats and the order's seats only if every seat is free; times come from
// the database clock. Deadlocks and serialization failures are retried.
func (s *Store) Hold(ctx context.Context, customer, sessionID string, seats []string) (*Hold, error) {
	sorted, err := s.checkSeats(seats)
	if err != nil {
		return nil, err
	}
	var (
		res         *Hold
		unavailable []string
	)
	err = s.retry(ctx, func() error {
		orderID := uuid.New()
		var (
			result, amount *string
			already        *int64
			expires        *time.Time
		)
		unavailable = nil
		if err := s.pool.QueryRow(ctx, `SELECT * FROM hold_seats($1, $2, $3, $4, $5, $6, $7, $8)`,
			s.eventID, customer, sessionID, orderID, sorted, s.holdTTL.Milliseconds(), s.maxSeats, s.currency,
		).Scan(&result, &already, &unavailable, &expires, &amount); err != nil {
			return err
		}
		switch {
		case result == nil || already == nil:
			return errors.New("hold_seats: no result")
		case *result == "limit":
			return errSeatLimit(s.maxSeats, *already)
		case *result == "unavailable":
			return errUnavailableSeats(unavailable)
		case *result != "held" || expires == nil || amount == nil:
			return fmt.Errorf("hold_seats: unexpected result %q", *result)
		}
		total, err := ParseCents(*amount)
		if err != nil {
			return fmt.Errorf("hold amount: %w", err)
		}
		res = &Hold{OrderID: orderID.String(), Seats: sorted, Amount: total.String(), Currency: s.currency,
			ExpiresAt: expires.UTC(), PayBy: expires.Add(s.paymentTimeout - s.holdTTL).UTC()}
		return nil
	})
	if err != nil {
		if len(unavailable) > 0 {
			// Tell an unknown seat (bad input) from a taken one.
			if unknown, uerr := s.unknownSeats(ctx, unavailable); uerr == nil && len(unknown) > 0 {
				return nil, errUnknownSeats(unknown)
			}
		}
		return nil, err
	}
	return res, nil
}

func (s *Store) unknownSeats(ctx context.Context, ids []string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT seat_id FROM seat WHERE event_id = $1 AND seat_id = ANY($2)`, s.eventID, ids)
	if err != nil {
		return nil, err
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, id := range ids {
		if !slices.Contains(known, id) {
			unknown = append(unknown, id)
		}
	}
	return unknown, nil
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

	customerID string
	sessionID  string
	idemKey    *string
	paidAmount *string
	paidCurr   *string
	seatRows   []events.Seat
}

const orderColumns = `id::text, event_id, customer_id, session_id, status, amount::text, currency, hold_expires_at,
	created_at, coalesce(payment_id, ''), settled_at, coalesce(refund_reason, ''), idempotency_key, paid_amount::text, paid_currency`

func (s *Store) scanOrder(row pgx.Row) (*Order, error) {
	var o Order
	err := row.Scan(&o.OrderID, &o.EventID, &o.customerID, &o.sessionID, &o.Status, &o.Amount, &o.Currency, &o.ExpiresAt,
		&o.CreatedAt, &o.PaymentID, &o.SettledAt, &o.RefundReason, &o.idemKey, &o.paidAmount, &o.paidCurr)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errOrderNotFound
	}
	if err != nil {
		return nil, err
	}
	o.ExpiresAt = o.ExpiresAt.UTC()
	o.CreatedAt = o.CreatedAt.UTC()
	o.PayBy = o.CreatedAt.Add(s.paymentTimeout)
	if o.SettledAt != nil {
		t := o.SettledAt.UTC()
		o.SettledAt = &t
	}
	return &o, nil
}

// loadSeats fills the order's seats in sorted order.
func loadSeats(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, o *Order) error {
	rows, err := q.Query(ctx, `SELECT seat_id, section, price::text FROM order_seat WHERE order_id = $1`, o.OrderID)
	if err != nil {
		return err
	}
	o.seatRows, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (events.Seat, error) {
		var s events.Seat
		err := r.Scan(&s.SeatID, &s.Section, &s.Price)
		return s, err
	})
	if err != nil {
		return err
	}
	slices.SortFunc(o.seatRows, func(a, b events.Seat) int {
		if a.SeatID < b.SeatID {
			return -1
		}
		if a.SeatID > b.SeatID {
			return 1
		}
		return 0
	})
	o.Seats = make([]string, len(o.seatRows))
	for i, s := range o.seatRows {
		o.Seats[i] = s.SeatID
	}
	return nil
}

// Order returns the order if customer owns it; anyone else gets not found.
func (s *Store) Order(ctx context.Context, orderID, customer string) (*Order, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return nil, errOrderNotFound
	}
	o, err := s.scanOrder(s.pool.QueryRow(ctx, `SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2`, orderID, s.eventID))
	if err != nil {
		return nil, dbError(err)
	}
	if o.customerID != customer {
		return nil, errOrderNotFound
	}
	if err := loadSeats(ctx, s.pool, o); err != nil {
		return nil, dbError(err)
	}
	return o, nil
}

// releaseSeatsSQL frees the seats an order still holds, locking them in the
// same byte order holds use.
const releaseSeatsSQL = `
UPDATE seat SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL, updated_at = now()
 WHERE (event_id, seat_id) IN (
	SELECT event_id, seat_id FROM seat WHERE order_id = $1 AND status = 'HELD'
	 ORDER BY seat_id COLLATE "C" FOR UPDATE)
   AND order_id = $1 AND status = 'HELD'`

// Release cancels customer's pending order and frees its seats. customer ""
// skips the owner check (a failed payment reported by the provider).
func (s *Store) Release(ctx context.Context, orderID, customer string) (*Order, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return nil, errOrderNotFound
	}
	var o *Order
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		o, err = s.scanOrder(tx.QueryRow(ctx, `SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2 FOR UPDATE`, orderID, s.eventID))
		if err != nil {
			return err
		}
		if customer != "" && o.customerID != customer {
			return errOrderNotFound
		}
		if o.Status != StatusPending {
			return errOrderNotPending
		}
		if _, err := tx.Exec(ctx, releaseSeatsSQL, orderID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE ticket_order SET status = 'CANCELLED', updated_at = now() WHERE id = $1 RETURNING status`, orderID).Scan(&o.Status); err != nil {
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
}

// ConfirmResult tells whether this call settled the order (Fresh) or
// repeated an earlier settlement.
type ConfirmResult struct {
	Order *Order
	Fresh bool
}

const sellSeatSQL = `
UPDATE seat SET status = 'SOLD', held_by = $3, order_id = $4, hold_expires_at = NULL, updated_at = now()
 WHERE event_id = $1 AND seat_id = $2
   AND ((status = 'HELD' AND order_id = $4) OR status = 'AVAILABLE')`

// Confirm settles an order with a payment, exactly once per idempotency
// key, in one transaction: the order row is locked, then either its seats
// become SOLD, the order PAID and a ticket-issued row is written to the
// outbox, or (seat lost after expiry, amount mismatch) its seats are freed,
// the order becomes REFUND_REQUIRED and a refund-requested row is written.
// Both outcomes commit. A seat still held by the order, even past its
// expiry, or AVAILABLE again after the sweeper freed it, is sold: the
// customer paid and nobody else took it.
func (s *Store) Confirm(ctx context.Context, p Payment) (*ConfirmResult, error) {
	if _, err := uuid.Parse(p.OrderID); err != nil {
		return nil, errOrderNotFound
	}
	var res *ConfirmResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = nil
		var other string
		err := tx.QueryRow(ctx, `SELECT id::text FROM ticket_order WHERE idempotency_key = $1`, p.IdempotencyKey).Scan(&other)
		if err == nil && other != p.OrderID {
			return errIdemKeyReused
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		o, err := s.scanOrder(tx.QueryRow(ctx, `SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2 FOR UPDATE`, p.OrderID, s.eventID))
		if err != nil {
			return err
		}
		if o.idemKey != nil {
			if *o.idemKey != p.IdempotencyKey {
				return errOrderSettled
			}
			if o.paidAmount == nil || *o.paidAmount != p.Amount.String() || o.paidCurr == nil || *o.paidCurr != p.Currency || o.PaymentID != p.PaymentID {
				return errIdemKeyReused
			}
			res = &ConfirmResult{Order: o}
			return loadSeats(ctx, tx, o)
		}
		if err := loadSeats(ctx, tx, o); err != nil {
			return err
		}
		reason := ""
		if p.Amount.String() != o.Amount || p.Currency != o.Currency {
			reason = ReasonAmountMismatch
		} else if sold, err := s.sellSeats(ctx, tx, o); err != nil {
			return err
		} else if !sold {
			reason = ReasonSeatTaken
		}
		if reason == "" {
			err = s.markPaid(ctx, tx, o, p)
		} else {
			err = s.markRefund(ctx, tx, o, p, reason)
		}
		if err != nil {
			return err
		}
		res = &ConfirmResult{Order: o, Fresh: true}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// sellSeats turns every seat of o into SOLD, in sorted order, or none (the
// savepoint is rolled back when a seat is gone).
func (s *Store) sellSeats(ctx context.Context, tx pgx.Tx, o *Order) (bool, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	b := &pgx.Batch{}
	for _, id := range o.Seats {
		b.Queue(sellSeatSQL, s.eventID, id, o.customerID, o.OrderID)
	}
	br := sp.SendBatch(ctx, b)
	all := true
	for range o.Seats {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			_ = sp.Rollback(ctx)
			return false, err
		}
		if tag.RowsAffected() != 1 {
			all = false
		}
	}
	if err := br.Close(); err != nil {
		_ = sp.Rollback(ctx)
		return false, err
	}
	if !all {
		return false, sp.Rollback(ctx)
	}
	return true, sp.Commit(ctx)
}

func (s *Store) markPaid(ctx context.Context, tx pgx.Tx, o *Order, p Payment) error {
	var at time.Time
	if err := tx.QueryRow(ctx, `
		UPDATE ticket_order SET status = 'PAID', idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
		       paid_currency = $5, settled_at = now(), updated_at = now()
		 WHERE id = $1 RETURNING settled_at`,
		o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency).Scan(&at); err != nil {
		return err
	}
	at = at.UTC()
	o.Status, o.PaymentID, o.SettledAt = StatusPaid, p.PaymentID, &at
	ev := events.TicketIssued{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: o.Amount, Currency: o.Currency, Seats: o.seatRows, PaidAt: at}
	return insertOutbox(ctx, tx, events.TopicTicketIssued, o.OrderID, events.TypeTicketIssued, ev)
}

func (s *Store) markRefund(ctx context.Context, tx pgx.Tx, o *Order, p Payment, reason string) error {
	if _, err := tx.Exec(ctx, releaseSeatsSQL, o.OrderID); err != nil {
		return err
	}
	var at time.Time
	if err := tx.QueryRow(ctx, `
		UPDATE ticket_order SET status = 'REFUND_REQUIRED', idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
		       paid_currency = $5, refund_reason = $6, settled_at = now(), updated_at = now()
		 WHERE id = $1 RETURNING settled_at`,
		o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency, reason).Scan(&at); err != nil {
		return err
	}
	at = at.UTC()
	o.Status, o.PaymentID, o.SettledAt, o.RefundReason = StatusRefundRequired, p.PaymentID, &at, reason
	// The refund is of what was paid, not of what the order cost.
	ev := events.RefundRequested{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: p.Amount.String(), Currency: p.Currency, Reason: reason, At: at}
	return insertOutbox(ctx, tx, events.TopicRefundRequested, o.OrderID, events.TypeRefundRequested, ev)
}

func insertOutbox(ctx context.Context, tx pgx.Tx, topic, key, typ string, payload any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO outbox (topic, key, event_type, payload) VALUES ($1, $2, $3, $4)`, topic, key, typ, body)
	return err
}

// Sweep frees expired holds and expires their pending orders, in batches
// of batch rows claimed with FOR UPDATE SKIP LOCKED, so every replica may
// sweep at once without waiting on the others or on live transactions. It
// returns the queue sessions whose checkout ran out: an order of theirs
// expired unpaid and they have no other live hold. Like a checkout timer,
// that ends their turn, so their slot in the seat-selection zone can go to
// the next person instead of idling until the access token expires.
func (s *Store) Sweep(ctx context.Context, batch int) (seats, orders int64, ended []string, err error) {
	for {
		tag, err := s.pool.Exec(ctx, `
			UPDATE seat SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL, updated_at = now()
			 WHERE (event_id, seat_id) IN (
				SELECT event_id, seat_id FROM seat
				 WHERE event_id = $1 AND status = 'HELD' AND hold_expires_at <= now()
				 LIMIT $2 FOR UPDATE SKIP LOCKED)
			   AND status = 'HELD' AND hold_expires_at <= now()`, s.eventID, batch)
		if err != nil {
			return seats, orders, ended, dbError(err)
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
		rows, err := s.pool.Query(ctx, `
			WITH expired AS (
				UPDATE ticket_order SET status = 'EXPIRED', updated_at = now()
				 WHERE id IN (
					SELECT id FROM ticket_order
					 WHERE event_id = $1 AND status = 'PENDING' AND hold_expires_at <= now()
					 LIMIT $2 FOR UPDATE SKIP LOCKED)
				   AND status = 'PENDING'
				RETURNING session_id)
			SELECT e.session_id, e.session_id <> '' AND NOT EXISTS (
				SELECT 1 FROM ticket_order o
				 WHERE o.event_id = $1 AND o.session_id = e.session_id
				   AND o.status = 'PENDING' AND o.hold_expires_at > now())
			  FROM expired e`, s.eventID, batch)
		if err != nil {
			return seats, orders, ended, dbError(err)
		}
		var n int64
		for rows.Next() {
			var sid string
			var end bool
			if err := rows.Scan(&sid, &end); err != nil {
				rows.Close()
				return seats, orders, ended, dbError(err)
			}
			n++
			if end && !seen[sid] {
				seen[sid] = true
				ended = append(ended, sid)
			}
		}
		if err := rows.Err(); err != nil {
			return seats, orders, ended, dbError(err)
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
		       count(*) FILTER (WHERE status = 'SOLD')
		  FROM seat WHERE event_id = $1`, s.eventID).Scan(&inv.Available, &inv.Held, &inv.Sold); err != nil {
		return zone.Inventory{}, dbError(err)
	}
	return inv, nil
}
