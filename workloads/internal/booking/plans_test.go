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
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestOrderLookupsUsePrimaryKey: the lookups of an order by id and event
// use the primary key in the generic plan a connection settles on after a
// few executions, also while ticket_order has never been analyzed, as in a
// sale's first minute. An index leading with event_id once tied with the
// primary key there, and connections that kept it read every order of the
// event for each payment.
func TestOrderLookupsUsePrimaryKey(t *testing.T) {
	ctx := context.Background()
	url, pool := testDB(t, "A:10.00:10:10")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	run := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	run("SET plan_cache_mode = force_generic_plan")
	check := func(stage string) {
		t.Helper()
		for name, q := range map[string]string{"lockOrderSQL": lockOrderSQL, "orderSQL": orderSQL, "orderStatusSQL": orderStatusSQL} {
			run("PREPARE lookup AS " + q)
			rows, err := conn.Query(ctx, "EXPLAIN EXECUTE lookup('00000000-0000-4000-8000-000000000001', 1)")
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			run("DEALLOCATE lookup")
			if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Index Scan using ticket_order_pkey") {
				t.Errorf("%s, %s: generic plan\n%s", stage, name, plan)
			}
		}
	}
	check("empty, never analyzed")
	if _, err := pool.Exec(ctx, `INSERT INTO ticket_order (id, customer_id, event_id, amount, currency, hold_expires_at)
		SELECT gen_random_uuid(), 'c' || g, $1, 10, 'EUR', now() FROM generate_series(1, 20000) g`, testEvent); err != nil {
		t.Fatal(err)
	}
	check("20,000 orders")
	run("ANALYZE ticket_order")
	check("20,000 orders, analyzed")
}

// TestReleasesReadSeatsByKey: the sweeper frees a batch of expired holds'
// seats through the primary key, and the release of one order finds its
// seats through seat_order, in custom and generic plans, with the
// statistics autovacuum takes once the seats are seeded, before the sale
// (every seat AVAILABLE), and thousands of seats held since. With a check
// on status in their statements the planner read the seats through a
// partial index on status, which those statistics show as empty: every
// held seat was tested against the batch, or read for each release.
func TestReleasesReadSeatsByKey(t *testing.T) {
	ctx := context.Background()
	url, pool := testDB(t, "A:10.00:100:100")
	if _, err := pool.Exec(ctx, "ANALYZE seat"); err != nil {
		t.Fatal(err)
	}
	const held = 6000
	if _, err := pool.Exec(ctx, `
		WITH o AS (INSERT INTO ticket_order (id, customer_id, event_id, amount, currency, hold_expires_at)
		           VALUES (gen_random_uuid(), 'c', $1, 10, 'EUR', now() - interval '1 minute') RETURNING id)
		UPDATE seat SET status = 'HELD', held_by = 'c', order_id = (SELECT id FROM o), hold_expires_at = now() - interval '1 minute'
		 WHERE event_id = $1 AND row_no <= $2`, testEvent, held/100); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var order string
	if err := pool.QueryRow(ctx, "SELECT id::text FROM ticket_order WHERE customer_id = 'c'").Scan(&order); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		// The sweeper's update reads the claimed seats by primary key.
		plan := explainPrepared(t, conn, releaseExpiredSeatsSQL, fmt.Sprintf("%d, 1000", testEvent))
		if got := scans(plan, false); len(got) != 1 || got[0] != "Index Scan seat_pkey" {
			t.Errorf("%s: the sweeper's update reads the seats by %v, want the primary key; plan %v", mode, got, plan)
		}
		// A release of one order reads its seats by seat_order.
		plan = explainPrepared(t, conn, releaseSeatsSQL, "'"+order+"'")
		got := scans(plan, true)
		if !slices.Contains(got, "Index Scan seat_order") {
			t.Errorf("%s: an order's release reads its seats by %v, want seat_order; plan %v", mode, got, plan)
		}
		for _, g := range got {
			if g != "Index Scan seat_order" && g != "Index Scan seat_pkey" {
				t.Errorf("%s: an order's release reads seats by %s; plan %v", mode, g, plan)
			}
		}
	}
	st := NewStore(pool, testEvent, time.Minute, 4, "EUR")
	seats, orders, _, err := st.Sweep(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if seats != held || orders != 1 {
		t.Errorf("swept %d seats and %d orders, want %d and 1", seats, orders, held)
	}
	var left int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM seat WHERE event_id = $1 AND status <> 'AVAILABLE'", testEvent).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d seats still held (%v)", left, err)
	}
}

// explainPrepared prepares sql, explains its execution with args as JSON,
// and deallocates it.
func explainPrepared(t *testing.T, conn *pgx.Conn, sql, args string) map[string]any {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "PREPARE explained AS "+sql); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := conn.Exec(ctx, "DEALLOCATE explained"); err != nil {
			t.Fatal(err)
		}
	}()
	var plan []map[string]any
	if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE explained("+args+")").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	top, _ := plan[0]["Plan"].(map[string]any)
	return top
}

// scans lists the scans of tables under a plan's top node as "Node Type
// Index Name": every one when deep, else those of its direct children that
// are not InitPlans.
func scans(node map[string]any, deep bool) []string {
	var out []string
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		c, _ := c.(map[string]any)
		if !deep && c["Parent Relationship"] == "InitPlan" {
			continue
		}
		if _, table := c["Relation Name"]; table {
			out = append(out, fmt.Sprint(c["Node Type"], " ", c["Index Name"]))
		}
		if deep {
			out = append(out, scans(c, true)...)
		}
	}
	return out
}

// TestFunctionsReadSeatsByKey: every statement hold_seats and
// confirm_payment run reads the seat table by an index (the primary key or
// seat_order), on each of their paths, in generic plans, with the
// statistics of the seeded seats (every seat AVAILABLE) and thousands held
// since, as in a sale's first minutes. auto_explain sends the plans of the
// functions' statements to the session as notices.
func TestFunctionsReadSeatsByKey(t *testing.T) {
	ctx := context.Background()
	url, pool := testDB(t, "A:10.00:100:100")
	if _, err := pool.Exec(ctx, `
		WITH o AS (INSERT INTO ticket_order (id, customer_id, event_id, amount, currency, hold_expires_at)
		           VALUES (gen_random_uuid(), 'c', $1, 10, 'EUR', now() + interval '1 hour') RETURNING id)
		UPDATE seat SET status = 'HELD', held_by = 'c', order_id = (SELECT id FROM o), hold_expires_at = now() + interval '1 hour'
		 WHERE event_id = $1 AND row_no > 40`, testEvent); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		plans []string
	)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if _, plan, ok := strings.Cut(n.Message, "plan:\n"); ok {
			mu.Lock()
			plans = append(plans, plan)
			mu.Unlock()
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_nested_statements = on",
		"SET auto_explain.log_format = json", "SET auto_explain.log_analyze = on", "SET auto_explain.log_level = notice", "SET plan_cache_mode = force_generic_plan"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st := NewStore(pool, testEvent, time.Hour, 4, "EUR")
	logPlans := false
	// explained runs sql on conn, checks how its statements read seats and
	// returns hold_seats's refusal, if it refused.
	explained := func(what, sql string, args ...any) error {
		t.Helper()
		mu.Lock()
		plans = nil
		mu.Unlock()
		_, err := conn.Exec(ctx, sql, args...)
		if err != nil && !holdRefused(err) {
			t.Fatalf("%s: %v", what, err)
		}
		mu.Lock()
		defer mu.Unlock()
		var reads []string
		for _, p := range plans {
			var e struct {
				Query string         `json:"Query Text"`
				Plan  map[string]any `json:"Plan"`
			}
			if err := json.Unmarshal([]byte(p), &e); err != nil {
				t.Fatalf("%s: plan %q: %v", what, p, err)
			}
			if logPlans {
				t.Logf("%s: %.3f ms, seats read by %v: %.120s", what, e.Plan["Actual Total Time"], seatScans(e.Plan),
					strings.Join(strings.Fields(e.Query), " "))
			}
			for _, r := range seatScans(e.Plan) {
				// A bitmap heap scan reads the rows its bitmap index scan
				// (listed too) found.
				if !strings.HasPrefix(r, "Index Scan ") && !strings.HasPrefix(r, "Index Only Scan ") &&
					!strings.HasPrefix(r, "Bitmap Index Scan ") && !strings.HasPrefix(r, "Bitmap Heap Scan ") {
					t.Errorf("%s: %s reads seats by %s:\n%s", what, e.Query, r, p)
				}
				reads = append(reads, r)
			}
		}
		if len(reads) == 0 {
			t.Errorf("%s: no plan read seats in %d plans", what, len(plans))
		}
		return err
	}
	if err := explained("hold", holdSQL, testEvent, uuid.New(), "cr-hold", "s", "EUR", 60000, 4, []string{"A-4-1", "A-4-2"}, nil); err != nil {
		t.Fatalf("hold: %v", err)
	}
	if err := explained("hold refused", holdSQL, testEvent, uuid.New(), "cr-refused", "s", "EUR", 60000, 4, []string{"A-4-2", "A-4-3"}, nil); err == nil {
		t.Fatal("a hold of a held seat stood")
	}
	// Best available (hold_best with seat_blocks and lock_block), on a
	// section 40% held: -v logs each statement's seat reads and time.
	logPlans = true
	if err := explained("best available", holdBestSQL, testEvent, uuid.New(), "cr-best", "s", "EUR", 60000, 4, 2, "A",
		nil, nil, true, 0, nil); err != nil {
		t.Fatalf("best available: %v", err)
	}
	logPlans = false
	confirm := func(what string, seats []string, amount func(Cents) Cents, taken bool) {
		t.Helper()
		h, err := st.Hold(ctx, "cr-"+what, "s", seats)
		if err != nil {
			t.Fatal(err)
		}
		if taken {
			if _, err := pool.Exec(ctx, `UPDATE seat SET order_id = (SELECT id FROM ticket_order WHERE customer_id = 'c') WHERE event_id = $1 AND seat_id = $2`,
				testEvent, seats[len(seats)-1]); err != nil {
				t.Fatal(err)
			}
		}
		total, _ := ParseCents(h.Amount)
		if err := explained(what, confirmSQL, testEvent, h.OrderID, "k-"+what, "p-"+what, amount(total).String(), "EUR", 4, "card-"+what); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	same := func(c Cents) Cents { return c }
	confirm("paid", []string{"A-1-1", "A-1-2"}, same, false)
	confirm("taken", []string{"A-2-1", "A-2-2"}, same, true)
	confirm("mismatch", []string{"A-3-1"}, func(c Cents) Cents { return c + 1 }, false)
}

// holdRefused tells whether err is hold_seats's refusal.
func holdRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == holdRefusedCode
}

// seatScans lists the scans of the seat table in a plan, its own node
// included, as "Node Type Index Name".
func seatScans(node map[string]any) []string {
	var out []string
	if (node["Relation Name"] == "seat" && node["Node Type"] != "ModifyTable") || (node["Node Type"] == "Bitmap Index Scan" && strings.HasPrefix(fmt.Sprint(node["Index Name"]), "seat_")) {
		out = append(out, fmt.Sprint(node["Node Type"], " ", node["Index Name"]))
	}
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		c, _ := c.(map[string]any)
		out = append(out, seatScans(c)...)
	}
	return out
}
