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
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// roundTrips counts what a pool sends to PostgreSQL: each query outside a
// batch and each batch is one round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// tracedPool is a pool on a freshly seeded database that counts its round
// trips.
func tracedPool(t *testing.T) (*pgxpool.Pool, *roundTrips) {
	t.Helper()
	url, seeded := testDB(t, testSeating)
	seeded.Close()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.ConnConfig.Tracer = rt
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, rt
}

// A payment is one round trip whatever it meets: a sale, a refund with or
// without one, a second payment for a settled order, any repeat, and each
// refusal. The outbox rows the database writes carry the answer's times.
func TestConfirmRoundTrips(t *testing.T) {
	ctx := context.Background()
	pool, rt := tracedPool(t)
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`); err != nil {
		t.Fatal(err)
	}
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	confirm := func(what string, p Payment) (*ConfirmResult, error) {
		t.Helper()
		rt.n.Store(0)
		res, err := st.Confirm(ctx, p)
		if got := rt.n.Load(); got != 1 {
			t.Errorf("%s: %d round trips, want 1", what, got)
		}
		return res, err
	}
	pay := func(name string, seats []string, amount func(Cents) Cents, wantStatus string) Payment {
		t.Helper()
		h, err := st.Hold(ctx, "rt-"+name, "s", seats)
		if err != nil {
			t.Fatal(err)
		}
		total, _ := ParseCents(h.Amount)
		p := Payment{OrderID: h.OrderID, IdempotencyKey: "k-" + name, PaymentID: "p-" + name, Amount: amount(total), Currency: "EUR"}
		res, err := confirm(name, p)
		if err != nil || !res.Fresh || res.Order.Status != wantStatus || !slices.Equal(res.Order.Seats, seats) {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
		if again, err := confirm(name+" repeated", p); err != nil || again.Fresh || again.Order.Status != wantStatus ||
			!again.Order.SettledAt.Equal(*res.Order.SettledAt) {
			t.Fatalf("%s repeated: %+v %v", name, again, err)
		}
		return p
	}
	same := func(c Cents) Cents { return c }
	paid := pay("paid", []string{"A-1-1", "A-1-2", "A-1-3"}, same, StatusPaid)
	var issued events.TicketIssued
	outboxPayload(t, pool, events.TopicTicketIssued, events.TypeTicketIssued, paid.OrderID, &issued)
	if o, err := st.Order(ctx, paid.OrderID, "rt-paid"); err != nil || !issued.PaidAt.Equal(*o.SettledAt) ||
		issued.PaidAt.Location() != time.UTC || len(issued.Seats) != 3 || issued.Seats[2].SeatID != "A-1-3" {
		t.Fatalf("ticket issued %+v for order %+v (%v)", issued, o, err)
	}
	// A second payment for the paid order is recorded and refunded; its
	// repeat is answered as it was first.
	second := paid
	second.IdempotencyKey, second.PaymentID = "k-second", "p-second"
	var first *RefundedPayment
	for i := range 2 {
		res, err := confirm("second payment", second)
		if err != nil || res.Order.RefundedPayment == nil || res.Order.RefundedPayment.Reason != ReasonOrderSettled ||
			res.Fresh != (i == 0) || res.Order.Status != StatusPaid {
			t.Fatalf("second payment (%d): %+v %v", i, res, err)
		}
		if first == nil {
			first = res.Order.RefundedPayment
		} else if *res.Order.RefundedPayment != *first {
			t.Fatalf("second payment repeated as %+v, first %+v", res.Order.RefundedPayment, first)
		}
	}
	var refund events.RefundRequested
	outboxPayload(t, pool, events.TopicRefundRequested, events.TypeRefundRequested, paid.OrderID, &refund)
	if !refund.At.Equal(first.RequestedAt) || refund.PaymentID != "p-second" || refund.Reason != ReasonOrderSettled {
		t.Fatalf("refund %+v for %+v", refund, first)
	}
	// Each refusal.
	for _, tc := range []struct {
		what string
		p    Payment
		want error
	}{
		{"settling payment under another key", Payment{OrderID: paid.OrderID, IdempotencyKey: "k-other", PaymentID: paid.PaymentID, Amount: paid.Amount, Currency: "EUR"}, ErrOrderSettled},
		{"key with another amount", Payment{OrderID: paid.OrderID, IdempotencyKey: paid.IdempotencyKey, PaymentID: paid.PaymentID, Amount: paid.Amount + 1, Currency: "EUR"}, ErrIdempotencyKeyReused},
		{"extra payment's key with another payment", Payment{OrderID: paid.OrderID, IdempotencyKey: second.IdempotencyKey, PaymentID: "p-third", Amount: paid.Amount, Currency: "EUR"}, ErrIdempotencyKeyReused},
		{"unknown order", Payment{OrderID: "5b4c1a64-2d55-4d1f-9a65-5f7d8c0e0f11", IdempotencyKey: "k-none", PaymentID: "p-none", Amount: 100, Currency: "EUR"}, ErrOrderNotFound},
	} {
		if _, err := confirm(tc.what, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, err, tc.want)
		}
	}
	pay("mismatch", []string{"A-2-1"}, func(c Cents) Cents { return c + 1 }, StatusRefundRequired)
	// One of two seats now held by another order: the payment locks both,
	// finds the second gone, sells neither and frees the first.
	h, err := st.Hold(ctx, "rt-taken", "s", []string{"A-3-1", "A-3-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE seat SET held_by = 'other', order_id = (SELECT id FROM ticket_order WHERE customer_id = 'rt-mismatch') WHERE seat_id = 'A-3-2'`); err != nil {
		t.Fatal(err)
	}
	total, _ := ParseCents(h.Amount)
	res, err := confirm("seat taken", Payment{OrderID: h.OrderID, IdempotencyKey: "k-taken", PaymentID: "p-taken", Amount: total, Currency: "EUR"})
	if err != nil || res.Order.Status != StatusRefundRequired || res.Order.RefundReason != ReasonSeatTaken {
		t.Fatalf("seat taken: %+v %v", res, err)
	}
	var seats string
	if err := pool.QueryRow(ctx, `SELECT string_agg(seat_id || ':' || status || ':' || coalesce(held_by, '-'), ' ' ORDER BY seat_id)
		FROM seat WHERE seat_id IN ('A-1-1', 'A-1-2', 'A-1-3', 'A-2-1', 'A-3-1', 'A-3-2')`).Scan(&seats); err != nil {
		t.Fatal(err)
	}
	if want := "A-1-1:SOLD:rt-paid A-1-2:SOLD:rt-paid A-1-3:SOLD:rt-paid A-2-1:AVAILABLE:- A-3-1:AVAILABLE:- A-3-2:HELD:other"; seats != want {
		t.Errorf("seats %s, want %s", seats, want)
	}
	// No order row got a MultiXact (HEAP_XMAX_IS_MULTI, 0x1000): a refused
	// sale needs no savepoint, so a later lock of the row has no members
	// to read back.
	var multi int
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM generate_series(0, pg_relation_size('ticket_order') / current_setting('block_size')::int - 1) b,
		       heap_page_items(get_raw_page('ticket_order', b::int)) WHERE t_infomask & 4096 <> 0`).Scan(&multi); err != nil {
		t.Fatal(err)
	}
	if multi != 0 {
		t.Errorf("%d order row versions with a MultiXact", multi)
	}
}

// A hold is one round trip, refused too: hold_seats names the refused
// seats that do not exist, so the service tells bad input from a taken
// seat without asking again.
func TestHoldRoundTrips(t *testing.T) {
	ctx := context.Background()
	pool, rt := tracedPool(t)
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	for _, tc := range []struct {
		name  string
		seats []string
		check func(error) bool
	}{
		{"free", []string{"A-1-1", "A-1-2"}, func(err error) bool { return err == nil }},
		{"taken", []string{"A-1-2", "A-1-3"}, func(err error) bool {
			var taken *SeatsUnavailableError
			return errors.As(err, &taken) && slices.Equal(taken.Seats, []string{"A-1-2"})
		}},
		{"unknown beside taken", []string{"A-1-2", "Z-9-8", "Z-9-9"}, func(err error) bool {
			var unknown *UnknownSeatsError
			return errors.As(err, &unknown) && slices.Equal(unknown.Seats, []string{"Z-9-8", "Z-9-9"})
		}},
	} {
		rt.n.Store(0)
		_, err := st.Hold(ctx, "rt-"+tc.name, "s", tc.seats)
		if !tc.check(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := rt.n.Load(); got != 1 {
			t.Errorf("%s: %d round trips, want 1", tc.name, got)
		}
	}
	// hold_seats itself refuses a seat named twice (the store refuses it
	// before asking), and writes nothing.
	_, err := pool.Exec(ctx, holdSQL, testEvent, uuid.New(), "rt-twice", "s", "EUR", 60000, 4, []string{"B-1-1", "B-1-1"}, nil)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != holdRefusedCode || pe.Message != "seats_unavailable" || pe.Detail != "B-1-1" || pe.Hint != "unknown:" {
		t.Errorf("a seat named twice: %v", err)
	}
	var orders int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ticket_order WHERE customer_id = 'rt-twice'`).Scan(&orders); err != nil || orders != 0 {
		t.Errorf("a refused hold left %d orders (%v)", orders, err)
	}
}

// outboxPayload decodes the payload of the last outbox row of topic and
// event type typ for order into v, and returns it.
func outboxPayload(t *testing.T, pool *pgxpool.Pool, topic, typ, order string, v any) []byte {
	t.Helper()
	var payload []byte
	if err := pool.QueryRow(context.Background(), `SELECT payload FROM outbox WHERE topic = $1 AND event_type = $2 AND key = $3 ORDER BY id DESC LIMIT 1`,
		topic, typ, order).Scan(&payload); err != nil {
		t.Fatalf("%s event for %s: %v", typ, order, err)
	}
	if err := json.Unmarshal(payload, v); err != nil {
		t.Fatalf("%s payload %s: %v", typ, payload, err)
	}
	return payload
}
