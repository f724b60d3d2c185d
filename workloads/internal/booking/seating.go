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
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Section is one block of the seating: Rows rows of SeatsPerRow seats at
// one price.
type Section struct {
	Name        string
	Price       Cents
	Rows        int
	SeatsPerRow int
}

// Limits of a seating configuration, to catch typos before they seed
// millions of rows.
const (
	maxSectionName = 16
	maxRows        = 10000
	maxSeatsPerRow = 10000
	maxSeats       = 2_000_000
)

// ParseSeating parses "A:89.50:10:20;B:45.00:30:40" (name:price:rows:seatsPerRow,
// sections separated by ";").
func ParseSeating(s string) ([]Section, error) {
	var out []Section
	seen := map[string]bool{}
	total := 0
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 4 {
			return nil, fmt.Errorf("seating section %q: want name:price:rows:seatsPerRow", part)
		}
		name := strings.TrimSpace(f[0])
		if !validSectionName(name) {
			return nil, fmt.Errorf("seating section %q: name must be 1-%d letters or digits", part, maxSectionName)
		}
		if seen[name] {
			return nil, fmt.Errorf("seating section %q appears twice", name)
		}
		seen[name] = true
		price, err := ParseCents(strings.TrimSpace(f[1]))
		if err != nil {
			return nil, fmt.Errorf("seating section %s: price: %w", name, err)
		}
		rows, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil || rows < 1 || rows > maxRows {
			return nil, fmt.Errorf("seating section %s: rows must be 1-%d", name, maxRows)
		}
		per, err := strconv.Atoi(strings.TrimSpace(f[3]))
		if err != nil || per < 1 || per > maxSeatsPerRow {
			return nil, fmt.Errorf("seating section %s: seats per row must be 1-%d", name, maxSeatsPerRow)
		}
		total += rows * per
		if total > maxSeats {
			return nil, fmt.Errorf("seating has more than %d seats", maxSeats)
		}
		out = append(out, Section{Name: name, Price: price, Rows: rows, SeatsPerRow: per})
	}
	if len(out) == 0 {
		return nil, errors.New("seating is empty (want name:price:rows:seatsPerRow;...)")
	}
	return out, nil
}

func validSectionName(s string) bool {
	if s == "" || len(s) > maxSectionName {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// SeatID names seat n of row r in section s: "A-12-7".
func SeatID(section string, row, seat int) string {
	return config.SeatID(section, strconv.Itoa(row), seat)
}

// parseSeatID checks the form of a seat id, "<section>-<row>-<seat>": a
// section name, a row name of 1 to 8 letters or digits, a seat number
// without leading zeros. A standing area's places ("<area>-<n>") are held
// by count, never by id. Whether the seat exists is the database's
// business.
func parseSeatID(id string) (section string, ok bool) {
	sec, rest, ok1 := strings.Cut(id, "-")
	row, seat, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 || !validSectionName(sec) || !validRowName(row) || !positive(seat) {
		return "", false
	}
	return sec, true
}

// validRowName: 1 to 8 letters or digits.
func validRowName(s string) bool { return len(s) <= 8 && validSectionName(s) }

func positive(s string) bool {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Seed inserts the seats of the shorthand sections for eventID: SeedVenue
// of their venue (VenueOf), so both seed one way.
func Seed(ctx context.Context, pool *pgxpool.Pool, eventID int64, sections []Section) (inserted int64, err error) {
	return SeedVenue(ctx, pool, eventID, VenueOf(sections))
}

// Cents is an amount of money in hundredths, matching NUMERIC(12,2).
type Cents int64

// maxCents is the largest NUMERIC(12,2).
const maxCents = 9_999_999_999_99

// ParseCents parses a non-negative decimal with at most two fraction
// digits: "179", "179.5", "179.00".
func ParseCents(s string) (Cents, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 10 || !digits(whole) || (hasDot && (frac == "" || len(frac) > 2 || !digits(frac))) {
		return 0, fmt.Errorf("%q is not an amount with at most two decimals", s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	c := Cents(w*100 + f)
	if c > maxCents {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return c, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String formats c as "179.00".
func (c Cents) String() string {
	return fmt.Sprintf("%d.%02d", int64(c)/100, int64(c)%100)
}
