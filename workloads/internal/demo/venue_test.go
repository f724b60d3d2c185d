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
	"testing"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// The demo venue is valid and has exactly the places asked for, from a
// test's small sale to the full scale; the default's has each thing a
// venue sells: a standing floor, rows growing toward the back, every
// numbering, aisles, blocked seats, wheelchair places with companions,
// and categories that span sections.
func TestVenueFor(t *testing.T) {
	for _, seats := range []int{1, 2, 7, 10, 50, 300, 1000, 5000, 50000, 200000} {
		v := venueFor(seats)
		if err := v.Validate(); err != nil {
			t.Fatalf("%d seats: %v", seats, err)
		}
		if got := v.Places(); got != int64(seats) {
			t.Errorf("%d seats: the venue has %d places", seats, got)
		}
	}

	v := venueFor(DefaultOptions().Seats)
	var (
		floor, wheel, companions, blocked, gaps int
		numbering                               = map[string]bool{}
		sectionsOf                              = map[string]map[string]bool{}
	)
	for _, s := range v.Sections {
		if s.Kind == config.SectionStanding {
			floor += s.Capacity
			continue
		}
		for j, r := range s.Rows {
			if j > 0 && r.Seats-len(r.Blocked) <= s.Rows[j-1].Seats-len(s.Rows[j-1].Blocked) && j < len(s.Rows)-1 {
				t.Errorf("section %s row %s: %d seats, not more than the row before", s.Name, r.Name, r.Seats)
			}
			numbering[r.Numbering] = true
			wheel += len(r.Wheelchair)
			companions += len(r.Companion)
			blocked += len(r.Blocked)
			gaps += len(r.Gaps)
			c := r.Category
			if c == "" {
				c = s.Category
			}
			if sectionsOf[c] == nil {
				sectionsOf[c] = map[string]bool{}
			}
			sectionsOf[c][s.Name] = true
		}
	}
	places := int(v.Places())
	switch {
	case floor < places/5:
		t.Errorf("a standing floor of %d of %d places", floor, places)
	case !numbering[config.NumberLeftToRight] || !numbering[config.NumberRightToLeft] || !numbering[config.NumberOdd] || !numbering[config.NumberEven]:
		t.Errorf("numberings %v", numbering)
	case wheel == 0 || companions != wheel || blocked == 0 || gaps == 0:
		t.Errorf("%d wheelchair places, %d companions, %d blocked, %d aisles", wheel, companions, blocked, gaps)
	case len(sectionsOf["2"]) < 4 || len(sectionsOf["1"]) < 2 || len(sectionsOf["3"]) < 2:
		t.Errorf("categories' sections %v", sectionsOf)
	}
}
