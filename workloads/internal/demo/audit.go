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

package demo

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// deadlineOf is ctx's deadline, or a minute from now.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}

// redisCounters are INFO commandstats' calls and microseconds per command
// (those run inside scripts included).
type redisCounters struct{ calls, usec map[string]int64 }

func (s *sale) redisCounters(ctx context.Context) (redisCounters, error) {
	c, err := redisconn.New(s.redisConfig())
	if err != nil {
		return redisCounters{}, err
	}
	defer c.Close()
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return redisCounters{}, err
	}
	return redisCounters{calls: scrape.CommandStats(info, "calls"), usec: scrape.CommandStats(info, "usec")}, nil
}

// queueRequests reads the queue's own count of answered requests by
// operation from its /metrics.
func queueRequests(ctx context.Context, base string) (map[string]int64, error) {
	families, err := scrape.Metrics(ctx, http.DefaultClient, base)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, m := range families["ticketfair_queue_request_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "op" {
				out[l.GetValue()] += int64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}

// ledger is what PostgreSQL says happened: the source of truth.
type ledger struct {
	Seats, SeatsSold, OrdersPaid, OrdersExpired, OrdersRefund, OrdersPending, TicketsIssued int64
	SeatsInTwoPaidOrders, SoldWithoutPaidOrder, PaidSeatsNotSold, DuplicateTickets          int64
	OutboxUnpublished                                                                       int64
}

func queryLedger(ctx context.Context, conn *pgx.Conn, eventID int64) (ledger, error) {
	var l ledger
	queries := []struct {
		dst *int64
		sql string
	}{
		{&l.Seats, `SELECT count(*) FROM seat WHERE event_id=$1`},
		{&l.SeatsSold, `SELECT count(*) FROM seat WHERE event_id=$1 AND status='SOLD'`},
		{&l.OrdersPaid, `SELECT count(*) FROM ticket_order WHERE event_id=$1 AND status='PAID'`},
		{&l.OrdersExpired, `SELECT count(*) FROM ticket_order WHERE event_id=$1 AND status='EXPIRED'`},
		{&l.OrdersRefund, `SELECT count(*) FROM ticket_order WHERE event_id=$1 AND status='REFUND_REQUIRED'`},
		{&l.OrdersPending, `SELECT count(*) FROM ticket_order WHERE event_id=$1 AND status='PENDING'`},
		{&l.TicketsIssued, `SELECT count(*) FROM ticket WHERE event_id=$1`},
		// A seat in two PAID orders.
		{&l.SeatsInTwoPaidOrders, `SELECT count(*) FROM (
			SELECT os.seat_id FROM order_seat os JOIN ticket_order o ON o.id = os.order_id
			WHERE o.event_id=$1 AND o.status='PAID' GROUP BY os.seat_id HAVING count(*) > 1) d`},
		// A SOLD seat without a PAID order.
		{&l.SoldWithoutPaidOrder, `SELECT count(*) FROM seat s WHERE s.event_id=$1 AND s.status='SOLD' AND NOT EXISTS (
			SELECT 1 FROM order_seat os JOIN ticket_order o ON o.id = os.order_id
			WHERE o.event_id=s.event_id AND os.seat_id=s.seat_id AND o.status='PAID')`},
		// A PAID order whose seat is not SOLD.
		{&l.PaidSeatsNotSold, `SELECT count(*) FROM order_seat os JOIN ticket_order o ON o.id = os.order_id
			JOIN seat s ON s.event_id=o.event_id AND s.seat_id=os.seat_id
			WHERE o.event_id=$1 AND o.status='PAID' AND s.status <> 'SOLD'`},
		{&l.DuplicateTickets, `SELECT count(*) FROM (SELECT seat_id FROM ticket WHERE event_id=$1 GROUP BY seat_id HAVING count(*) > 1) d`},
		// Every service of the demo serves one event: the whole outbox is its.
		{&l.OutboxUnpublished, `SELECT count(*) FROM outbox WHERE published_at IS NULL AND $1::bigint > 0`},
	}
	for _, q := range queries {
		if err := conn.QueryRow(ctx, q.sql, eventID).Scan(q.dst); err != nil {
			return l, fmt.Errorf("audit query %q: %w", strings.Fields(q.sql)[0:4], err)
		}
	}
	return l, nil
}

// audit is Audit on this sale, with the figures only a local sale has:
// the services' peak memory and Redis commands per request.
func (s *sale) audit(ctx context.Context, res *loadtest.Result, before, after map[string]int64) (*Report, error) {
	s.faults.mu.Lock()
	earlier := append([][]string(nil), s.faults.admitLogs...)
	s.faults.mu.Unlock()
	rep, err := Audit(ctx, AuditConfig{DatabaseURL: s.db, Redis: s.redisConfig(), EventID: s.o.EventID, MaxActive: s.o.MaxActive,
		EarlierAdmitLogs: earlier, SalesOpenAt: s.open, Phases: s.phases, Venue: s.venue}, res)
	if err != nil {
		return nil, err
	}
	rep.Customers, rep.Broker = s.o.Customers, s.broker
	rep.PeakMemoryBytes = map[string]int64{}
	for n, p := range s.procs {
		rep.PeakMemoryBytes[n] = p.peakRSS()
	}
	rep.CPUSeconds = s.cpuSeconds()
	urls := map[string]string{}
	for n, p := range s.procs {
		urls[n] = p.url
	}
	if rep.ServerLatency, rep.BookingPool, err = serverLatencies(ctx, urls); err != nil {
		rep.ServerLatencyError = err.Error()
	}
	rep.redisFigures(before, after)
	return rep, nil
}

// AuditConfig says where a sale's records are and what it promised.
type AuditConfig struct {
	DatabaseURL string
	Redis       config.Redis
	EventID     int64
	// MaxActive is the highest admission.maxActive the sale ran with.
	MaxActive int
	// MaxSeatsPerCustomer is booking's seat limit, per customer and per
	// card; 0 is booking's default.
	MaxSeatsPerCustomer int
	// EarlierAdmitLogs are the admit logs of the queue's earlier Redis
	// lifetimes (a restart without persistence starts the log afresh).
	EarlierAdmitLogs [][]string
	// SalesOpenAt, when set, times the sale's tail from the ledger
	// (Report.SellOut).
	SalesOpenAt time.Time
	// Phases, when set, are the sale's phases (Queue.Phases): the audit
	// then checks the weighted shares, the access codes and that nobody
	// was admitted before their queue opened (phases.go).
	Phases []config.Phase
	// Venue, when set, is the venue the sale seeded: its standing areas'
	// capacities (without it, the places seeded are).
	Venue *config.Venue
}

// auditCards checks by SQL that no card bought more than the seat limit
// per customer (booking's default unless cfg says), over every customer's
// paid orders: "" when none did, else the problem.
func auditCards(ctx context.Context, conn *pgx.Conn, cfg AuditConfig) (string, error) {
	limit := cfg.MaxSeatsPerCustomer
	if limit == 0 {
		var b config.Booking
		if err := config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &b); err != nil {
			return "", err
		}
		limit = b.MaxSeatsPerCustomer
	}
	var cards, worst int64
	err := conn.QueryRow(ctx, `SELECT count(*), coalesce(max(n), 0) FROM (
		SELECT count(*) AS n FROM ticket_order t JOIN order_seat os ON os.order_id = t.id
		 WHERE t.event_id = $1 AND t.status = 'PAID' AND t.card_fingerprint IS NOT NULL
		 GROUP BY t.card_fingerprint HAVING count(*) > $2) c`, cfg.EventID, limit).Scan(&cards, &worst)
	if err != nil || cards == 0 {
		return "", err
	}
	return fmt.Sprintf("%d cards bought more than the limit of %d seats (one bought %d)", cards, limit, worst), nil
}

// Audit checks a finished sale from its records and the crowd's result:
// nothing sold twice (by SQL on the ledger), one ticket per sold seat, no
// standing area oversold, no single seat stranded by best-available holds
// and a companion seat with every wheelchair place held (PlaceChecks),
// nobody admitted twice, FIFO admission after opening (from the queue's
// admit log), and no more customers active than MaxActive; with phases,
// the weighted shares, the access codes and the openings (auditPhases). It first waits
// until every paid seat has its ticket, or ctx ends. The violations are in
// Report.Problems; the error is for records that cannot be read.
func Audit(ctx context.Context, cfg AuditConfig, res *loadtest.Result) (*Report, error) {
	conn, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var l ledger
	// Waiting for the last tickets may take the whole of ctx: the checks
	// after it get their own time.
	wctx, cancel := context.WithTimeout(ctx, max(time.Until(deadlineOf(ctx))-15*time.Second, time.Second))
	defer cancel()
	for {
		if l, err = queryLedger(context.WithoutCancel(ctx), conn, cfg.EventID); err != nil {
			return nil, err
		}
		if l.TicketsIssued >= l.SeatsSold && l.OrdersPending == 0 && l.OutboxUnpublished == 0 {
			break
		}
		select {
		case <-wctx.Done():
			goto done
		case <-time.After(500 * time.Millisecond):
		}
	}
done:
	rep := &Report{
		EventID: cfg.EventID, Customers: int(res.Counts.Customers), Seats: int(l.Seats), MaxActive: cfg.MaxActive,
		SeatsSold: l.SeatsSold, OrdersPaid: l.OrdersPaid, OrdersExpired: l.OrdersExpired,
		OrdersRefundRequired: l.OrdersRefund, OrdersPending: l.OrdersPending, TicketsIssued: l.TicketsIssued,
		DoubleSold:      DoubleSold{SeatsInTwoPaidOrders: l.SeatsInTwoPaidOrders, SoldWithoutPaidOrder: l.SoldWithoutPaidOrder, PaidSeatsNotSold: l.PaidSeatsNotSold, DuplicateTickets: l.DuplicateTickets},
		Crowd:           res.Counts,
		Endpoints:       res.Endpoints,
		DurationSeconds: res.Duration.Seconds(),
	}
	if res.SoldOutAt > 0 {
		rep.TimeToSellOutSeconds = res.SoldOutAt.Seconds()
	}
	if !cfg.SalesOpenAt.IsZero() {
		sold, err := querySoldSeats(context.WithoutCancel(ctx), conn, cfg.EventID, cfg.SalesOpenAt)
		if err != nil {
			return nil, err
		}
		tail := sellOutOf(sold, int(l.Seats))
		rep.SellOut = &tail
	}
	if err := auditFairness(context.WithoutCancel(ctx), cfg, rep); err != nil {
		rep.Problems = append(rep.Problems, "fairness audit: "+err.Error())
	}
	if rep.PaidWebhooks, err = auditPaidOrders(context.WithoutCancel(ctx), conn, res.PaidOrders); err != nil {
		rep.Problems = append(rep.Problems, "paid orders audit: "+err.Error())
	}
	if res.Bots != nil {
		if rep.Bots, err = auditBots(context.WithoutCancel(ctx), conn, cfg, res.Bots); err != nil {
			rep.Problems = append(rep.Problems, "bots audit: "+err.Error())
		}
	}
	if err := auditPhases(context.WithoutCancel(ctx), cfg, res, rep); err != nil {
		rep.Problems = append(rep.Problems, "phases audit: "+err.Error())
	}
	if rep.Places, err = auditPlaces(context.WithoutCancel(ctx), conn, cfg.EventID, cfg.Venue, res); err != nil {
		rep.Problems = append(rep.Problems, "places audit: "+err.Error())
	}
	if problem, err := auditCards(context.WithoutCancel(ctx), conn, cfg); err != nil {
		rep.Problems = append(rep.Problems, "card limit audit: "+err.Error())
	} else if problem != "" {
		rep.Problems = append(rep.Problems, problem)
	}
	rep.check()
	return rep, nil
}

func auditFairness(ctx context.Context, cfg AuditConfig, rep *Report) error {
	c, err := redisconn.New(cfg.Redis)
	if err != nil {
		return err
	}
	defer c.Close()
	entries, err := c.LRange(ctx, zone.AdmitLogKey(cfg.EventID), 0, -1).Result()
	if err != nil {
		return err
	}
	// A Redis restart without persistence started the log afresh: each
	// lifetime is audited alone (arrival and queue sequences restarted),
	// and a customer in two lifetimes lost their turn and joined again.
	lifetimes := append(append([][]string(nil), cfg.EarlierAdmitLogs...), entries)
	seen := map[string]int{}
	for i, entries := range lifetimes {
		log, err := loadtest.ParseAdmissionLog(entries)
		if err != nil {
			return err
		}
		pre := int64(0)
		if i == 0 {
			pre = rep.Crowd.JoinedPreQueue
		}
		f := loadtest.ComputeFairness(log, pre)
		if i == 0 {
			rep.Fairness = f
		} else {
			rep.Fairness.Admitted += f.Admitted
			rep.Fairness.AdmittedTwice += f.AdmittedTwice
			rep.Fairness.PostOpenAdmitted += f.PostOpenAdmitted
			rep.Fairness.PostOpenInversions += f.PostOpenInversions
		}
		inLife := map[string]bool{}
		for _, a := range log {
			if !inLife[a.Customer] {
				inLife[a.Customer] = true
				seen[a.Customer]++
			}
		}
	}
	rep.RedisLifetimes = len(lifetimes)
	for _, n := range seen {
		if n > 1 {
			rep.ReadmittedAfterLoss++
		}
	}
	return nil
}

// PaidWebhooks checks the orders whose payment callback booking accepted.
type PaidWebhooks struct {
	Delivered    int64 `json:"delivered"`
	Paid         int64 `json:"paid"`
	RefundedOnce int64 `json:"refundedOnce"`
	Broken       int64 `json:"broken"` // neither PAID nor exactly one refund: must be 0
}

// auditPaidOrders: every accepted "succeeded" callback ended in a PAID order
// (and no refund) or a REFUND_REQUIRED one with exactly one refund message.
// The refunds are counted in one pass over the outbox (a count per order
// scanned it once per order: minutes at 20,000 orders).
func auditPaidOrders(ctx context.Context, conn *pgx.Conn, orders []string) (PaidWebhooks, error) {
	p := PaidWebhooks{Delivered: int64(len(orders))}
	if len(orders) == 0 {
		return p, nil
	}
	err := conn.QueryRow(ctx, `
		WITH refunds AS (
			SELECT key, count(*) AS n FROM outbox WHERE event_type = $2 GROUP BY key),
		o AS (
			SELECT t.status, coalesce(r.n, 0) AS refunds
			  FROM unnest($1::text[]) AS paid(id)
			  LEFT JOIN ticket_order t ON t.id::text = paid.id
			  LEFT JOIN refunds r ON r.key = paid.id)
		SELECT count(*) FILTER (WHERE status = 'PAID' AND refunds = 0),
		       count(*) FILTER (WHERE status = 'REFUND_REQUIRED' AND refunds = 1)
		  FROM o`, orders, events.TypeRefundRequested).Scan(&p.Paid, &p.RefundedOnce)
	p.Broken = p.Delivered - p.Paid - p.RefundedOnce
	return p, err
}
