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

import "strconv"

// Venue is an event's places as booking seeds them and the seat map draws
// them: seated sections of rows, and standing areas sold by count, in price
// categories that cut across sections. It travels as JSON: booking's
// TICKETFAIR_VENUE, a ConfigMap the TicketEvent names, or a file given to
// `ticketfair migrate`. The operator renders it from spec.seating.
type Venue struct {
	// Categories are the price categories, best first. A place's category
	// is its row's, else its section's.
	Categories []Category `json:"categories"`
	// Sections in the order best available tries them when their ranks
	// are equal.
	Sections []VenueSection `json:"sections"`
}

// Category is a price category, e.g. "1" at 89.50.
type Category struct {
	// Name: 1 to 16 letters or digits.
	Name string `json:"name"`
	// Price of one place, a decimal with at most two fraction digits.
	Price string `json:"price"`
}

// Section kinds.
const (
	SectionSeated   = "seated"
	SectionStanding = "standing"
)

// VenueSection is a seated block of rows, or a standing area.
type VenueSection struct {
	// Name: 1 to 16 letters or digits, the prefix of its place ids.
	Name string `json:"name"`
	// Kind is "seated" (the default) or "standing".
	Kind string `json:"kind,omitempty"`
	// Category of the section's places (a row may name its own).
	Category string `json:"category,omitempty"`
	// Rank orders the sections for best available: lower is better, for
	// example the distance to the stage. Within a seated section the
	// front row comes first and, in a row, the seats nearest its middle.
	Rank int `json:"rank,omitempty"`
	// Capacity of a standing area: the places sold by count.
	Capacity int `json:"capacity,omitempty"`
	// Rows of a seated section, front first.
	Rows []VenueRow `json:"rows,omitempty"`
	// X, Y place the section on the drawn map (a standing area's centre;
	// a seated section's origin, which its rows' coordinates are relative
	// to). Without them the map falls back to one line per row.
	X *float64 `json:"x,omitempty"`
	Y *float64 `json:"y,omitempty"`
}

// Seat numbering schemes of a row, seen from the stage-facing side, left to
// right.
const (
	NumberLeftToRight = "ltr"  // first, first+1, ...
	NumberRightToLeft = "rtl"  // ..., first+1, first
	NumberOdd         = "odd"  // first, first+2, ... (first odd)
	NumberEven        = "even" // first, first+2, ... (first even)
)

// VenueRow is one row of a seated section.
type VenueRow struct {
	// Name of the row as printed on the ticket: 1 to 8 letters or digits.
	// Place ids are "<section>-<row>-<seat number>".
	Name string `json:"name"`
	// Seats in the row, counted from its left end.
	Seats int `json:"seats"`
	// Numbering is "ltr" (the default), "rtl", "odd" or "even".
	Numbering string `json:"numbering,omitempty"`
	// First is the first seat number (default 1; 2 for "even").
	First int `json:"first,omitempty"`
	// Gaps are positions (1 to Seats-1, from the left) after which the row is
	// broken, by an aisle or a pillar: the seats on either side are not
	// next to each other.
	Gaps []int `json:"gaps,omitempty"`
	// Category of the row's places (default: the section's).
	Category string `json:"category,omitempty"`
	// Seat numbers (as printed) that carry something:
	Blocked        []int `json:"blocked,omitempty"`        // not sold: a mixing desk, a camera
	Wheelchair     []int `json:"wheelchair,omitempty"`     // a wheelchair place
	Companion      []int `json:"companion,omitempty"`      // a companion's seat, next to a wheelchair place
	RestrictedView []int `json:"restrictedView,omitempty"` // sold, marked as such
	Aisle          []int `json:"aisle,omitempty"`          // on an aisle
	// X, Y of the row's leftmost seat, relative to the section; DX, DY the
	// step from one seat to the next.
	X  *float64 `json:"x,omitempty"`
	Y  *float64 `json:"y,omitempty"`
	DX *float64 `json:"dx,omitempty"`
	DY *float64 `json:"dy,omitempty"`
}

// SeatID is the id of seat number n of row in section, "<section>-<row>-<n>"
// (e.g. "Lower-12-7"): booking seeds and sells seats by it, the seat map
// and the page name them by it.
func SeatID(section, row string, n int) string {
	return section + "-" + row + "-" + strconv.Itoa(n)
}

// StandingID is the id of place n of a standing area, "<area>-<n>": held
// by count, never by id.
func StandingID(area string, n int) string { return area + "-" + strconv.Itoa(n) }
