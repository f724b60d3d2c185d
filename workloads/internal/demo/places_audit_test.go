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
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
)

// The places audit, by SQL on a seeded venue: a standing area sold beyond
// the capacity the venue gives, a single seat left between two
// best-available holds (and not one a hold's end left, nor one beside a
// picked seat), and a wheelchair hold without its companion.
func TestAuditPlaces(t *testing.T) {
	url, pool := migrationstest.NewDB(t)
	ctx := context.Background()
	venue := config.Venue{
		Categories: []config.Category{{Name: "1", Price: "50.00"}},
		Sections: []config.VenueSection{
			{Name: "F", Kind: config.SectionStanding, Category: "1", Capacity: 3},
			{Name: "S", Category: "1", Rows: []config.VenueRow{
				{Name: "1", Seats: 7, Wheelchair: []int{1, 7}, Companion: []int{2, 6}},
				{Name: "2", Seats: 9, Gaps: []int{6}},
			}},
		},
	}
	if _, err := booking.SeedVenue(ctx, pool, 1, venue); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	order := func(id, status string, seats ...string) string {
		t.Helper()
		_, err := conn.Exec(ctx, `WITH o AS (
			INSERT INTO ticket_order (id, customer_id, event_id, status, amount, currency, hold_expires_at)
			VALUES ($1, $4, 1, $2, 10, 'EUR', now()) RETURNING id)
			INSERT INTO order_seat (order_id, event_id, seat_id, section, price)
			SELECT o.id, 1, s, split_part(s, '-', 1), 5 FROM o, unnest($3::text[]) s`, id, status, seats, "c-"+id)
		if err == nil && status == "PAID" {
			_, err = conn.Exec(ctx, `UPDATE seat SET status = 'SOLD', order_id = $1, held_by = $3
				WHERE event_id = 1 AND seat_id = ANY ($2)`, id, seats, "c-"+id)
		}
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := func(n int) string { return "00000000-0000-0000-0000-00000000000" + string(rune('0'+n)) }
	best := []string{
		// Row 2: 1-2 and 4-5 best available, 3 left alone between them.
		order(id(1), "PAID", "S-2-1", "S-2-2"),
		order(id(2), "PAID", "S-2-4", "S-2-5"),
		// 6 and 8 best available, 7 between them, but across the aisle
		// after 6: 7 starts the segment 7-9, 8's neighbour.
		order(id(3), "PAID", "S-2-6"),
		order(id(4), "PAID", "S-2-8"),
		// Row 1: a wheelchair place with its companion; one without.
		order(id(5), "PAID", "S-1-1", "S-1-2"),
		order(id(6), "PAID", "S-1-7"),
	}
	order(id(7), "PAID", "F-1", "F-2", "F-3")
	res := &loadtest.Result{BestOrders: best}

	p, err := auditPlaces(ctx, conn, 1, &venue, res)
	if err != nil {
		t.Fatal(err)
	}
	if p.Orphans != 1 || !slices.Equal(p.OrphanSeats, []string{"S-2-3"}) {
		t.Errorf("orphans %d %v, want S-2-3 alone", p.Orphans, p.OrphanSeats)
	}
	if p.Wheelchair != 2 || p.NoCompanion != 1 || !slices.Equal(p.NoCompanionOf, []string{id(6)}) {
		t.Errorf("wheelchair holds %d, without companion %d %v", p.Wheelchair, p.NoCompanion, p.NoCompanionOf)
	}
	if len(p.Standing) != 1 || p.Standing[0] != (StandingArea{Section: "F", Capacity: 3, Seeded: 3, Sold: 3, Paid: 3}) {
		t.Errorf("standing %+v", p.Standing)
	}
	if p.Total() != 2 {
		t.Errorf("%d violations, want 2", p.Total())
	}
	problems := p.check(nil)
	if len(problems) != 2 || !strings.Contains(problems[0], "S-2-3") || !strings.Contains(problems[1], "1 of 2 wheelchair holds") {
		t.Errorf("problems %q", problems)
	}

	// A venue of a smaller floor: the places sold pass its capacity.
	small := venue
	small.Sections = slices.Clone(venue.Sections)
	small.Sections[0].Capacity = 2
	if p, err = auditPlaces(ctx, conn, 1, &small, res); err != nil || p.Standing[0].Oversold() != 1 || p.Total() != 3 {
		t.Errorf("a floor of 2 with 3 sold: %+v %v", p.Standing, err)
	}

	// The seat stranded is the pickers' when one neighbour was picked;
	// and a seat a hold had, then lost, was left by that hold's end.
	if p, err = auditPlaces(ctx, conn, 1, &venue, &loadtest.Result{BestOrders: best[1:]}); err != nil || p.Orphans != 0 {
		t.Errorf("beside a picked seat: %d orphans %v", p.Orphans, err)
	}
	order(id(8), "EXPIRED", "S-2-3")
	if p, err = auditPlaces(ctx, conn, 1, &venue, res); err != nil || p.Orphans != 0 {
		t.Errorf("a seat whose hold expired: %d orphans %v", p.Orphans, err)
	}

	var out bytes.Buffer
	printHolds(&out, loadtest.Holds{Best: loadtest.HoldCounts{Requests: 10, Held: 9, Refused: 1, NoBlock: 1, SplitsAccepted: 1}})
	if s := out.String(); !strings.Contains(s, "best available") || !strings.Contains(s, "10.0%") || !strings.Contains(s, "split held 1") {
		t.Errorf("holds table:\n%s", s)
	}
}
