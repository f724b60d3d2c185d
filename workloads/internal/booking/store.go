package booking

import (
	"context"
	"encoding/json"
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

// customerLockSQL serializes one customer's confirmations with each other
// and with their holds (hold_seats takes the same lock), so no two of them
// can add up past the seat limit.
const customerLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, $2))`

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

// holdSQL is a hold: one call of hold_seats (migration 00006), which takes
// the customer's lock, checks the limit, inserts the PENDING order and
// takes each seat in the given order, raising holdRefusedCode when a check
// refuses.
const holdSQL = `SELECT expires_at, amount FROM hold_seats($1, $2, $3, $4, $5, $6, $7, $8)`

// holdRefusedCode is the SQLSTATE of hold_seats's refusals.
const holdRefusedCode = "TFH01"

// Hold holds all of seats for customer, or none, in one round trip: one
// statement (holdSQL), which PostgreSQL runs as one implicit transaction.
// The customer's advisory lock (so parallel holds cannot add up past the
// limit), the limit check, the PENDING order with its amount, then one
// conditional UPDATE per seat in sorted order, each recording the seat as
// the order's. A refused check raises, which rolls it all back.
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

func (s *Store) holdOnce(ctx context.Context, customer, sessionID string, sorted []string) (*Hold, error) {
	orderID := uuid.New()
	var (
		expires time.Time
		amount  string
	)
	err := s.pool.QueryRow(ctx, holdSQL, s.eventID, orderID, customer, sessionID, s.currency,
		s.holdTTL.Milliseconds(), s.maxSeats, sorted).Scan(&expires, &amount)
	if err != nil {
		return nil, s.holdRefusal(err)
	}
	total, err := ParseCents(amount)
	if err != nil {
		return nil, fmt.Errorf("order %s amount: %w", orderID, err)
	}
	return &Hold{OrderID: orderID.String(), Seats: sorted, Amount: total.String(), Currency: s.currency,
		ExpiresAt: expires.UTC(), PayBy: expires.Add(s.paymentTimeout - s.holdTTL).UTC()}, nil
}

// holdRefusal turns hold_seats's refusal into the business error it stands
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
		// The hint lists the refused seats that do not exist (00009): an
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
	idemKey    *string
	paidAmount *string
	paidCurr   *string
	seatRows   []events.Seat
}

const orderColumns = `id::text, event_id, customer_id, session_id, status, amount::text, currency, hold_expires_at,
	created_at, coalesce(payment_id, ''), settled_at, coalesce(refund_reason, ''), idempotency_key, paid_amount::text, paid_currency`

// orderSQL reads an order of the event; lockOrderSQL also locks it.
const (
	orderSQL     = `SELECT ` + orderColumns + ` FROM ticket_order WHERE id = $1 AND event_id = $2`
	lockOrderSQL = orderSQL + ` FOR UPDATE`
)

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

// loadSeats fills the order's seats in sorted order.
func loadSeats(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, o *Order) error {
	rows, err := q.Query(ctx, orderSeatsSQL, o.OrderID)
	if err != nil {
		return err
	}
	return collectSeats(rows, o)
}

const orderSeatsSQL = `SELECT seat_id, section, price::text FROM order_seat WHERE order_id = $1`

// collectSeats fills o's seats from the rows of orderSeatsSQL, sorted.
func collectSeats(rows pgx.Rows, o *Order) error {
	var err error
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

// RefundedPayment is a payment that bought nothing and is paid back.
type RefundedPayment struct {
	PaymentID   string    `json:"paymentId"`
	Amount      string    `json:"amount"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	RequestedAt time.Time `json:"requestedAt"`
}

// Confirm settles an order with a payment, exactly once per idempotency
// key, in one transaction. The order row is locked, then the customer's
// lock that holds take, so the seat limit is decided against every
// concurrent hold and confirmation of the customer. Then either the
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
// HELD seats. Otherwise it is refunded (seat_taken, seat_limit,
// amount_mismatch). A payment for an order already settled by another
// payment buys nothing: it is recorded in extra_payment and refunded
// (order_settled), once per payment id.
//
// A payment that settles an order takes five round trips: BEGIN, the
// reads (readPayment), the lock with the limit and the sale (trySell), the
// outcome with its outbox row, and COMMIT. Each is a pipelined batch, so
// the transaction holds its pooled connection for five waits for the
// database instead of thirteen: under a sale's load, the time between
// round trips, not the statements, was what kept connections from holds.
func (s *Store) Confirm(ctx context.Context, p Payment) (*ConfirmResult, error) {
	if _, err := uuid.Parse(p.OrderID); err != nil {
		return nil, ErrOrderNotFound
	}
	var res *ConfirmResult
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		res, err = s.confirm(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) confirm(ctx context.Context, tx pgx.Tx, p Payment) (*ConfirmResult, error) {
	r, err := s.readPayment(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	if r.keyOrder != "" && r.keyOrder != p.OrderID {
		return nil, ErrIdempotencyKeyReused
	}
	if r.extra != nil {
		return s.replayExtraPayment(r, p)
	}
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	o := r.order
	if o.idemKey != nil {
		switch {
		case *o.idemKey == p.IdempotencyKey:
			if o.paidAmount == nil || *o.paidAmount != p.Amount.String() || o.paidCurr == nil || *o.paidCurr != p.Currency || o.PaymentID != p.PaymentID {
				return nil, ErrIdempotencyKeyReused
			}
			return &ConfirmResult{Order: o}, nil
		case o.PaymentID == p.PaymentID:
			// The payment that settled the order, under another key.
			return nil, ErrOrderSettled
		}
		if err := s.refundExtraPayment(ctx, tx, o, p, r.now); err != nil {
			return nil, err
		}
		return &ConfirmResult{Order: o, Fresh: true}, nil
	}
	b := &pgx.Batch{}
	reason := ReasonAmountMismatch
	if p.Amount.String() == o.Amount && p.Currency == o.Currency {
		if reason, err = s.trySell(ctx, tx, o); err != nil {
			return nil, err
		}
		if reason != "" {
			b.Queue(`ROLLBACK TO SAVEPOINT sell`)
		}
		// The order's UPDATE runs in the transaction itself (ROLLBACK TO
		// keeps the savepoint): run in the savepoint, it would give the
		// row this transaction locked FOR UPDATE a MultiXact, one per
		// settled order, which every later lock of it reads back.
		b.Queue(`RELEASE SAVEPOINT sell`)
	} else {
		// The refund's statements follow the lock in one batch.
		b.Queue(customerLockSQL, o.customerID, s.eventID)
	}
	if reason == "" {
		err = s.markPaid(ctx, tx, b, o, p, r.now)
	} else {
		err = s.markRefund(ctx, tx, b, o, p, reason, r.now)
	}
	if err != nil {
		return nil, err
	}
	return &ConfirmResult{Order: o, Fresh: true}, nil
}

// paymentReads is what a confirmation reads before it decides.
type paymentReads struct {
	keyOrder string // the order settled under the payment's key, if any
	extra    *extraPayment
	order    *Order // locked FOR UPDATE, with its seats; nil with orderErr
	orderErr error
	now      time.Time // the transaction's now(): settled_at and created_at
}

// extraPayment is a row of extra_payment.
type extraPayment struct {
	RefundedPayment
	key, orderID string
}

// readPayment reads, in one round trip: the order settled under p's key,
// p as an extra payment, the order (locked) and its seats, and now().
func (s *Store) readPayment(ctx context.Context, tx pgx.Tx, p Payment) (*paymentReads, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT id::text FROM ticket_order WHERE idempotency_key = $1`, p.IdempotencyKey)
	b.Queue(`
		SELECT payment_id, idempotency_key, order_id::text, amount::text, currency, reason, created_at
		  FROM extra_payment WHERE payment_id = $1 OR idempotency_key = $2 LIMIT 1`, p.PaymentID, p.IdempotencyKey)
	b.Queue(lockOrderSQL, p.OrderID, s.eventID)
	b.Queue(orderSeatsSQL, p.OrderID)
	b.Queue(`SELECT now()`)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	r := &paymentReads{}
	if err := br.QueryRow().Scan(&r.keyOrder); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	var x extraPayment
	err := br.QueryRow().Scan(&x.PaymentID, &x.key, &x.orderID, &x.Amount, &x.Currency, &x.Reason, &x.RequestedAt)
	switch {
	case err == nil:
		r.extra = &x
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	r.order, r.orderErr = s.scanOrder(br.QueryRow())
	if r.orderErr != nil && !errors.Is(r.orderErr, ErrOrderNotFound) {
		return nil, r.orderErr
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if r.order != nil {
		err = collectSeats(rows, r.order)
	} else {
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		return nil, err
	}
	if err := br.QueryRow().Scan(&r.now); err != nil {
		return nil, err
	}
	return r, br.Close()
}

// replayExtraPayment answers a payment already refunded as an extra
// payment the way it was answered first; one reusing its payment id or key
// for anything else is refused.
func (s *Store) replayExtraPayment(r *paymentReads, p Payment) (*ConfirmResult, error) {
	x := r.extra
	if x.PaymentID != p.PaymentID || x.key != p.IdempotencyKey || x.orderID != p.OrderID ||
		x.Amount != p.Amount.String() || x.Currency != p.Currency {
		return nil, ErrIdempotencyKeyReused
	}
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	rp := x.RefundedPayment
	rp.RequestedAt = rp.RequestedAt.UTC()
	r.order.RefundedPayment = &rp
	return &ConfirmResult{Order: r.order}, nil
}

// refundExtraPayment records p, a payment for the already settled order o,
// at now (the transaction's now(), extra_payment's created_at), and
// requests its refund, in one round trip. A racing duplicate hits the
// primary key (23505) and is run again by inTx, then finds the row and
// replays.
func (s *Store) refundExtraPayment(ctx context.Context, tx pgx.Tx, o *Order, p Payment, now time.Time) error {
	rp := RefundedPayment{PaymentID: p.PaymentID, Amount: p.Amount.String(), Currency: p.Currency, Reason: ReasonOrderSettled, RequestedAt: now.UTC()}
	b := &pgx.Batch{}
	b.Queue(`
		INSERT INTO extra_payment (payment_id, idempotency_key, order_id, amount, currency, reason)
		VALUES ($1, $2, $3, $4::numeric, $5, $6)`,
		p.PaymentID, p.IdempotencyKey, o.OrderID, rp.Amount, rp.Currency, rp.Reason)
	ev := events.RefundRequested{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: rp.Amount, Currency: rp.Currency, Reason: rp.Reason, At: rp.RequestedAt}
	if err := queueOutbox(b, events.TopicRefundRequested, o.OrderID, events.TypeRefundRequested, ev); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	o.RefundedPayment = &rp
	return nil
}

// trySell takes the customer's lock, counts their other SOLD and live HELD
// seats, and after the savepoint "sell" turns every seat of o into SOLD, in
// sorted order, all in one round trip. It returns why the payment cannot
// buy the seats (seat_limit, seat_taken), or "" when it did; the caller
// then rolls back to the savepoint, or releases it.
func (s *Store) trySell(ctx context.Context, tx pgx.Tx, o *Order) (string, error) {
	b := &pgx.Batch{}
	b.Queue(customerLockSQL, o.customerID, s.eventID)
	b.Queue(`
		SELECT count(*) FROM seat WHERE event_id = $1 AND held_by = $2 AND order_id <> $3
		   AND (status = 'SOLD' OR (status = 'HELD' AND hold_expires_at > now()))`,
		s.eventID, o.customerID, o.OrderID)
	b.Queue(`SAVEPOINT sell`)
	for _, id := range o.Seats {
		b.Queue(sellSeatSQL, s.eventID, id, o.customerID, o.OrderID)
	}
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return "", err
	}
	var others int64
	if err := br.QueryRow().Scan(&others); err != nil {
		return "", err
	}
	if _, err := br.Exec(); err != nil {
		return "", err
	}
	sold := 0
	for range o.Seats {
		tag, err := br.Exec()
		if err != nil {
			return "", err
		}
		sold += int(tag.RowsAffected())
	}
	if err := br.Close(); err != nil {
		return "", err
	}
	switch {
	case others+int64(len(o.Seats)) > int64(s.maxSeats):
		return ReasonSeatLimit, nil
	case sold != len(o.Seats):
		return ReasonSeatTaken, nil
	}
	return "", nil
}

// markPaid settles o as PAID by p, at now (the transaction's now()), with
// its ticket-issued row, after what b already holds, in one round trip.
func (s *Store) markPaid(ctx context.Context, tx pgx.Tx, b *pgx.Batch, o *Order, p Payment, now time.Time) error {
	at := now.UTC()
	b.Queue(`
		UPDATE ticket_order SET status = $6, idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
		       paid_currency = $5, settled_at = now(), updated_at = now()
		 WHERE id = $1`,
		o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency, StatusPaid)
	ev := events.TicketIssued{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: o.Amount, Currency: o.Currency, Seats: o.seatRows, PaidAt: at}
	if err := queueOutbox(b, events.TopicTicketIssued, o.OrderID, events.TypeTicketIssued, ev); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	o.Status, o.PaymentID, o.SettledAt = StatusPaid, p.PaymentID, &at
	return nil
}

// markRefund frees o's remaining seats and settles it as REFUND_REQUIRED
// by p for reason, at now, with its refund-requested row, after what b
// already holds, in one round trip.
func (s *Store) markRefund(ctx context.Context, tx pgx.Tx, b *pgx.Batch, o *Order, p Payment, reason string, now time.Time) error {
	at := now.UTC()
	b.Queue(releaseSeatsSQL, o.OrderID)
	b.Queue(`
		UPDATE ticket_order SET status = $7, idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
		       paid_currency = $5, refund_reason = $6, settled_at = now(), updated_at = now()
		 WHERE id = $1`,
		o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency, reason, StatusRefundRequired)
	// The refund is of what was paid, not of what the order cost.
	ev := events.RefundRequested{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: p.Amount.String(), Currency: p.Currency, Reason: reason, At: at}
	if err := queueOutbox(b, events.TopicRefundRequested, o.OrderID, events.TypeRefundRequested, ev); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	o.Status, o.PaymentID, o.SettledAt, o.RefundReason = StatusRefundRequired, p.PaymentID, &at, reason
	return nil
}

// queueOutbox queues the outbox row of an event on b.
func queueOutbox(b *pgx.Batch, topic, key, typ string, payload any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	b.Queue(insertOutboxSQL, topic, key, typ, body)
	return nil
}

const insertOutboxSQL = `INSERT INTO outbox (topic, key, event_type, payload) VALUES ($1, $2, $3, $4)`

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
