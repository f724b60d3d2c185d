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

package config

import (
	"strconv"
	"strings"
	"testing"
)

// validVenue is a venue with a bit of everything: a standing floor, a
// seated tier of uneven rows with each numbering, gaps and attributes.
func validVenue() Venue {
	return Venue{
		Categories: []Category{{Name: "1", Price: "89.50"}, {Name: "2", Price: "59"}, {Name: "FLOOR", Price: "49.9"}, {Name: "3", Price: "0"}},
		Sections: []VenueSection{
			{Name: "FLOOR", Kind: SectionStanding, Category: "FLOOR", Capacity: 500},
			{Name: "A", Kind: SectionSeated, Category: "1", Rank: 1, Rows: []VenueRow{
				{Name: "1", Seats: 10, Gaps: []int{5}, Wheelchair: []int{1, 10}, Companion: []int{2, 9}, Blocked: []int{5}},
				{Name: "2", Seats: 12, Numbering: NumberRightToLeft, First: 101, Aisle: []int{101, 112}},
				{Name: "3", Seats: 8, Numbering: NumberOdd, RestrictedView: []int{15}, Category: "2"},
				{Name: "4", Seats: 8, Numbering: NumberEven, Wheelchair: []int{8}, Companion: []int{6, 10}},
			}},
			{Name: "B", Rows: []VenueRow{{Name: "A", Seats: 1, Category: "2"}}},
		},
	}
}

func TestVenueValidate(t *testing.T) {
	if err := validVenue().Validate(); err != nil {
		t.Fatalf("valid venue: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(v *Venue)
		want []string // substrings of the joined error, each a problem
	}{
		{"no sections", func(v *Venue) { v.Sections = nil }, []string{"sections: no places"}},
		{"all blocked", func(v *Venue) {
			v.Sections = []VenueSection{{Name: "A", Category: "1", Rows: []VenueRow{{Name: "1", Seats: 2, Blocked: []int{1, 2}}}}}
		}, []string{"sections: no places"}},
		{"too many places", func(v *Venue) {
			rows := make([]VenueRow, MaxRows)
			for i := range rows {
				rows[i] = VenueRow{Name: strconv.Itoa(i), Seats: MaxSeatsPerRow}
			}
			v.Sections = []VenueSection{{Name: "A", Category: "1", Rows: rows}, {Name: "B", Category: "1", Rows: rows}, {Name: "C", Kind: SectionStanding, Category: "1", Capacity: 1}}
		}, []string{"sections: 2000001 places: must be at most 2000000"}},
		{"names", func(v *Venue) {
			v.Categories[3].Name = "two-"
			v.Sections[1].Name = "A_B"
			v.Sections[1].Rows[0].Name = "123456789"
		}, []string{`categories[3].name: "two-": must be 1 to 16 letters or digits`, `sections[1].name: "A_B": must be 1 to 16`, `sections[1].rows[0].name: "123456789": must be 1 to 8`}},
		{"duplicates", func(v *Venue) {
			v.Categories[3].Name = "1"
			v.Sections[2].Name = "A"
			v.Sections[1].Rows[1].Name = "1"
		}, []string{`categories[3].name: "1": duplicate category`, `sections[2].name: "A": duplicate section`, `sections[1].rows[1].name: "1": duplicate row in the section`}},
		{"prices", func(v *Venue) { v.Categories[0].Price = "89.505"; v.Categories[1].Price = "" },
			[]string{`categories[0].price: "89.505": must be a decimal with at most 2 fraction digits`, `categories[1].price: "": must be a decimal`}},
		{"kind", func(v *Venue) { v.Sections[2].Kind = "Seated" }, []string{`sections[2].kind: "Seated": must be "seated" or "standing"`}},
		{"standing", func(v *Venue) {
			v.Sections[0].Capacity = 0
			v.Sections[0].Category = ""
			v.Sections[0].Rows = []VenueRow{{Name: "1", Seats: 1}}
		}, []string{"sections[0].capacity: 0: must be 1 to 100000 for a standing section", "sections[0].rows: must be empty for a standing section", "sections[0].category: required for a standing section"}},
		{"standing too big", func(v *Venue) { v.Sections[0].Capacity = MaxStandingPlaces + 1 }, []string{"sections[0].capacity: 100001: must be 1 to 100000"}},
		{"seated", func(v *Venue) { v.Sections[2].Capacity = 10; v.Sections[2].Rows = nil },
			[]string{"sections[2].capacity: 10: only for a standing section", "sections[2].rows: 0 rows: must be 1 to 1000 for a seated section"}},
		{"too many rows", func(v *Venue) {
			v.Sections[2].Rows = make([]VenueRow, MaxRows+1)
			for i := range v.Sections[2].Rows {
				v.Sections[2].Rows[i] = VenueRow{Name: strconv.Itoa(i), Seats: 1, Category: "1"}
			}
		}, []string{"sections[2].rows: 1001 rows: must be 1 to 1000"}},
		{"seats", func(v *Venue) { v.Sections[2].Rows[0].Seats = 0; v.Sections[1].Rows[1].Seats = 1001 },
			[]string{"sections[2].rows[0].seats: 0: must be 1 to 1000", "sections[1].rows[1].seats: 1001: must be 1 to 1000"}},
		{"category", func(v *Venue) { v.Sections[1].Category = "9"; v.Sections[2].Rows[0].Category = "" },
			[]string{`sections[1].category: "9": no such category`, "sections[2].rows[0].category: required: the row's or its section's"}},
		{"numbering", func(v *Venue) { v.Sections[1].Rows[0].Numbering = "LTR" }, []string{`sections[1].rows[0].numbering: "LTR": must be "ltr", "rtl", "odd" or "even"`}},
		{"first", func(v *Venue) {
			v.Sections[1].Rows[2].First = 2
			v.Sections[1].Rows[3].First = 3
			v.Sections[1].Rows[1].First = -1
		}, []string{"sections[1].rows[2].first: 2: must be odd for odd numbering", "sections[1].rows[3].first: 3: must be even for even numbering", "sections[1].rows[1].first: -1: must be 1 to 100000"}},
		{"gaps", func(v *Venue) { v.Sections[1].Rows[0].Gaps = []int{0, 10, 3, 3} },
			[]string{"sections[1].rows[0].gaps[0]: 0: must be 1 to 9", "sections[1].rows[0].gaps[1]: 10: must be 1 to 9", "sections[1].rows[0].gaps[3]: 3: duplicate gap"}},
		{"attribute numbers", func(v *Venue) {
			v.Sections[1].Rows[1].Aisle = []int{100, 113}
			v.Sections[1].Rows[2].RestrictedView = []int{2, 17}
			v.Sections[1].Rows[3].Blocked = []int{1, 18}
			v.Sections[1].Rows[0].Blocked = []int{4, 4}
		}, []string{
			"sections[1].rows[1].aisle[0]: 100: no such seat in the row (101 to 112)", "sections[1].rows[1].aisle[1]: 113: no such seat",
			"sections[1].rows[2].restrictedView[0]: 2: no such seat in the row (odd 1 to 15)", "sections[1].rows[2].restrictedView[1]: 17: no such seat",
			"sections[1].rows[3].blocked[0]: 1: no such seat in the row (even 2 to 16)", "sections[1].rows[3].blocked[1]: 18: no such seat",
			"sections[1].rows[0].blocked[1]: 4: duplicate seat",
		}},
		{"companions", func(v *Venue) {
			// Seat 6 is across the gap after position 5 from wheelchair...
			// no: 5 is blocked, 6 has no wheelchair neighbour at all.
			v.Sections[1].Rows[0].Companion = []int{2, 6, 1}
			// Position 4 of row 4 is seat 8; 12 (position 6) is not next to it.
			v.Sections[1].Rows[3].Companion = []int{12}
		}, []string{
			"sections[1].rows[0].companion[1]: 6: must be next to a wheelchair place",
			"sections[1].rows[0].companion[2]: 1: a wheelchair place cannot be a companion seat",
			"sections[1].rows[3].companion[0]: 12: must be next to a wheelchair place",
		}},
		{"companion across a gap", func(v *Venue) {
			v.Sections[1].Rows[0].Wheelchair = []int{5}
			v.Sections[1].Rows[0].Blocked = nil
			v.Sections[1].Rows[0].Companion = []int{6, 4}
		}, []string{"sections[1].rows[0].companion[0]: 6: must be next to a wheelchair place"}},
		{"blocked", func(v *Venue) { v.Sections[1].Rows[0].Blocked = []int{1, 2} },
			[]string{"sections[1].rows[0].wheelchair[0]: 1: a blocked seat cannot be a wheelchair place", "sections[1].rows[0].companion[0]: 2: a blocked seat cannot be a companion seat"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := validVenue()
			c.edit(&v)
			err := v.Validate()
			if err == nil {
				t.Fatal("valid")
			}
			got := err.Error()
			lines := strings.Split(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			if len(lines) != len(c.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(c.want), got)
			}
		})
	}
}

// The numbering schemes: Number and Position are inverse, from the left.
func TestVenueRowNumbering(t *testing.T) {
	for _, c := range []struct {
		row  VenueRow
		want []int
	}{
		{VenueRow{Seats: 4}, []int{1, 2, 3, 4}},
		{VenueRow{Seats: 4, First: 7}, []int{7, 8, 9, 10}},
		{VenueRow{Seats: 4, Numbering: NumberRightToLeft}, []int{4, 3, 2, 1}},
		{VenueRow{Seats: 3, Numbering: NumberOdd}, []int{1, 3, 5}},
		{VenueRow{Seats: 3, Numbering: NumberEven}, []int{2, 4, 6}},
		{VenueRow{Seats: 3, Numbering: NumberEven, First: 10}, []int{10, 12, 14}},
	} {
		for pos, n := range c.want {
			if got := c.row.Number(pos + 1); got != n {
				t.Errorf("%+v: Number(%d) = %d, want %d", c.row, pos+1, got, n)
			}
			if got := c.row.Position(n); got != pos+1 {
				t.Errorf("%+v: Position(%d) = %d, want %d", c.row, n, got, pos+1)
			}
		}
		for _, n := range []int{0, c.want[0] - 1, c.want[len(c.want)-1] + 1, c.want[0] + 1000} {
			if c.row.Position(n) != 0 && !contains(c.want, n) {
				t.Errorf("%+v: Position(%d) = %d, want 0", c.row, n, c.row.Position(n))
			}
		}
	}
}

func contains(s []int, n int) bool {
	for _, x := range s {
		if x == n {
			return true
		}
	}
	return false
}
