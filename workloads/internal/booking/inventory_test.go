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
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// published reads what the sweeper last published, both keys in one
// MULTI/EXEC: "remaining=R held=H sold=S" ("" for a missing value).
func (e *env) published() string {
	e.t.Helper()
	ctx := context.Background()
	var rem *redis.StringCmd
	var inv *redis.SliceCmd
	_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		rem = p.Get(ctx, zone.RemainingKey(testEvent))
		inv = p.HMGet(ctx, zone.InventoryKey(testEvent), "held", "sold")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		e.t.Fatal(err)
	}
	v := inv.Val()
	return fmt.Sprintf("remaining=%s held=%v sold=%v", rem.Val(), v[0], v[1])
}

// The sweeper publishes seats held and sold next to the remaining seats
// (AVAILABLE or HELD, the queue's sold-out signal): a hold moves seats to
// held without changing remaining, a confirm moves them from held to sold
// and lowers remaining, an expired hold leaves held and returns nothing to
// sold. Each figure is checked against the seat table.
func TestSweeperPublishesInventory(t *testing.T) {
	e := newEnv(t, func(c *cfgBooking) { c.SweepInterval = 20 * time.Millisecond })
	const total = 250 // testSeating: 10×20 + 5×10
	expect := func(what string, remaining, held, sold int64) {
		t.Helper()
		want := fmt.Sprintf("remaining=%d held=%d sold=%d", remaining, held, sold)
		var got string
		testenv.WaitFor(t, 10*time.Second, what+": "+want, func() bool { got = e.published(); return got == want })
		db := fmt.Sprintf("remaining=%d held=%d sold=%d",
			e.count(`SELECT count(*) FROM seat WHERE event_id = $1 AND status <> 'SOLD'`, testEvent),
			e.count(`SELECT count(*) FROM seat WHERE event_id = $1 AND status = 'HELD'`, testEvent),
			e.count(`SELECT count(*) FROM seat WHERE event_id = $1 AND status = 'SOLD'`, testEvent))
		if db != want {
			t.Fatalf("%s: published %q but the seat table has %q", what, got, db)
		}
	}
	expect("fresh event", total, 0, 0)

	buyer := e.hold("buyer", "B-1-1", "B-1-2")
	other := e.hold("other", "A-1-1")
	expect("after 3 seats held", total, 3, 0)

	if r := e.webhook(testSecret, time.Now(), paymentBody(buyer, "pay-inventory", "90.00", "succeeded")); r.status != http.StatusOK {
		t.Fatalf("pay: %d %s", r.status, r.body)
	}
	if st := e.scalar(`SELECT status FROM ticket_order WHERE id = $1`, buyer); st != StatusPaid {
		t.Fatalf("paid order is %v", st)
	}
	expect("after a confirm of 2 held seats", total-2, 1, 2)

	expire(t, e.pool, other)
	expect("after the other hold expired", total-2, 0, 2)
	m := e.do("GET", "/metrics", nil)
	if !containsAll(string(m.body), fmt.Sprintf("ticketfair_booking_remaining_seats %d", total-2),
		fmt.Sprintf(`ticketfair_booking_seats{state="available"} %d`, total-2), `ticketfair_booking_seats{state="held"} 0`,
		`ticketfair_booking_seats{state="sold"} 2`) {
		t.Fatalf("metrics:\n%s", m.body)
	}
	// The sweeper's last success is recent: the "sweeper not running" alert reads it.
	last := httpapitest.MetricValue(t, m.body, "ticketfair_booking_sweeper_last_success_timestamp_seconds")
	if age := time.Since(time.Unix(int64(last), 0)); age < -time.Second || age > time.Minute {
		t.Fatalf("sweeper last success %v ago", age)
	}
}

// Store.Inventory counts the seats of its event by status, in one statement.
func TestStoreInventory(t *testing.T) {
	_, pool := testDB(t, testSeating)
	ctx := context.Background()
	other, err := ParseSeating("C:10.00:1:5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Seed(ctx, pool, testEvent+1, other); err != nil { // another event's seats are not counted
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		WITH o AS (INSERT INTO ticket_order (id, customer_id, event_id, session_id, status, amount, currency, hold_expires_at)
		           VALUES (gen_random_uuid(), 'c', $1, 's', 'PENDING', 0, 'EUR', now() + interval '1 hour') RETURNING id)
		UPDATE seat SET status = CASE WHEN seat_no <= 3 THEN 'SOLD' ELSE 'HELD' END, held_by = 'c',
		       order_id = (SELECT id FROM o), hold_expires_at = CASE WHEN seat_no <= 3 THEN NULL ELSE now() + interval '1 hour' END
		 WHERE event_id = $1 AND section = 'A' AND row_no = 1 AND seat_no <= 5`, testEvent); err != nil {
		t.Fatal(err)
	}
	inv, err := NewStore(pool, testEvent, 5*time.Minute, 4, "EUR").Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (zone.Inventory{Available: 245, Held: 2, Sold: 3, Holds: 1}); inv != want || inv.Remaining() != 247 {
		t.Fatalf("inventory %+v (remaining %d), want %+v (remaining 247)", inv, inv.Remaining(), want)
	}
}
