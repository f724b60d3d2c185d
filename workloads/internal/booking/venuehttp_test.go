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
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ticketfair/ticketfair/workloads/config"
)

func coord(f float64) *float64 { return &f }

// layoutVenue has a standing area, a right-to-left row with a gap, odd
// numbers, attributes and a row of its own category; its categories and
// sections are in the order the seat table ranks them, so the layout read
// back from the seats is the same but for what the table does not keep.
func layoutVenue() config.Venue {
	return config.Venue{
		Categories: []config.Category{{Name: "1", Price: "80"}, {Name: "2", Price: "50.50"}, {Name: "S", Price: "30.00"}},
		Sections: []config.VenueSection{
			{Name: "A", Category: "1", X: coord(10), Y: coord(20), Rows: []config.VenueRow{
				{Name: "A", Seats: 6, Numbering: config.NumberRightToLeft, Gaps: []int{2}, Aisle: []int{5},
					X: coord(0), Y: coord(0), DX: coord(12), DY: coord(0)},
				{Name: "B", Seats: 4, Numbering: config.NumberOdd, Wheelchair: []int{1}, Companion: []int{3}},
				{Name: "C", Seats: 3, First: 101, Category: "2", RestrictedView: []int{103}},
			}},
			{Name: "Floor", Kind: config.SectionStanding, Category: "S", Rank: 1, Capacity: 25, X: coord(50), Y: coord(5)},
		},
	}
}

func getVenue(t *testing.T, e *env, headers ...string) (response, VenueLayout) {
	t.Helper()
	r := e.do("GET", "/events/7/venue", nil, headers...)
	var l VenueLayout
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatalf("venue: %v: %s", err, r.body)
		}
	}
	return r, l
}

// The venue booking is told is served as drawn: seats left to right,
// prices, coordinates; cacheable for long, revalidated with its ETag.
func TestVenueLayout(t *testing.T) {
	v := layoutVenue()
	v.Sections[0].Rows[1].Blocked = []int{7}
	url, pool := venueDB(t, v)
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, url, pool, func(c *config.Booking) { c.Venue = string(j) })

	r, l := getVenue(t, e)
	if r.status != http.StatusOK {
		t.Fatalf("GET venue: %d %s", r.status, r.body)
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "public") || !strings.Contains(cc, "max-age=3600") {
		t.Errorf("Cache-Control %q", cc)
	}
	want := VenueLayout{EventID: testEvent, Currency: e.cfg.Currency,
		Categories: []config.Category{{Name: "1", Price: "80.00"}, {Name: "2", Price: "50.50"}, {Name: "S", Price: "30.00"}},
		Sections: []LayoutSection{
			{Name: "A", Kind: "seated", Category: "1", X: coord(10), Y: coord(20), Rows: []LayoutRow{
				{Name: "A", Number: 1, Category: "1", Seats: []int{6, 5, 4, 3, 2, 1}, Gaps: []int{2}, Aisle: []int{5},
					X: coord(0), Y: coord(0), DX: coord(12), DY: coord(0)},
				{Name: "B", Number: 2, Category: "1", Seats: []int{1, 3, 5, 7}, Blocked: []int{7}, Wheelchair: []int{1}, Companion: []int{3}},
				{Name: "C", Number: 3, Category: "2", Seats: []int{101, 102, 103}, RestrictedView: []int{103}},
			}},
			{Name: "Floor", Kind: "standing", Category: "S", Capacity: 25, X: coord(50), Y: coord(5)},
		}}
	if !reflect.DeepEqual(l, want) {
		got, _ := json.Marshal(l)
		exp, _ := json.Marshal(want)
		t.Errorf("venue\n got %s\nwant %s", got, exp)
	}

	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r, _ := getVenue(t, e, "If-None-Match", etag); r.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", r.status)
	}
	if r := e.do("GET", "/events/8/venue", nil); r.status != http.StatusNotFound || r.errCode() != "unknown_event" {
		t.Errorf("another event: %d %s", r.status, r.body)
	}
}

// Without a venue, the layout is read from the seeded seats: the same as
// the venue's but for coordinates.
func TestVenueFromSeats(t *testing.T) {
	v := layoutVenue()
	url, pool := venueDB(t, v)
	e := startEnv(t, url, pool)
	r, l := getVenue(t, e)
	if r.status != http.StatusOK {
		t.Fatalf("GET venue: %d %s", r.status, r.body)
	}
	want, err := layoutOf(v, testEvent, e.cfg.Currency)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Sections {
		s := &want.Sections[i]
		s.X, s.Y = nil, nil
		for k := range s.Rows {
			s.Rows[k].X, s.Rows[k].Y, s.Rows[k].DX, s.Rows[k].DY = nil, nil, nil, nil
		}
	}
	if !reflect.DeepEqual(l, want) {
		got, _ := json.Marshal(l)
		exp, _ := json.Marshal(want)
		t.Errorf("venue from seats\n got %s\nwant %s", got, exp)
	}

	// The shorthand's seats: a category per section, rows 1 to n.
	_, pool2 := testDB(t, "")
	sections, err := ParseSeating(testSeating)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Seed(context.Background(), pool2, testEvent, sections); err != nil {
		t.Fatal(err)
	}
	l2, err := layoutFromSeats(context.Background(), pool2, testEvent, "EUR")
	if err != nil {
		t.Fatal(err)
	}
	want2, _ := layoutOf(VenueOf(sections), testEvent, "EUR")
	if !reflect.DeepEqual(l2, want2) {
		got, _ := json.Marshal(l2)
		exp, _ := json.Marshal(want2)
		t.Errorf("shorthand from seats\n got %s\nwant %s", got, exp)
	}
}
