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
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// venueMaxAge is how long a CDN or browser may keep the venue layout. It
// never changes during a sale (its place ids are the seeded seats'); a new
// one comes with a new deployment, and the ETag revalidates cheaply.
const venueMaxAge = 3600

// VenueLayout is GET /events/{id}/venue: the venue as the page draws it.
// The seat map (?format=rows) says which places are free; this says where
// they are and what they cost.
type VenueLayout struct {
	EventID    int64             `json:"eventId"`
	Currency   string            `json:"currency"`
	Categories []config.Category `json:"categories"`
	Sections   []LayoutSection   `json:"sections"`
}

// LayoutSection is a seated section or a standing area.
type LayoutSection struct {
	Name     string      `json:"name"`
	Kind     string      `json:"kind"`
	Category string      `json:"category,omitempty"`
	Capacity int         `json:"capacity,omitempty"` // a standing area's
	Rows     []LayoutRow `json:"rows,omitempty"`
	X        *float64    `json:"x,omitempty"`
	Y        *float64    `json:"y,omitempty"`
}

// LayoutRow is a row of seats, left to right as seen facing the stage.
type LayoutRow struct {
	Name string `json:"name"`
	// Number is the row's number in the seat map's rows (1 for the front
	// row), which the compact seat map names rows by.
	Number   int    `json:"number"`
	Category string `json:"category"`
	// Seats are the seat numbers from the left, blocked ones included
	// (they are drawn, never sold).
	Seats []int `json:"seats"`
	// Gaps are positions (1 to len(Seats)-1) after which the row breaks.
	Gaps           []int    `json:"gaps,omitempty"`
	Blocked        []int    `json:"blocked,omitempty"`
	Wheelchair     []int    `json:"wheelchair,omitempty"`
	Companion      []int    `json:"companion,omitempty"`
	RestrictedView []int    `json:"restrictedView,omitempty"`
	Aisle          []int    `json:"aisle,omitempty"`
	X              *float64 `json:"x,omitempty"`
	Y              *float64 `json:"y,omitempty"`
	DX             *float64 `json:"dx,omitempty"`
	DY             *float64 `json:"dy,omitempty"`
}

// layoutOf is the layout of v, its prices in the seat map's form ("89.50").
func layoutOf(v config.Venue, eventID int64, currency string) (VenueLayout, error) {
	l := VenueLayout{EventID: eventID, Currency: currency, Categories: []config.Category{}, Sections: []LayoutSection{}}
	for _, c := range v.Categories {
		p, err := ParseCents(c.Price)
		if err != nil {
			return l, fmt.Errorf("category %s: price: %w", c.Name, err)
		}
		l.Categories = append(l.Categories, config.Category{Name: c.Name, Price: p.String()})
	}
	for _, s := range v.Sections {
		kind := s.Kind
		if kind == "" {
			kind = config.SectionSeated
		}
		ls := LayoutSection{Name: s.Name, Kind: kind, Category: s.Category, Capacity: s.Capacity, X: s.X, Y: s.Y}
		for j, r := range s.Rows {
			lr := LayoutRow{Name: r.Name, Number: j + 1, Category: r.Category, Seats: make([]int, r.Seats),
				Gaps: r.Gaps, Blocked: r.Blocked, Wheelchair: r.Wheelchair, Companion: r.Companion,
				RestrictedView: r.RestrictedView, Aisle: r.Aisle, X: r.X, Y: r.Y, DX: r.DX, DY: r.DY}
			if lr.Category == "" {
				lr.Category = s.Category
			}
			for p := range lr.Seats {
				lr.Seats[p] = r.Number(p + 1)
			}
			ls.Rows = append(ls.Rows, lr)
		}
		l.Sections = append(l.Sections, ls)
	}
	return l, nil
}

// layoutFromSeats is the layout of the seats seeded for eventID, for a
// booking told no venue (the seats were seeded by `ticketfair migrate` or
// a test): what the seat table keeps, so no coordinates, and a blocked
// seat shows as a gap.
func layoutFromSeats(ctx context.Context, pool *pgxpool.Pool, eventID int64, currency string) (VenueLayout, error) {
	l := VenueLayout{EventID: eventID, Currency: currency, Categories: []config.Category{}, Sections: []LayoutSection{}}
	rows, err := pool.Query(ctx, `
		SELECT section, kind, category, price::text, row_no, coalesce(row_label, row_no::text), seat_no, row_pos,
		       wheelchair, companion, restricted_view, aisle
		  FROM seat WHERE event_id = $1
		 ORDER BY min(best_order) OVER (PARTITION BY section), section, row_no, row_pos`, eventID)
	if err != nil {
		return l, err
	}
	var (
		section, kind, category, price, label string
		rowNo, seatNo, pos                    int
		wheelchair, companion, restricted     bool
		aisle                                 bool
		lastPos                               int
	)
	priced := map[string]bool{}
	_, err = pgx.ForEachRow(rows, []any{&section, &kind, &category, &price, &rowNo, &label, &seatNo, &pos,
		&wheelchair, &companion, &restricted, &aisle}, func() error {
		if !priced[category] {
			priced[category] = true
			l.Categories = append(l.Categories, config.Category{Name: category, Price: price})
		}
		if n := len(l.Sections); n == 0 || l.Sections[n-1].Name != section {
			l.Sections = append(l.Sections, LayoutSection{Name: section, Kind: config.SectionSeated, Category: category})
		}
		s := &l.Sections[len(l.Sections)-1]
		if kind == KindStanding {
			s.Kind = config.SectionStanding
			s.Capacity++
			return nil
		}
		if n := len(s.Rows); n == 0 || s.Rows[n-1].Number != rowNo {
			s.Rows = append(s.Rows, LayoutRow{Name: label, Number: rowNo, Category: category})
			lastPos = pos
		}
		r := &s.Rows[len(s.Rows)-1]
		if len(r.Seats) > 0 && pos > lastPos+1 {
			r.Gaps = append(r.Gaps, len(r.Seats))
		}
		lastPos = pos
		r.Seats = append(r.Seats, seatNo)
		for _, a := range []struct {
			on   bool
			list *[]int
		}{{wheelchair, &r.Wheelchair}, {companion, &r.Companion}, {restricted, &r.RestrictedView}, {aisle, &r.Aisle}} {
			if a.on {
				*a.list = append(*a.list, seatNo)
			}
		}
		return nil
	})
	if err != nil {
		return l, err
	}
	// The categories best first, as a venue lists them: by price.
	slices.SortStableFunc(l.Categories, func(a, b config.Category) int {
		pa, _ := ParseCents(a.Price)
		pb, _ := ParseCents(b.Price)
		return int(pb - pa)
	})
	return l, nil
}

// venue serves the layout, encoded once: from the venue booking was told
// at start (seating), else from the seeded seats, read on the first request (and again after
// a failed read).
func (s *service) venue() httpapi.HandlerFunc {
	var (
		mu   sync.Mutex
		body *httpapi.Cacheable
	)
	load := func(ctx context.Context) (*httpapi.Cacheable, error) {
		mu.Lock()
		defer mu.Unlock()
		if body != nil {
			return body, nil
		}
		var (
			l   VenueLayout
			err error
		)
		if s.seating != nil {
			l, err = layoutOf(*s.seating, s.cfg.EventID, s.store.currency)
		} else {
			l, err = layoutFromSeats(ctx, s.pool, s.cfg.EventID, s.store.currency)
		}
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		body = httpapi.NewCacheable(b, venueMaxAge)
		return body, nil
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.checkEvent(r); err != nil {
			return err
		}
		b, err := load(r.Context())
		if err != nil {
			return err
		}
		b.Serve(w, r)
		return nil
	}
}
