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
	"regexp"
)

// Limits of a venue, as Validate enforces them (and the CRD, where its
// validation can).
const (
	MaxVenuePlaces    = 2_000_000 // places of a venue: seats not blocked, plus standing capacity
	MaxStandingPlaces = 100_000   // capacity of one standing area
	MaxRows           = 1000      // rows of a seated section
	MaxSeatsPerRow    = 1000      // seats of a row
	MaxFirstSeat      = 100_000   // a row's first seat number
)

var (
	venueName    = regexp.MustCompile(`^[A-Za-z0-9]{1,16}$`) // a section's or a category's name (and phases[].sections')
	venueRowName = regexp.MustCompile(`^[A-Za-z0-9]{1,8}$`)
	venuePrice   = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,2})?$`)
)

// Validate reports every problem of v, joined (errors.Join), each naming
// its field as a path such as "sections[2].rows[0].seats: 0: must be 1 to
// 1000". nil: booking can seed and sell v.
func (v Venue) Validate() error {
	return errors.Join(v.problems("", "rows")...)
}

// problems lists v's problems, their paths prefixed with prefix and a
// section's rows named rowsField (the CRD names them otherwise).
func (v Venue) problems(prefix, rowsField string) []error {
	var errs []error
	add := func(path string, format string, a ...any) {
		errs = append(errs, &FieldError{Path: prefix + path, Rule: fmt.Sprintf(format, a...)})
	}

	categories := map[string]bool{}
	for i, c := range v.Categories {
		p := fmt.Sprintf("categories[%d]", i)
		switch {
		case !venueName.MatchString(c.Name):
			add(p+".name", "%q: must be 1 to 16 letters or digits", c.Name)
		case categories[c.Name]:
			add(p+".name", "%q: duplicate category", c.Name)
		}
		categories[c.Name] = true
		if !venuePrice.MatchString(c.Price) {
			add(p+".price", "%q: must be a decimal with at most 2 fraction digits, such as 89.50", c.Price)
		}
	}
	category := func(path, name string) {
		if !categories[name] {
			add(path, "%q: no such category in categories", name)
		}
	}

	var places int64
	sections := map[string]bool{}
	for i, s := range v.Sections {
		p := fmt.Sprintf("sections[%d]", i)
		switch {
		case !venueName.MatchString(s.Name):
			add(p+".name", "%q: must be 1 to 16 letters or digits", s.Name)
		case sections[s.Name]:
			add(p+".name", "%q: duplicate section", s.Name)
		}
		sections[s.Name] = true
		if s.Category != "" {
			category(p+".category", s.Category)
		}
		switch s.Kind {
		case SectionStanding:
			if s.Capacity < 1 || s.Capacity > MaxStandingPlaces {
				add(p+".capacity", "%d: must be 1 to %d for a standing section", s.Capacity, MaxStandingPlaces)
			} else {
				places += int64(s.Capacity)
			}
			if len(s.Rows) > 0 {
				add(p+"."+rowsField, "must be empty for a standing section")
			}
			if s.Category == "" {
				add(p+".category", "required for a standing section")
			}
			continue
		case "", SectionSeated:
		default:
			add(p+".kind", "%q: must be %q or %q", s.Kind, SectionSeated, SectionStanding)
			continue
		}
		if s.Capacity != 0 {
			add(p+".capacity", "%d: only for a standing section", s.Capacity)
		}
		if len(s.Rows) < 1 || len(s.Rows) > MaxRows {
			add(p+"."+rowsField, "%d rows: must be 1 to %d for a seated section", len(s.Rows), MaxRows)
		}
		rows := map[string]bool{}
		for j, r := range s.Rows {
			rp := fmt.Sprintf("%s.%s[%d]", p, rowsField, j)
			switch {
			case !venueRowName.MatchString(r.Name):
				add(rp+".name", "%q: must be 1 to 8 letters or digits", r.Name)
			case rows[r.Name]:
				add(rp+".name", "%q: duplicate row in the section", r.Name)
			}
			rows[r.Name] = true
			switch {
			case r.Category != "":
				category(rp+".category", r.Category)
			case s.Category == "":
				add(rp+".category", "required: the row's or its section's")
			}
			n, rowErrs := r.problems(rp)
			for _, err := range rowErrs {
				err.Path = prefix + err.Path
				errs = append(errs, err)
			}
			places += int64(n)
		}
	}
	switch {
	case places > MaxVenuePlaces:
		add("sections", "%d places: must be at most %d", places, MaxVenuePlaces)
	case places == 0 && len(errs) == 0:
		add("sections", "no places: the venue needs at least one seat or standing place")
	}
	return errs
}

// problems lists r's problems, path being the row's, and counts its
// places: seats not blocked (0 when the row is not valid).
func (r VenueRow) problems(path string) (int, []*FieldError) {
	var errs []*FieldError
	add := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Path: path + "." + field, Rule: fmt.Sprintf(format, a...)})
	}
	if r.Seats < 1 || r.Seats > MaxSeatsPerRow {
		add("seats", "%d: must be 1 to %d", r.Seats, MaxSeatsPerRow)
	}
	switch r.Numbering {
	case "", NumberLeftToRight, NumberRightToLeft, NumberOdd, NumberEven:
	default:
		add("numbering", "%q: must be %q, %q, %q or %q", r.Numbering, NumberLeftToRight, NumberRightToLeft, NumberOdd, NumberEven)
	}
	switch {
	case r.First < 0 || r.First > MaxFirstSeat:
		add("first", "%d: must be 1 to %d", r.First, MaxFirstSeat)
	case r.First != 0 && r.Numbering == NumberOdd && r.First%2 == 0:
		add("first", "%d: must be odd for odd numbering", r.First)
	case r.First != 0 && r.Numbering == NumberEven && r.First%2 != 0:
		add("first", "%d: must be even for even numbering", r.First)
	}
	if len(errs) > 0 {
		return 0, errs
	}

	gaps := map[int]bool{}
	for i, g := range r.Gaps {
		switch {
		case g < 1 || g > r.Seats-1:
			add(fmt.Sprintf("gaps[%d]", i), "%d: must be 1 to %d, a position after which the row breaks", g, r.Seats-1)
		case gaps[g]:
			add(fmt.Sprintf("gaps[%d]", i), "%d: duplicate gap", g)
		}
		gaps[g] = true
	}

	// positions checks the seat numbers of one attribute and returns their
	// positions in the row (1 to Seats, from the left).
	positions := func(field string, numbers []int) map[int]bool {
		out := map[int]bool{}
		for i, n := range numbers {
			pos := r.Position(n)
			switch {
			case pos == 0:
				add(fmt.Sprintf("%s[%d]", field, i), "%d: no such seat in the row (%s)", n, r.numbers())
			case out[pos]:
				add(fmt.Sprintf("%s[%d]", field, i), "%d: duplicate seat", n)
			}
			if pos != 0 {
				out[pos] = true
			}
		}
		return out
	}
	blocked := positions("blocked", r.Blocked)
	wheelchair := positions("wheelchair", r.Wheelchair)
	positions("companion", r.Companion)
	positions("restrictedView", r.RestrictedView)
	positions("aisle", r.Aisle)

	for i, n := range r.Wheelchair {
		if pos := r.Position(n); pos != 0 && blocked[pos] {
			add(fmt.Sprintf("wheelchair[%d]", i), "%d: a blocked seat cannot be a wheelchair place", n)
		}
	}
	for i, n := range r.Companion {
		pos := r.Position(n)
		switch {
		case pos == 0:
		case blocked[pos]:
			add(fmt.Sprintf("companion[%d]", i), "%d: a blocked seat cannot be a companion seat", n)
		case wheelchair[pos]:
			add(fmt.Sprintf("companion[%d]", i), "%d: a wheelchair place cannot be a companion seat", n)
		case !(pos > 1 && !gaps[pos-1] && wheelchair[pos-1]) && !(pos < r.Seats && !gaps[pos] && wheelchair[pos+1]):
			add(fmt.Sprintf("companion[%d]", i), "%d: must be next to a wheelchair place of the row", n)
		}
	}
	return r.Seats - len(blocked), errs
}

// Places counts the venue's places: the seats not blocked plus the
// standing capacity.
func (v Venue) Places() int64 {
	var n int64
	for _, s := range v.Sections {
		if s.Kind == SectionStanding {
			n += int64(s.Capacity)
			continue
		}
		for _, r := range s.Rows {
			blocked := map[int]bool{}
			for _, b := range r.Blocked {
				if r.Position(b) != 0 {
					blocked[b] = true
				}
			}
			n += int64(r.Seats - len(blocked))
		}
	}
	return n
}

// FirstNumber is the row's first seat number: First, by default 1 (2 for
// even numbering).
func (r VenueRow) FirstNumber() int {
	switch {
	case r.First != 0:
		return r.First
	case r.Numbering == NumberEven:
		return 2
	}
	return 1
}

// Number is the seat number at position pos (1 to Seats, from the left).
func (r VenueRow) Number(pos int) int {
	first := r.FirstNumber()
	switch r.Numbering {
	case NumberRightToLeft:
		return first + r.Seats - pos
	case NumberOdd, NumberEven:
		return first + 2*(pos-1)
	}
	return first + pos - 1
}

// Position is the position (1 to Seats, from the left) of seat number n,
// 0 if the row has no such seat.
func (r VenueRow) Position(n int) int {
	first := r.FirstNumber()
	var pos int
	switch r.Numbering {
	case NumberRightToLeft:
		pos = first + r.Seats - n
	case NumberOdd, NumberEven:
		if (n-first)%2 != 0 {
			return 0
		}
		pos = (n-first)/2 + 1
	default:
		pos = n - first + 1
	}
	if n < first || pos < 1 || pos > r.Seats {
		return 0
	}
	return pos
}

// numbers describes the row's seat numbers, e.g. "1 to 30" or "odd 1 to 59".
func (r VenueRow) numbers() string {
	lo, hi := r.Number(1), r.Number(r.Seats)
	if lo > hi {
		lo, hi = hi, lo
	}
	if r.Numbering == NumberOdd || r.Numbering == NumberEven {
		return fmt.Sprintf("%s %d to %d", r.Numbering, lo, hi)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
