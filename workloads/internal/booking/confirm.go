package booking

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

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
// A fresh payment costs three round trips, each a pipelined batch: BEGIN
// and the reads (confirmReads), the decision (the customer's lock and
// sellSeatsSQL), the settlement (order, seats, outbox) and COMMIT. The
// statements run in the order they would one by one, so each still takes
// its snapshot after the locks before it were granted; fewer round trips
// hold the order's and the seats' locks, and a pooled connection, for
// less time.
func (s *Store) Confirm(ctx context.Context, p Payment) (*ConfirmResult, error) {
	if _, err := uuid.Parse(p.OrderID); err != nil {
		return nil, ErrOrderNotFound
	}
	var res *ConfirmResult
	err := s.retrying(ctx, func() (err error) {
		res, err = s.confirmTx(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// confirmTx runs one confirmation as one transaction, which readForConfirm
// begins and settle commits. A path that ends without settling commits
// here (its own writes, or only reads); an error rolls back. A connection
// still in a transaction after that is closed by the pool, not reused.
func (s *Store) confirmTx(ctx context.Context, p Payment) (*ConfirmResult, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	res, err := s.confirmOnce(ctx, conn, p)
	switch status := conn.Conn().PgConn().TxStatus(); {
	case status == 'I':
	case err == nil && status == 'T':
		_, err = conn.Exec(ctx, "COMMIT")
	default:
		if err == nil {
			err = errors.New("confirmation: transaction failed without an error")
		}
		_, _ = conn.Exec(ctx, "ROLLBACK")
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) confirmOnce(ctx context.Context, conn *pgxpool.Conn, p Payment) (*ConfirmResult, error) {
	r, err := s.readForConfirm(ctx, conn, p)
	if err != nil {
		return nil, err
	}
	if r.keyOrder != "" && r.keyOrder != p.OrderID {
		return nil, ErrIdempotencyKeyReused
	}
	if r.extra != nil {
		return replayExtraPayment(r, p)
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
		if err := s.refundExtraPayment(ctx, conn, o, p); err != nil {
			return nil, err
		}
		return &ConfirmResult{Order: o, Fresh: true}, nil
	}
	mismatch := p.Amount.String() != o.Amount || p.Currency != o.Currency
	others, sold, err := s.sellSeats(ctx, conn, o, mismatch)
	if err != nil {
		return nil, err
	}
	reason := ""
	switch {
	case mismatch:
		reason = ReasonAmountMismatch
	case others+int64(len(o.Seats)) > int64(s.maxSeats):
		reason = ReasonSeatLimit
	case !sold:
		reason = ReasonSeatTaken
	}
	if err := s.settle(ctx, conn, o, p, reason, r.now); err != nil {
		return nil, err
	}
	return &ConfirmResult{Order: o, Fresh: true}, nil
}

// confirmReads is what a confirmation reads before it decides.
type confirmReads struct {
	now      time.Time // the transaction's clock, which settled_at is set from
	keyOrder string    // the order that already has the idempotency key, or ""
	// extra is the extra payment with the payment id or the key, or nil,
	// with its key and order.
	extra              *RefundedPayment
	extraKey, extraFor string
	order              *Order // locked FOR UPDATE, with its seats
	orderErr           error  // ErrOrderNotFound
}

// readForConfirm begins the transaction and reads, in one round trip: the
// clock and the order that has the key, an extra payment with the payment
// id or key, the order (locked) and its seats.
func (s *Store) readForConfirm(ctx context.Context, conn *pgxpool.Conn, p Payment) (*confirmReads, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`SELECT now(), (SELECT id::text FROM ticket_order WHERE idempotency_key = $1)`, p.IdempotencyKey)
	b.Queue(`
		SELECT payment_id, idempotency_key, order_id::text, amount::text, currency, reason, created_at
		  FROM extra_payment WHERE payment_id = $1 OR idempotency_key = $2 LIMIT 1`, p.PaymentID, p.IdempotencyKey)
	b.Queue(`SELECT `+orderColumns+` FROM ticket_order WHERE id = $1 AND event_id = $2 FOR UPDATE`, p.OrderID, s.eventID)
	b.Queue(orderSeatsSQL, p.OrderID)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	var (
		r        confirmReads
		keyOrder *string
		rp       RefundedPayment
	)
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	if err := br.QueryRow().Scan(&r.now, &keyOrder); err != nil {
		return nil, err
	}
	if keyOrder != nil {
		r.keyOrder = *keyOrder
	}
	err := br.QueryRow().Scan(&rp.PaymentID, &r.extraKey, &r.extraFor, &rp.Amount, &rp.Currency, &rp.Reason, &rp.RequestedAt)
	switch {
	case err == nil:
		rp.RequestedAt = rp.RequestedAt.UTC()
		r.extra = &rp
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	r.order, err = s.scanOrder(br.QueryRow())
	if errors.Is(err, ErrOrderNotFound) {
		r.order, r.orderErr = nil, err
	} else if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	seats, err := scanSeats(rows)
	if err != nil {
		return nil, err
	}
	if r.order != nil {
		r.order.setSeats(seats)
	}
	return &r, br.Close()
}

// replayExtraPayment answers a payment already refunded as an extra
// payment the way it was answered first; one reusing its payment id or key
// for anything else is refused.
func replayExtraPayment(r *confirmReads, p Payment) (*ConfirmResult, error) {
	rp := r.extra
	if rp.PaymentID != p.PaymentID || r.extraKey != p.IdempotencyKey || r.extraFor != p.OrderID ||
		rp.Amount != p.Amount.String() || rp.Currency != p.Currency {
		return nil, ErrIdempotencyKeyReused
	}
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	r.order.RefundedPayment = rp
	return &ConfirmResult{Order: r.order}, nil
}

// refundExtraPayment records p, a payment for the already settled order o,
// and requests its refund. A racing duplicate hits the primary key (23505)
// and is run again by Confirm, then finds the row and replays.
func (s *Store) refundExtraPayment(ctx context.Context, conn *pgxpool.Conn, o *Order, p Payment) error {
	rp := RefundedPayment{PaymentID: p.PaymentID, Amount: p.Amount.String(), Currency: p.Currency, Reason: ReasonOrderSettled}
	if err := conn.QueryRow(ctx, `
		INSERT INTO extra_payment (payment_id, idempotency_key, order_id, amount, currency, reason)
		VALUES ($1, $2, $3, $4::numeric, $5, $6) RETURNING created_at`,
		p.PaymentID, p.IdempotencyKey, o.OrderID, rp.Amount, rp.Currency, rp.Reason).Scan(&rp.RequestedAt); err != nil {
		return err
	}
	rp.RequestedAt = rp.RequestedAt.UTC()
	o.RefundedPayment = &rp
	ev := events.RefundRequested{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
		Amount: rp.Amount, Currency: rp.Currency, Reason: rp.Reason, At: rp.RequestedAt}
	b := &pgx.Batch{}
	if err := queueOutbox(b, events.TopicRefundRequested, o.OrderID, events.TypeRefundRequested, ev); err != nil {
		return err
	}
	return conn.SendBatch(ctx, b).Close()
}

// sellSeatsSQL sells every seat of an order or none, after the customer's
// lock, and counts the customer's SOLD and live HELD seats of other orders.
// It sells nothing when told the amount is wrong ($5) or when the order's
// seats would take the customer past the limit ($6). Otherwise it locks
// the seats still held by the order or AVAILABLE again, in the byte order
// every path locks seats in, and sells them only if that is all of them.
//
// $1 event, $2 customer, $3 order, $4 the order's seats, $5 amount
// mismatch, $6 limit.
const sellSeatsSQL = `
WITH others AS (
	SELECT count(*) AS n FROM seat WHERE event_id = $1 AND held_by = $2 AND order_id <> $3
	   AND (status = 'SOLD' OR (status = 'HELD' AND hold_expires_at > now()))
), locked AS (
	SELECT seat_id FROM seat
	 WHERE event_id = $1 AND seat_id = ANY($4::text[])
	   AND ((status = 'HELD' AND order_id = $3) OR status = 'AVAILABLE')
	   AND NOT $5::boolean AND (SELECT n FROM others) + cardinality($4::text[]) <= $6
	 ORDER BY seat_id COLLATE "C" FOR UPDATE
), sold AS (
	UPDATE seat SET status = 'SOLD', held_by = $2, order_id = $3, hold_expires_at = NULL, updated_at = now()
	 WHERE event_id = $1 AND seat_id IN (SELECT seat_id FROM locked)
	   AND (SELECT count(*) FROM locked) = cardinality($4::text[])
	RETURNING seat_id
)
SELECT (SELECT n FROM others), (SELECT count(*) FROM sold) = cardinality($4::text[])`

// sellSeats takes the customer's lock and runs sellSeatsSQL for o, in one
// round trip; it returns the customer's seats in other orders and whether
// o's seats were sold.
func (s *Store) sellSeats(ctx context.Context, conn *pgxpool.Conn, o *Order, mismatch bool) (others int64, sold bool, err error) {
	b := &pgx.Batch{}
	b.Queue(customerLockSQL, o.customerID, s.eventID)
	b.Queue(sellSeatsSQL, s.eventID, o.customerID, o.OrderID, o.Seats, mismatch, s.maxSeats)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return 0, false, err
	}
	if err := br.QueryRow().Scan(&others, &sold); err != nil {
		return 0, false, err
	}
	return others, sold, br.Close()
}

// settle records the payment on o and commits, in one round trip: PAID
// with a ticket-issued row when reason is "", else its remaining seats
// freed, REFUND_REQUIRED and a refund-requested row. at is the
// transaction's clock, which the order's settled_at is set from.
func (s *Store) settle(ctx context.Context, conn *pgxpool.Conn, o *Order, p Payment, reason string, at time.Time) error {
	at = at.UTC()
	b := &pgx.Batch{}
	var (
		topic, typ string
		ev         any
	)
	if reason == "" {
		b.Queue(`
			UPDATE ticket_order SET status = $6, idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
			       paid_currency = $5, settled_at = now(), updated_at = now()
			 WHERE id = $1`,
			o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency, StatusPaid)
		o.Status, o.PaymentID, o.SettledAt = StatusPaid, p.PaymentID, &at
		topic, typ = events.TopicTicketIssued, events.TypeTicketIssued
		ev = events.TicketIssued{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
			Amount: o.Amount, Currency: o.Currency, Seats: o.seatRows, PaidAt: at}
	} else {
		b.Queue(releaseSeatsSQL, o.OrderID)
		b.Queue(`
			UPDATE ticket_order SET status = $7, idempotency_key = $2, payment_id = $3, paid_amount = $4::numeric,
			       paid_currency = $5, refund_reason = $6, settled_at = now(), updated_at = now()
			 WHERE id = $1`,
			o.OrderID, p.IdempotencyKey, p.PaymentID, p.Amount.String(), p.Currency, reason, StatusRefundRequired)
		o.Status, o.PaymentID, o.SettledAt, o.RefundReason = StatusRefundRequired, p.PaymentID, &at, reason
		topic, typ = events.TopicRefundRequested, events.TypeRefundRequested
		// The refund is of what was paid, not of what the order cost.
		ev = events.RefundRequested{OrderID: o.OrderID, EventID: o.EventID, CustomerID: o.customerID, PaymentID: p.PaymentID,
			Amount: p.Amount.String(), Currency: p.Currency, Reason: reason, At: at}
	}
	if err := queueOutbox(b, topic, o.OrderID, typ, ev); err != nil {
		return err
	}
	b.Queue("COMMIT")
	return conn.SendBatch(ctx, b).Close()
}

// queueOutbox adds the outbox row of one event to b.
func queueOutbox(b *pgx.Batch, topic, key, typ string, payload any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	b.Queue(`INSERT INTO outbox (topic, key, event_type, payload) VALUES ($1, $2, $3, $4)`, topic, key, typ, body)
	return nil
}
