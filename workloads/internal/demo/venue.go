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
	"math"
	"strconv"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Seatings a local sale can seed (Options.Seating).
const (
	// SeatingVenue is a concert venue (venueFor): a standing floor and
	// four seated stands of uneven rows.
	SeatingVenue = "venue"
	// SeatingSections is the shorthand's four rectangular sections, one
	// price each (seatingFor), as sales were before the venue model.
	SeatingSections = "sections"
)

// The demo venue's price categories, best first. FLOOR is the standing
// floor's own.
var venueCategories = []config.Category{
	{Name: "1", Price: "99.00"}, {Name: "FLOOR", Price: "79.00"}, {Name: "2", Price: "69.00"}, {Name: "3", Price: "45.00"},
}

// venueStand is one seated stand of the demo venue.
type venueStand struct {
	name      string
	share     float64 // of the seated places
	numbering string
	rank      int
	front     string // the category of its front rows (frontShare of them)
	back      string // of the others
}

// The stands: two lower ones beside the floor, numbered from the left and
// from the right, and two upper ones, numbered odd on the left and even on
// the right as many halls are. Category 2 spans all four.
var venueStands = []venueStand{
	{"L", 0.3, config.NumberLeftToRight, 1, "1", "2"},
	{"R", 0.3, config.NumberRightToLeft, 1, "1", "2"},
	{"UL", 0.2, config.NumberOdd, 2, "2", "3"},
	{"UR", 0.2, config.NumberEven, 2, "2", "3"},
}

const (
	floorShare = 0.3 // of the places, standing
	frontShare = 0.4 // of a stand's rows, in its front category
	aisleEvery = 20  // seats between aisles in a row
	wheelEvery = 10  // a wheelchair place and its companion every this many seats of a stand's last row
)

// venueFor is the default demo's venue of exactly seats places (at least
// 1): a standing floor of floorShare of them, the rest in venueStands.
// Each stand's rows grow by two seats from front to back, with an aisle
// every aisleEvery seats; its last row has wheelchair places, each with a
// companion seat beside it; the lower stands' second last row has two
// blocked seats in its middle (a camera platform), the row two seats
// longer so the places add up.
func venueFor(seats int) config.Venue {
	seats = max(seats, 1)
	floor := max(1, int(math.Round(float64(seats)*floorShare)))
	v := config.Venue{
		Categories: venueCategories,
		Sections: []config.VenueSection{
			{Name: "FLOOR", Kind: config.SectionStanding, Category: "FLOOR", Capacity: floor},
		},
	}
	seated := seats - floor
	left := seated
	for i, st := range venueStands {
		n := int(math.Round(float64(seated) * st.share))
		if i == len(venueStands)-1 || n > left {
			n = left
		}
		left -= n
		if n == 0 {
			continue
		}
		v.Sections = append(v.Sections, standOf(st, n))
	}
	return v
}

// standOf is stand st with n places.
func standOf(st venueStand, n int) config.VenueSection {
	lengths := rowLengths(n)
	sec := config.VenueSection{Name: st.name, Rank: st.rank, Category: st.front}
	front := int(math.Ceil(float64(len(lengths)) * frontShare))
	for j, seats := range lengths {
		r := config.VenueRow{Name: strconv.Itoa(j + 1), Seats: seats, Numbering: st.numbering}
		if j >= front {
			r.Category = st.back
		}
		// A camera platform in the lower stands' second last row.
		if st.rank == 1 && len(lengths) >= 3 && j == len(lengths)-2 && seats >= 10 {
			r.Seats += 2
			mid := r.Seats / 2
			r.Blocked = []int{r.Number(mid), r.Number(mid + 1)}
		}
		for g := aisleEvery; g < r.Seats; g += aisleEvery {
			r.Gaps = append(r.Gaps, g)
		}
		// The back row is level with the concourse: wheelchair places at
		// positions 1, 11, 21, ..., a companion seat right of each. An
		// aisle falls after a multiple of aisleEvery, never between them.
		if len(lengths) >= 2 && j == len(lengths)-1 {
			for p := 1; p+1 <= r.Seats; p += wheelEvery {
				r.Wheelchair = append(r.Wheelchair, r.Number(p))
				r.Companion = append(r.Companion, r.Number(p+1))
			}
		}
		sec.Rows = append(sec.Rows, r)
	}
	return sec
}

// rowLengths splits n seats into rows growing by two seats from the front
// (at least four seats in a row when n allows), the last row taking the
// rest: about sqrt(n)/2 rows.
func rowLengths(n int) []int {
	rows := max(1, int(math.Round(math.Sqrt(float64(n))/2)))
	for rows > 1 && (n-rows*(rows-1))/rows < 4 {
		rows--
	}
	base := (n - rows*(rows-1)) / rows
	if rows == 1 {
		return []int{n}
	}
	out := make([]int, rows)
	sum := 0
	for j := range out {
		out[j] = base + 2*j
		sum += out[j]
	}
	out[rows-1] += n - sum
	return out
}
