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
	"github.com/ticketfair/ticketfair/workloads/internal/events"
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
	// ReasonOrderSettled: a second payment for an order another payment
	// already settled.
	ReasonOrderSettled = "order_settled"
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

// checkSeats validates a hold request's seats and returns them sorted (the
// order every transaction locks seats in, so holds cannot deadlock).
func (s *Store) checkSeats(seats []string) ([]string, error) {
	if len(seats) == 0 {
		return nil, ErrNoSeats
	}
	if len(seats) > s.maxSeats {
		return nil, &TooManySeatsError{Limit: s.maxSeats}
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

// customerLockSQL serializes one customer's holds and confirmations, so
// no two of them can add up past the seat limit. It also makes the rest of
// the transaction run on generic plans: left to choose, PostgreSQL plans
// holdSQL and sellSeatsSQL again on every call, about 0.5 ms each, because
// its estimate of a generic plan for a seat array of unknown size is the
// higher one.
const customerLockSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), pg_advisory_xact_lock(hashtextextended($1, $2))`

// holdSQL is a hold after the customer's lock, as one statement: the
// limit check, the seats locked in sorted order and taken if free or
// expired, the PENDING order with its amount, and the order's seats. It
// refuses (hold_refuse, which rolls everything back) when the hold would
// take the customer's live HELD and SOLD seats past the limit, or when it
// did not get every seat: naming the seats that do not exist if there are
// any (bad input), else those it did not get.
//
// It runs as a statement of its own after the lock, so its snapshot sees
// every hold the customer committed before the lock was granted. The seats
// are locked by SELECT ... ORDER BY ... FOR UPDATE, which locks rows in
// the sorted order (bytewise, COLLATE "C", as every path locks seats),
// and a seat a concurrent hold took while this one waited is rechecked on
// its newest version and skipped. The limit is checked before any seat is
// locked, so a refused hold waits on none.
//
// $1 event, $2 customer, $3 sorted seats, $4 limit, $5 order, $6 session,
// $7 currency, $8 TTL in ms.
const holdSQL = `
WITH mine AS (
	SELECT count(*) AS n FROM seat WHERE event_id = $1 AND held_by = $2
	   AND (status = 'SOLD' OR (status = 'HELD' AND hold_expires_at > now()))
), locked AS (
	SELECT seat_id FROM seat
	 WHERE event_id = $1 AND seat_id = ANY($3::text[])
	   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at <= now()))
	   AND (SELECT n FROM mine) + cardinality($3::text[]) <= $4
	 ORDER BY seat_id COLLATE "C" FOR UPDATE
), taken AS (
	UPDATE seat SET status = 'HELD', held_by = $2, order_id = $5,
	       hold_expires_at = now() + $8::bigint * interval '1 millisecond', updated_at = now()
	 WHERE event_id = $1 AND seat_id IN (SELECT seat_id FROM locked)
	   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at <= now()))
	RETURNING seat_id, section, price
), placed AS (
	INSERT INTO ticket_order (id, customer_id, event_id, session_id, amount, currency, hold_expires_at)
	SELECT $5, $2, $1, $6, coalesce(sum(price), 0), $7, now() + $8::bigint * interval '1 millisecond' FROM taken
	RETURNING hold_expires_at, amount
), recorded AS (
	INSERT INTO order_seat (order_id, event_id, seat_id, section, price)
	SELECT $5, $1, seat_id, section, price FROM taken
), outcome AS (
	SELECT m.n, m.n + cardinality($3::text[]) > $4 AS over_limit,
	       (SELECT count(*) FROM taken) < cardinality($3::text[]) AS short
	  FROM mine m
), refusal AS (
	SELECT o.*, CASE WHEN o.short AND NOT o.over_limit THEN
	         (SELECT string_agg(u.id, ',' ORDER BY u.id) FROM unnest($3::text[]) AS u(id)
	           WHERE NOT EXISTS (SELECT 1 FROM seat WHERE event_id = $1 AND seat_id = u.id)) END AS unknown
	  FROM outcome o
)
SELECT hold_refuse(r.over_limit OR r.short,
         CASE WHEN r.over_limit THEN 'seat_limit' WHEN r.unknown IS NOT NULL THEN 'unknown_seats' ELSE 'seats_unavailable' END,
         CASE WHEN r.over_limit THEN r.n::text WHEN r.unknown IS NOT NULL THEN r.unknown ELSE
           (SELECT string_agg(u.id, ',' ORDER BY u.id) FROM unnest($3::text[]) AS u(id)
             WHERE u.id NOT IN (SELECT seat_id FROM taken)) END),
       p.hold_expires_at, p.amount::text
  FROM refusal r, placed p`

// holdRefusedCode is the SQLSTATE of hold_refuse (migration 00005).
const holdRefusedCode = "TFH01"

// Hold holds all of seats for customer, or none, in one round trip: a
// pipelined batch of two statements, which PostgreSQL runs as one implicit
// transaction. The customer's advisory lock (so parallel holds cannot add
// up past the limit), then holdSQL on its generic plan. A refused check
// raises, which rolls the whole batch back.
func (s *Store) Hold(ctx context.Context, customer, sessionID string, seats []string) (*Hold, error) {
	sorted, err := s.checkSeats(seats)
	if err != nil {
		return nil, err
	}
	var res *Hold
	err = s.retrying(ctx, func() (err error) {
		res, err = s.holdOnce(ctx, customer, sessionID, sorted)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// holdStatements are prepared by name on each connection that holds. A
// refused hold ends its batch with an error, and pgx drops the statements
// it prepared itself for a batch that failed, so the next hold on the
// connection would prepare them again: a round trip and a plan each.
var holdStatements = map[string]string{
	"hold_lock": customerLockSQL,
	"hold":      holdSQL,
}

func (s *Store) holdOnce(ctx context.Context, customer, sessionID string, sorted []string) (*Hold, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	for name, sql := range holdStatements {
		// Once per connection; after that pgx answers from its own map.
		if _, err := conn.Conn().Prepare(ctx, name, sql); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", name, err)
		}
	}
	orderID := uuid.New()
	b := &pgx.Batch{}
	b.Queue("hold_lock", customer, s.eventID)
	b.Queue("hold", s.eventID, customer, sorted, s.maxSeats, orderID, sessionID, s.currency, s.holdTTL.Milliseconds())
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	var (
		expires time.Time
		amount  string
	)
	if _, err := br.Exec(); err != nil {
		return nil, s.holdRefusal(err)
	}
	if err := br.QueryRow().Scan(nil, &expires, &amount); err != nil {
		return nil, s.holdRefusal(err)
	}
	if err := br.Close(); err != nil {
		return nil, s.holdRefusal(err)
	}
	total, err := ParseCents(amount)
	if err != nil {
		return nil, fmt.Errorf("order %s amount: %w", orderID, err)
	}
	return &Hold{OrderID: orderID.String(), Seats: sorted, Amount: total.String(), Currency: s.currency,
		ExpiresAt: expires.UTC(), PayBy: expires.Add(s.paymentTimeout - s.holdTTL).UTC()}, nil
}

// holdRefusal turns hold_refuse's error into the business error it stands
// for; any other error is returned as it is.
func (s *Store) holdRefusal(err error) error {
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
		return &SeatLimitError{Limit: s.maxSeats, Already: already}
	case "seats_unavailable":
		return &SeatsUnavailableError{Seats: strings.Split(pe.Detail, ",")}
	case "unknown_seats":
		return &UnknownSeatsError{Seats: strings.Split(pe.Detail, ",")}
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
		return nil, ErrOrderNotFound
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

// orderSeatsSQL reads an order's seats.
const orderSeatsSQL = `SELECT seat_id, section, price::text FROM order_seat WHERE order_id = $1`

// loadSeats fills the order's seats in sorted order.
func loadSeats(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, o *Order) error {
	rows, err := q.Query(ctx, orderSeatsSQL, o.OrderID)
	if err != nil {
		return err
	}
	seats, err := scanSeats(rows)
	if err != nil {
		return err
	}
	o.setSeats(seats)
	return nil
}

// scanSeats reads orderSeatsSQL's rows, sorted by seat id.
func scanSeats(rows pgx.Rows) ([]events.Seat, error) {
	seats, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (events.Seat, error) {
		var s events.Seat
		err := r.Scan(&s.SeatID, &s.Section, &s.Price)
		return s, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(seats, func(a, b events.Seat) int { return strings.Compare(a.SeatID, b.SeatID) })
	return seats, nil
}

// setSeats makes seats the order's.
func (o *Order) setSeats(seats []events.Seat) {
	o.seatRows = seats
	o.Seats = make([]string, len(seats))
	for i, s := range seats {
		o.Seats[i] = s.SeatID
	}
}

// Order returns the order if customer owns it; anyone else gets not found.
func (s *Store) Order(ctx context.Context, orderID, customer string) (*Order, error) {
	if _, err := uuid.Parse(orderID); err != nil {
		return nil, ErrOrderNotFound
	}
	o, err := s.scanOrder(s.pool.QueryRow(ctx, `SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2`, orderID, s.eventID))
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
		return nil, ErrOrderNotFound
	}
	var o *Order
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		o, err = s.scanOrder(tx.QueryRow(ctx, `SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2 FOR UPDATE`, orderID, s.eventID))
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
		tag, err := s.pool.Exec(ctx, `
			UPDATE seat SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL, updated_at = now()
			 WHERE event_id = $1 AND seat_id = ANY (ARRAY(
				SELECT seat_id FROM seat
				 WHERE event_id = $1 AND status = 'HELD' AND hold_expires_at <= now()
				 LIMIT $2 FOR UPDATE SKIP LOCKED))
			   AND status = 'HELD' AND hold_expires_at <= now()`, s.eventID, batch)
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
