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
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
)

func TestTailMark(t *testing.T) {
	for seats, want := range map[int]int{1: 1, 2: 2, 50: 49, 99: 98, 100: 98, 101: 99, 400: 392, 5000: 4900, 50000: 49000} {
		if got := tailMark(seats); got != want {
			t.Errorf("tailMark(%d) = %d, want %d", seats, got, want)
		}
	}
}

func TestSellOutOf(t *testing.T) {
	// 100 seats: the first 98 sold by 30 s, in no particular order, then
	// two in the tail, one of them handed back by an expired hold.
	var sold []soldSeat
	for i := range 98 {
		sold = append(sold, soldSeat{At: float64(30 - i%30)})
	}
	sold = append([]soldSeat{{At: 75.5, Expired: true, Released: true}}, sold...)
	sold = append(sold, soldSeat{At: 40, Released: true})

	got := sellOutOf(sold, 100)
	want := SellOut{Seats98Seconds: 30, Seats100Seconds: 75.5, TailSeats: 2, TailFromExpired: 1, TailFromReleased: 1}
	if got != want {
		t.Fatalf("sold out: got %+v, want %+v", got, want)
	}

	// Not sold out: the 98% mark reached, the last seat not.
	got = sellOutOf(sold[:99], 100)
	if got.Seats98Seconds != 30 || got.Seats100Seconds != 0 || got.TailSeats != 1 {
		t.Fatalf("99 of 100 sold: %+v", got)
	}
	// Below the mark: nothing to say.
	if got := sellOutOf(sold[:97], 100); got != (SellOut{}) {
		t.Fatalf("97 of 100 sold: %+v", got)
	}
	if got := sellOutOf(nil, 0); got != (SellOut{}) {
		t.Fatalf("no seats: %+v", got)
	}
}

func TestPrintSellOut(t *testing.T) {
	var b bytes.Buffer
	printSellOut(&b, &SellOut{Seats98Seconds: 35.04, Seats100Seconds: 80.81, TailSeats: 100, TailFromExpired: 87, TailFromReleased: 2})
	want := "sell-out tail\t98% of seats sold 35.0s after opening, 100% at 80.8s; of the last 100 seats, 87 came back from expired holds, 2 from released ones\n"
	if b.String() != want {
		t.Fatalf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	printSellOut(&b, &SellOut{Seats98Seconds: 12, TailSeats: 3})
	if !strings.Contains(b.String(), "not sold out") {
		t.Fatalf("not sold out: %q", b.String())
	}
	b.Reset()
	printSellOut(&b, nil)
	printSellOut(&b, &SellOut{})
	if b.Len() != 0 {
		t.Fatalf("a sale below 98%% printed %q", b.String())
	}
}

// querySoldSeats reads the real schema: when each sold seat's order was
// paid, and whether an expired or released hold had the seat before.
func TestQuerySoldSeats(t *testing.T) {
	requireServers(t)
	ctx := context.Background()
	pg, err := localsvc.StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	if err := migrations.Up(ctx, pg.URL); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	const event = 3
	open := time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for i := 1; i <= 4; i++ {
		exec(`INSERT INTO seat (event_id, seat_id, section, row_no, seat_no, price) VALUES ($1, $2, 'A', 1, $3, 10)`,
			event, fmt.Sprintf("A-1-%d", i), i)
	}
	order := func(id, status string, settled time.Duration, seats ...string) {
		t.Helper()
		var at any
		if status == "PAID" {
			at = open.Add(settled)
		}
		exec(`INSERT INTO ticket_order (id, customer_id, event_id, status, amount, currency, hold_expires_at, settled_at)
			VALUES ($1, 'buyer', $2, $3, 10, 'EUR', $4, $5)`, id, event, status, open.Add(time.Hour), at)
		for _, s := range seats {
			exec(`INSERT INTO order_seat (order_id, event_id, seat_id, section, price) VALUES ($1, $2, $3, 'A', 10)`, id, event, s)
			if status == "PAID" {
				exec(`UPDATE seat SET status = 'SOLD', order_id = $1, held_by = 'buyer' WHERE event_id = $2 AND seat_id = $3`, id, event, s)
			}
		}
	}
	// A-1-1 sold at once; A-1-2 after an expired hold; A-1-3 after a
	// released one; A-1-4 unsold, though an expired hold had it.
	order("00000000-0000-0000-0000-000000000001", "PAID", 2500*time.Millisecond, "A-1-1")
	order("00000000-0000-0000-0000-000000000002", "EXPIRED", 0, "A-1-2", "A-1-4")
	order("00000000-0000-0000-0000-000000000003", "CANCELLED", 0, "A-1-3")
	order("00000000-0000-0000-0000-000000000004", "PAID", 61*time.Second, "A-1-2", "A-1-3")
	// Another event's expired hold of the same seat id counts for nothing.
	order("00000000-0000-0000-0000-000000000005", "EXPIRED", 0)
	exec(`INSERT INTO order_seat (order_id, event_id, seat_id, section, price) VALUES ($1, 9, 'A-1-1', 'A', 10)`,
		"00000000-0000-0000-0000-000000000005")
	exec(`UPDATE ticket_order SET event_id = 9 WHERE id = $1`, "00000000-0000-0000-0000-000000000005")

	sold, err := querySoldSeats(ctx, conn, event, open)
	if err != nil {
		t.Fatal(err)
	}
	got := map[float64][]soldSeat{}
	for _, s := range sold {
		got[s.At] = append(got[s.At], s)
	}
	if len(sold) != 3 || len(got[2.5]) != 1 || got[2.5][0] != (soldSeat{At: 2.5}) || len(got[61]) != 2 {
		t.Fatalf("sold seats: %+v", sold)
	}
	var expired, released int
	for _, s := range got[61] {
		if s.Expired {
			expired++
		}
		if s.Released {
			released++
		}
	}
	if expired != 1 || released != 1 {
		t.Fatalf("the seats sold at 61 s: %+v, want one from an expired hold and one from a released one", got[61])
	}
	// 4 seats, 3 sold: 98% is all 4, never reached.
	if s := sellOutOf(sold, 4); s != (SellOut{}) {
		t.Fatalf("3 of 4 sold: %+v", s)
	}
}
