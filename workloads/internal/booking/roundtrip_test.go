package booking

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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

// A payment that settles an order takes five round trips (BEGIN, the
// reads, the lock with the sale, the outcome, COMMIT), four when its
// refund needs no sale; a repeat takes three (BEGIN, the reads, COMMIT).
func TestConfirmRoundTrips(t *testing.T) {
	ctx := context.Background()
	pool, rt := tracedPool(t)
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`); err != nil {
		t.Fatal(err)
	}
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	pay := func(name string, seats []string, amount func(Cents) Cents, want int64, wantStatus string) Payment {
		t.Helper()
		h, err := st.Hold(ctx, "rt-"+name, "s", seats)
		if err != nil {
			t.Fatal(err)
		}
		total, _ := ParseCents(h.Amount)
		p := Payment{OrderID: h.OrderID, IdempotencyKey: "k-" + name, PaymentID: "p-" + name, Amount: amount(total), Currency: "EUR"}
		rt.n.Store(0)
		res, err := st.Confirm(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := rt.n.Load(); got != want || res.Order.Status != wantStatus {
			t.Errorf("%s: %d round trips, order %s; want %d, %s", name, got, res.Order.Status, want, wantStatus)
		}
		rt.n.Store(0)
		if again, err := st.Confirm(ctx, p); err != nil || again.Fresh || again.Order.Status != wantStatus {
			t.Fatalf("%s repeated: %+v %v", name, again, err)
		}
		if got := rt.n.Load(); got != 3 {
			t.Errorf("%s repeated: %d round trips, want 3", name, got)
		}
		return p
	}
	same := func(c Cents) Cents { return c }
	paid := pay("paid", []string{"A-1-1", "A-1-2", "A-1-3"}, same, 5, StatusPaid)
	// A second payment for the paid order is recorded and refunded in
	// four; its repeat is answered in three.
	second := paid
	second.IdempotencyKey, second.PaymentID = "k-second", "p-second"
	for i, want := range []int64{4, 3} {
		rt.n.Store(0)
		res, err := st.Confirm(ctx, second)
		if err != nil || res.Order.RefundedPayment == nil || res.Order.RefundedPayment.Reason != ReasonOrderSettled || res.Fresh != (i == 0) {
			t.Fatalf("second payment (%d): %+v %v", i, res, err)
		}
		if got := rt.n.Load(); got != want {
			t.Errorf("second payment (%d): %d round trips, want %d", i, got, want)
		}
	}
	pay("mismatch", []string{"A-2-1"}, func(c Cents) Cents { return c + 1 }, 4, StatusRefundRequired)
	// One of two seats now held by another order: the payment sells the
	// first, finds the second gone, and its outcome's round trip rolls the
	// sale back before the refund.
	h, err := st.Hold(ctx, "rt-taken", "s", []string{"A-3-1", "A-3-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE seat SET held_by = 'other', order_id = (SELECT id FROM ticket_order WHERE customer_id = 'rt-mismatch') WHERE seat_id = 'A-3-2'`); err != nil {
		t.Fatal(err)
	}
	total, _ := ParseCents(h.Amount)
	rt.n.Store(0)
	res, err := st.Confirm(ctx, Payment{OrderID: h.OrderID, IdempotencyKey: "k-taken", PaymentID: "p-taken", Amount: total, Currency: "EUR"})
	if err != nil || res.Order.Status != StatusRefundRequired || res.Order.RefundReason != ReasonSeatTaken {
		t.Fatalf("seat taken: %+v %v", res, err)
	}
	if got := rt.n.Load(); got != 5 {
		t.Errorf("seat taken: %d round trips, want 5", got)
	}
	var seats string
	if err := pool.QueryRow(ctx, `SELECT string_agg(seat_id || ':' || status || ':' || coalesce(held_by, '-'), ' ' ORDER BY seat_id)
		FROM seat WHERE seat_id IN ('A-1-1', 'A-1-2', 'A-1-3', 'A-2-1', 'A-3-1', 'A-3-2')`).Scan(&seats); err != nil {
		t.Fatal(err)
	}
	if want := "A-1-1:SOLD:rt-paid A-1-2:SOLD:rt-paid A-1-3:SOLD:rt-paid A-2-1:AVAILABLE:- A-3-1:AVAILABLE:- A-3-2:HELD:other"; seats != want {
		t.Errorf("seats %s, want %s", seats, want)
	}
	// No order row got a MultiXact (HEAP_XMAX_IS_MULTI, 0x1000): the
	// order's UPDATE runs outside the savepoint, so a later lock of the
	// row has no members to read back.
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
}
