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
	"errors"
	"fmt"
	"strconv"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// VenueOf maps a TicketEvent's spec.seating to the venue model. It is the
// one mapping of the CRD's seating to Venue: the operator renders its
// result as booking's TICKETFAIR_VENUE.
//
// ok is false, with no error, when the seating is not an inline venue: the
// shorthand (sections of price, rows and seatsPerRow, without categories),
// which booking reads as TICKETFAIR_SEATING, or seating.venueFrom, whose
// ConfigMap booking reads and validates itself. Otherwise the venue is
// validated (Validate), and its problems name the spec's fields, such as
// "spec.seating.sections[2].seatRows[0].seats: 0: must be 1 to 1000". The
// API server's CEL rules reject most of them first; they reach here from a
// TicketEvent that bypassed them (a Go value, an older CRD) or for the few
// rules CEL cannot afford.
func VenueOf(s v1alpha1.Seating) (Venue, bool, error) {
	if s.VenueFrom != nil {
		if len(s.Sections) > 0 || len(s.Categories) > 0 {
			return Venue{}, false, errors.New("spec.seating.venueFrom: the venue comes from the ConfigMap: set no sections or categories beside it")
		}
		return Venue{}, false, nil
	}
	if len(s.Categories) == 0 {
		return Venue{}, false, nil
	}
	var v Venue
	for _, c := range s.Categories {
		v.Categories = append(v.Categories, Category{Name: c.Name, Price: c.Price})
	}
	for i, sec := range s.Sections {
		out := VenueSection{
			Name:     sec.Name,
			Kind:     SectionSeated,
			Category: sec.Category,
			Rank:     int(sec.Rank),
			Capacity: int(sec.Capacity),
			X:        coordinate(sec.MapX),
			Y:        coordinate(sec.MapY),
		}
		switch sec.Kind {
		case "", v1alpha1.SectionSeated:
		case v1alpha1.SectionStanding:
			out.Kind = SectionStanding
		default:
			out.Kind = string(sec.Kind) // Validate reports it
		}
		if sec.Price != "" {
			// The CRD forbids a price beside categories: the category has it.
			return Venue{}, false, fmt.Errorf("spec.seating.sections[%d].price: %q: with seating.categories a section's places take their category's price", i, sec.Price)
		}
		// A section of equal rows: rows rows of seatsPerRow seats, named 1
		// to rows, as in the shorthand.
		for i := int32(1); i <= sec.Rows; i++ {
			out.Rows = append(out.Rows, VenueRow{Name: strconv.Itoa(int(i)), Seats: int(sec.SeatsPerRow)})
		}
		for _, r := range sec.SeatRows {
			out.Rows = append(out.Rows, VenueRow{
				Name:           r.Name,
				Seats:          int(r.Seats),
				Numbering:      numbering(r.Numbering),
				First:          int(r.First),
				Gaps:           ints(r.Gaps),
				Category:       r.Category,
				Blocked:        ints(r.Blocked),
				Wheelchair:     ints(r.Wheelchair),
				Companion:      ints(r.Companion),
				RestrictedView: ints(r.RestrictedView),
				Aisle:          ints(r.Aisle),
				X:              coordinate(r.MapX),
				Y:              coordinate(r.MapY),
				DX:             coordinate(r.MapDX),
				DY:             coordinate(r.MapDY),
			})
		}
		v.Sections = append(v.Sections, out)
	}
	if errs := v.problems("spec.seating.", "seatRows"); len(errs) > 0 {
		return Venue{}, false, errors.Join(errs...)
	}
	return v, true, nil
}

// numbering maps the CRD's numbering (LeftToRight, ...) to the venue's
// (ltr, ...); unset stays unset, the default ltr.
func numbering(n v1alpha1.SeatNumbering) string {
	switch n {
	case v1alpha1.NumberLeftToRight:
		return NumberLeftToRight
	case v1alpha1.NumberRightToLeft:
		return NumberRightToLeft
	case v1alpha1.NumberOdd:
		return NumberOdd
	case v1alpha1.NumberEven:
		return NumberEven
	}
	return string(n) // "" or a value Validate reports
}

func ints(s []int32) []int {
	if len(s) == 0 {
		return nil
	}
	out := make([]int, len(s))
	for i, n := range s {
		out[i] = int(n)
	}
	return out
}

func coordinate(c *int32) *float64 {
	if c == nil {
		return nil
	}
	f := float64(*c)
	return &f
}
