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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// venueDB returns the URL and a pool of a fresh, migrated database with v
// seeded for testEvent.
func venueDB(t testing.TB, v config.Venue) (string, *pgxpool.Pool) {
	t.Helper()
	if err := v.Validate(); err != nil {
		t.Fatalf("test venue: %v", err)
	}
	url, pool := testDB(t, "")
	if _, err := SeedVenue(context.Background(), pool, testEvent, v); err != nil {
		t.Fatal(err)
	}
	return url, pool
}

// testVenue has a standing floor, rows of every numbering, a gap, a
// blocked seat and a wheelchair place with its companion.
func testVenue() config.Venue {
	return config.Venue{
		Categories: []config.Category{{Name: "1", Price: "80.00"}, {Name: "2", Price: "50.50"}, {Name: "S", Price: "40"}},
		Sections: []config.VenueSection{
			{Name: "Floor", Kind: config.SectionStanding, Category: "S", Capacity: 30},
			{Name: "A", Category: "1", Rank: 1, Rows: []config.VenueRow{
				{Name: "A", Seats: 6, Numbering: config.NumberRightToLeft},
				{Name: "B", Seats: 5, Numbering: config.NumberOdd},
				{Name: "C", Seats: 4, Numbering: config.NumberEven, Category: "2"},
				{Name: "D", Seats: 7, Gaps: []int{3}, Blocked: []int{4}, Wheelchair: []int{6}, Companion: []int{7}, Aisle: []int{3}},
				{Name: "E", Seats: 3, First: 101, RestrictedView: []int{103}},
			}},
		},
	}
}

type seededPlace struct {
	id, section, row string
	rowNo, seatNo    int
	pos              *int
	price, category  string
	kind             string
	wheelchair, comp bool
	restricted, edge bool
}

func seededPlaces(t testing.TB, pool *pgxpool.Pool) map[string]seededPlace {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT seat_id, section, coalesce(row_label, ''), row_no, seat_no, row_pos,
		price::text, category, kind, wheelchair, companion, restricted_view, aisle FROM seat WHERE event_id = $1`, testEvent)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]seededPlace{}
	var p seededPlace
	if _, err := pgx.ForEachRow(rows, []any{&p.id, &p.section, &p.row, &p.rowNo, &p.seatNo, &p.pos, &p.price, &p.category, &p.kind,
		&p.wheelchair, &p.comp, &p.restricted, &p.edge}, func() error {
		out[p.id] = p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// The venue seeds its rows as numbered, blocked seats not at all, gaps as
// a break in row_pos, attributes on their seats, and a place per unit of
// a standing area's capacity.
func TestSeedVenue(t *testing.T) {
	_, pool := venueDB(t, testVenue())
	got := seededPlaces(t, pool)
	if len(got) != 30+6+5+4+6+3 {
		t.Fatalf("%d places seeded, want 54", len(got))
	}
	ids := func(prefix string) []string {
		var out []string
		for id := range got {
			if strings.HasPrefix(id, prefix) {
				out = append(out, id)
			}
		}
		slices.SortFunc(out, func(a, b string) int { return *got[a].pos - *got[b].pos })
		return out
	}
	for row, want := range map[string][]string{
		"A-A-": {"A-A-6", "A-A-5", "A-A-4", "A-A-3", "A-A-2", "A-A-1"}, // rtl
		"A-B-": {"A-B-1", "A-B-3", "A-B-5", "A-B-7", "A-B-9"},          // odd
		"A-C-": {"A-C-2", "A-C-4", "A-C-6", "A-C-8"},                   // even
		"A-D-": {"A-D-1", "A-D-2", "A-D-3", "A-D-5", "A-D-6", "A-D-7"}, // 4 blocked
		"A-E-": {"A-E-101", "A-E-102", "A-E-103"},
	} {
		if g := ids(row); !slices.Equal(g, want) {
			t.Errorf("row %s: seats left to right %v, want %v", row, g, want)
		}
	}
	// Row D: positions 1-3, the gap, then 5-7 with 4 blocked: 1 2 3 | 6 7 8.
	var dpos []int
	for _, id := range ids("A-D-") {
		dpos = append(dpos, *got[id].pos)
	}
	if want := []int{1, 2, 3, 6, 7, 8}; !slices.Equal(dpos, want) {
		t.Errorf("row D positions %v, want %v", dpos, want)
	}
	if p := got["A-D-6"]; !p.wheelchair || p.comp || !got["A-D-7"].comp || !got["A-D-3"].edge || !got["A-E-103"].restricted {
		t.Errorf("attributes: %+v %+v", p, got["A-D-7"])
	}
	if p := got["A-C-4"]; p.category != "2" || p.price != "50.50" || p.row != "C" || p.rowNo != 3 || p.kind != KindSeat {
		t.Errorf("A-C-4: %+v", p)
	}
	if p := got["Floor-30"]; p.kind != KindStanding || p.category != "S" || p.price != "40.00" || p.rowNo != 0 || *p.pos != 30 {
		t.Errorf("Floor-30: %+v", p)
	}
	if _, ok := got["A-D-4"]; ok {
		t.Error("blocked seat A-D-4 was seeded")
	}

	// Seeding again inserts nothing and keeps what is held.
	st := NewStore(pool, testEvent, 5*time.Minute, 4, "EUR")
	if _, err := st.Hold(context.Background(), "c1", "s", []string{"A-A-1"}); err != nil {
		t.Fatal(err)
	}
	if n, err := SeedVenue(context.Background(), pool, testEvent, testVenue()); err != nil || n != 0 {
		t.Fatalf("second seed: %d, %v", n, err)
	}
	var status string
	if err := pool.QueryRow(context.Background(), `SELECT status FROM seat WHERE event_id = $1 AND seat_id = 'A-A-1'`, testEvent).Scan(&status); err != nil || status != "HELD" {
		t.Fatalf("A-A-1 after reseeding: %q, %v", status, err)
	}
	// The blocked seat is never sold: not by id, not by best available.
	var unknown *UnknownSeatsError
	if _, err := st.Hold(context.Background(), "c2", "s", []string{"A-D-4"}); !errors.As(err, &unknown) {
		t.Fatalf("hold of the blocked seat: %v", err)
	}
	for i := 0; ; i++ {
		h, err := st.HoldBest(context.Background(), fmt.Sprintf("b%d", i), "s", "", "", BestRequest{Quantity: 1, Category: "1", Together: true})
		if err != nil {
			var ne *NotEnoughPlacesError
			if !errors.As(err, &ne) {
				t.Fatal(err)
			}
			break
		}
		if slices.Contains(h.Seats, "A-D-4") || slices.Contains(h.Seats, "A-D-6") {
			t.Fatalf("best available sold %v", h.Seats)
		}
	}
}

// The shorthand seeds through the venue exactly the seats it always did.
func TestSeedShorthandIdentical(t *testing.T) {
	_, pool := testDB(t, "A:89.50:3:4;B:45:2:5")
	got := seededPlaces(t, pool)
	want := map[string]seededPlace{}
	for _, s := range []Section{{"A", 8950, 3, 4}, {"B", 4500, 2, 5}} {
		for r := 1; r <= s.Rows; r++ {
			for n := 1; n <= s.SeatsPerRow; n++ {
				pos := n
				want[SeatID(s.Name, r, n)] = seededPlace{id: SeatID(s.Name, r, n), section: s.Name, row: fmt.Sprint(r), rowNo: r, seatNo: n,
					pos: &pos, price: s.Price.String(), category: s.Name, kind: KindSeat}
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d seats, want %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || g.section != w.section || g.row != w.row || g.rowNo != w.rowNo || g.seatNo != w.seatNo || *g.pos != *w.pos ||
			g.price != w.price || g.category != w.category || g.kind != w.kind {
			t.Errorf("%s: got %+v, want %+v", id, g, w)
		}
	}
}

func TestLoadVenue(t *testing.T) {
	v := testVenue()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "venue.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]config.Booking{
		"venue": {Venue: string(b)},
		"file":  {VenueFile: file},
	} {
		got, err := LoadVenue(cfg)
		if err != nil || len(got.Sections) != 2 || got.Sections[1].Rows[3].Blocked[0] != 4 {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	got, err := LoadVenue(config.Booking{Seating: "A:10:2:3"})
	if err != nil || len(got.Sections) != 1 || got.Categories[0] != (config.Category{Name: "A", Price: "10.00"}) || len(got.Sections[0].Rows) != 2 {
		t.Errorf("seating: %+v, %v", got, err)
	}
	if got, err := LoadVenue(config.Booking{}); got != nil || err != nil {
		t.Errorf("nothing set: %+v, %v", got, err)
	}
	for name, cfg := range map[string]config.Booking{
		"two set":       {Seating: "A:10:2:3", Venue: string(b)},
		"bad json":      {Venue: `{"sections": [`},
		"unknown field": {Venue: `{"categories": [], "sections": [], "stage": 1}`},
		"invalid":       {Venue: `{"categories": [{"name": "1", "price": "x"}], "sections": [{"name": "A", "category": "1", "rows": [{"name": "1", "seats": 0}]}]}`},
		"no file":       {VenueFile: filepath.Join(t.TempDir(), "none.json")},
	} {
		if _, err := LoadVenue(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "invalid" && !strings.Contains(err.Error(), "sections[0].rows[0].seats") {
			t.Errorf("invalid: %v does not name the field", err)
		}
	}
}
