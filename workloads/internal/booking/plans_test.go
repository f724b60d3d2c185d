package booking

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
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
