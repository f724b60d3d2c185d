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
	"reflect"
	"strings"
	"testing"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

func TestVenueOf(t *testing.T) {
	// The shorthand and venueFrom are no inline venue.
	for _, s := range []v1alpha1.Seating{
		{Sections: []v1alpha1.Section{{Name: "A", Price: "1", Rows: 1, SeatsPerRow: 1}}},
		{VenueFrom: &v1alpha1.VenueSource{ConfigMapKeyRef: v1alpha1.ConfigMapKey{Name: "a", Key: "v"}}},
	} {
		if _, ok, err := VenueOf(s); ok || err != nil {
			t.Fatalf("%+v: ok %v, %v", s, ok, err)
		}
	}
	if _, _, err := VenueOf(v1alpha1.Seating{Categories: []v1alpha1.PriceCategory{{Name: "1", Price: "1"}},
		VenueFrom: &v1alpha1.VenueSource{}}); err == nil || !strings.Contains(err.Error(), "spec.seating.venueFrom") {
		t.Fatalf("categories beside venueFrom: %v", err)
	}

	one := int32(1)
	s := v1alpha1.Seating{
		Categories: []v1alpha1.PriceCategory{{Name: "1", Price: "10"}},
		Sections: []v1alpha1.Section{
			{Name: "F", Kind: v1alpha1.SectionStanding, Category: "1", Capacity: 7, Rank: 1},
			{Name: "A", Kind: v1alpha1.SectionSeated, Category: "1", MapX: &one, SeatRows: []v1alpha1.SeatRow{
				{Name: "1", Seats: 3, Numbering: v1alpha1.NumberOdd, First: 3, Gaps: []int32{1}, Wheelchair: []int32{5}, Companion: []int32{7}, MapDY: &one}}},
			{Name: "B", Category: "1", Rows: 2, SeatsPerRow: 2},
		},
	}
	v, ok, err := VenueOf(s)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	f := 1.0
	want := Venue{
		Categories: []Category{{Name: "1", Price: "10"}},
		Sections: []VenueSection{
			{Name: "F", Kind: SectionStanding, Category: "1", Capacity: 7, Rank: 1},
			{Name: "A", Kind: SectionSeated, Category: "1", X: &f, Rows: []VenueRow{
				{Name: "1", Seats: 3, Numbering: NumberOdd, First: 3, Gaps: []int{1}, Wheelchair: []int{5}, Companion: []int{7}, DY: &f}}},
			{Name: "B", Kind: SectionSeated, Category: "1", Rows: []VenueRow{{Name: "1", Seats: 2}, {Name: "2", Seats: 2}}},
		},
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", v, want)
	}
	if v.Places() != 7+3+4 {
		t.Fatalf("places %d", v.Places())
	}

	// Problems name the spec's fields.
	s.Sections[1].SeatRows[0].Seats = 0
	s.Sections[0].Capacity = 0
	s.Sections[2].Price = "1"
	if _, _, err := VenueOf(s); err == nil || !strings.Contains(err.Error(), `spec.seating.sections[2].price: "1"`) {
		t.Fatalf("price beside categories: %v", err)
	}
	s.Sections[2].Price = ""
	_, ok, err = VenueOf(s)
	if ok || err == nil {
		t.Fatal("invalid venue mapped")
	}
	for _, w := range []string{"spec.seating.sections[1].seatRows[0].seats: 0: must be 1 to 1000", "spec.seating.sections[0].capacity: 0: must be 1 to 100000"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in %v", w, err)
		}
	}
}
