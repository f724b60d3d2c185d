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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Place kinds, as the seat table's kind column holds them.
const (
	KindSeat     = "seat"
	KindStanding = "standing"
)

// rowStride separates the rows in best_order: a place's best_order is its
// row's rank times rowStride plus its rank in the row (migration 00017),
// so it must exceed the places of any row or standing area.
const rowStride = 100_000

// VenueOf is the venue of the shorthand sections: a category per section,
// named as the section, and rows numbered 1 to Rows of seats 1 to
// SeatsPerRow, so the seats are those Seed has always made.
func VenueOf(sections []Section) config.Venue {
	var v config.Venue
	for _, s := range sections {
		v.Categories = append(v.Categories, config.Category{Name: s.Name, Price: s.Price.String()})
		vs := config.VenueSection{Name: s.Name, Kind: config.SectionSeated, Category: s.Name}
		for r := 1; r <= s.Rows; r++ {
			vs.Rows = append(vs.Rows, config.VenueRow{Name: strconv.Itoa(r), Seats: s.SeatsPerRow})
		}
		v.Sections = append(v.Sections, vs)
	}
	return v
}

// LoadVenue is the venue booking's configuration names: the Seating
// shorthand, the Venue JSON or the file VenueFile, at most one of them;
// nil when none is set.
func LoadVenue(cfg config.Booking) (*config.Venue, error) {
	set := 0
	for _, s := range []string{cfg.Seating, cfg.Venue, cfg.VenueFile} {
		if s != "" {
			set++
		}
	}
	switch {
	case set > 1:
		return nil, errors.New("set at most one of TICKETFAIR_SEATING, TICKETFAIR_VENUE and TICKETFAIR_VENUE_FILE")
	case cfg.Seating != "":
		sections, err := ParseSeating(cfg.Seating)
		if err != nil {
			return nil, err
		}
		v := VenueOf(sections)
		return &v, nil
	case cfg.Venue != "":
		return ParseVenue([]byte(cfg.Venue), "TICKETFAIR_VENUE")
	case cfg.VenueFile != "":
		return ReadVenueFile(cfg.VenueFile)
	}
	return nil, nil
}

// ReadVenueFile reads and validates the JSON venue in the file at path.
func ReadVenueFile(path string) (*config.Venue, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("venue file: %w", err)
	}
	return ParseVenue(b, path)
}

// ParseVenue reads a JSON venue, refusing unknown fields, and validates it;
// from names where it came from in errors.
func ParseVenue(b []byte, from string) (*config.Venue, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v config.Venue
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: not a venue: %w", from, err)
	}
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return &v, nil
}

// SectionNames are the names of the venue's sections, in order.
func SectionNames(v *config.Venue) []string {
	out := make([]string, len(v.Sections))
	for i, s := range v.Sections {
		out[i] = s.Name
	}
	return out
}

// placeColumns are the columns the seeding copies, in placeRows' order.
var placeColumns = []string{"seat_id", "section", "row_no", "seat_no", "price", "category", "kind", "row_label",
	"row_pos", "best_order", "wheelchair", "companion", "restricted_view", "aisle"}

// placeRows calls emit with each place of v, in its columns' order; a
// blocked seat is none. The sections are ranked by Rank, then by their
// order in v.
func placeRows(v config.Venue, emit func([]any) error) error {
	prices := map[string]string{}
	for _, c := range v.Categories {
		p, err := ParseCents(c.Price)
		if err != nil {
			return fmt.Errorf("category %s: price: %w", c.Name, err)
		}
		prices[c.Name] = p.String()
	}
	priceOf := func(where, category string) (string, error) {
		p, ok := prices[category]
		if !ok {
			return "", fmt.Errorf("%s: no category %q", where, category)
		}
		return p, nil
	}
	order := make([]int, len(v.Sections))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return v.Sections[a].Rank - v.Sections[b].Rank })
	rowRank := int64(0)
	for _, i := range order {
		s := v.Sections[i]
		if s.Kind == config.SectionStanding {
			price, err := priceOf("section "+s.Name, s.Category)
			if err != nil {
				return err
			}
			rowRank++
			for n := 1; n <= s.Capacity; n++ {
				if err := emit([]any{config.StandingID(s.Name, n), s.Name, int32(0), int32(n), price, s.Category,
					KindStanding, nil, int32(n), rowRank*rowStride + int64(n-1), false, false, false, false}); err != nil {
					return err
				}
			}
			continue
		}
		for j, r := range s.Rows {
			rowRank++
			category := r.Category
			if category == "" {
				category = s.Category
			}
			price, err := priceOf(fmt.Sprintf("section %s row %s", s.Name, r.Name), category)
			if err != nil {
				return err
			}
			at := func(numbers []int) map[int]bool {
				m := make(map[int]bool, len(numbers))
				for _, n := range numbers {
					m[r.Position(n)] = true
				}
				return m
			}
			blocked, wheelchair, companion := at(r.Blocked), at(r.Wheelchair), at(r.Companion)
			restricted, aisle := at(r.RestrictedView), at(r.Aisle)
			// The seats nearest the row's middle first, then from the left.
			byMiddle := make([]int, r.Seats)
			for p := range byMiddle {
				byMiddle[p] = p + 1
			}
			dist := func(p int) int { return max(2*p-r.Seats-1, r.Seats+1-2*p) }
			slices.SortStableFunc(byMiddle, func(a, b int) int { return dist(a) - dist(b) })
			rank := make([]int64, r.Seats+1)
			for k, p := range byMiddle {
				rank[p] = int64(k)
			}
			gap := 0
			for p := 1; p <= r.Seats; p++ {
				if p > 1 && slices.Contains(r.Gaps, p-1) {
					gap++
				}
				if blocked[p] {
					continue
				}
				n := r.Number(p)
				if err := emit([]any{config.SeatID(s.Name, r.Name, n), s.Name, int32(j + 1), int32(n), price,
					category, KindSeat, r.Name, int32(p + gap), rowRank*rowStride + rank[p],
					wheelchair[p], companion[p], restricted[p], aisle[p]}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SeedVenue inserts the places of v for eventID: its seats, but not the
// blocked ones, and a place per unit of each standing area's capacity. It
// is idempotent: places that exist keep their status, holder and price,
// so re-running never resets a HELD or SOLD place. The rows stream
// through COPY into a temporary table, then one INSERT … ON CONFLICT DO
// NOTHING. Then it analyzes the seats, as autovacuum would soon after:
// every sale, the local one too, starts with the statistics a deployed
// sale has, in which every seat is AVAILABLE and the partial indexes on
// held and sold seats look empty (the statements that free seats are
// written for them; see releaseExpiredSeatsSQL).
func SeedVenue(ctx context.Context, pool *pgxpool.Pool, eventID int64, v config.Venue) (inserted int64, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("seed: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE seat_seed (seat_id text, section text, row_no int, seat_no int,
		price numeric(12,2), category text, kind text, row_label text, row_pos int, best_order bigint,
		wheelchair bool, companion bool, restricted_view bool, aisle bool) ON COMMIT DROP`); err != nil {
		return 0, fmt.Errorf("seed: %w", err)
	}
	// COPY pulls the rows from a goroutine that generates them, so a
	// venue of millions of places is never all in memory.
	rows := make(chan []any, 1024)
	genErr := make(chan error, 1)
	genCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(rows)
		genErr <- placeRows(v, func(row []any) error {
			select {
			case rows <- row:
				return nil
			case <-genCtx.Done():
				return genCtx.Err()
			}
		})
	}()
	var row []any
	src := pgx.CopyFromFunc(func() ([]any, error) {
		var ok bool
		if row, ok = <-rows; !ok {
			return nil, <-genErr
		}
		return row, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"seat_seed"}, placeColumns, src); err != nil {
		return 0, fmt.Errorf("seed copy: %w", err)
	}
	cols := "seat_id, section, row_no, seat_no, price, category, kind, row_label, row_pos, best_order, wheelchair, companion, restricted_view, aisle"
	tag, err := tx.Exec(ctx, `
		INSERT INTO seat (event_id, `+cols+`)
		SELECT $1, `+cols+` FROM seat_seed
		ON CONFLICT (event_id, seat_id) DO NOTHING`, eventID)
	if err != nil {
		return 0, fmt.Errorf("seed insert: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("seed commit: %w", err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE seat"); err != nil {
		return 0, fmt.Errorf("seed analyze: %w", err)
	}
	return tag.RowsAffected(), nil
}
