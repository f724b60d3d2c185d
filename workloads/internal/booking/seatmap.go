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
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// SectionSummary counts the seats of one section.
type SectionSummary struct {
	Name      string `json:"name"`
	Price     string `json:"price"`
	Total     int    `json:"total"`
	Available int    `json:"available"`
	Held      int    `json:"held"`
	Sold      int    `json:"sold"`
}

// SeatState is one seat in the seat map.
type SeatState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// SeatRow is one row of the compact seat map (?format=rows): one character
// per seat number from First on, 'A' available, 'H' held, 'S' sold, '-' no
// such seat. Seat ids are "<section>-<row>-<number>".
type SeatRow struct {
	Section string `json:"section"`
	Row     int    `json:"row"`
	First   int    `json:"first"`
	Seats   string `json:"seats"`
}

// seatRowsBody is the compact seat map: at 50,000 seats about 20 times
// smaller than an object per seat, before gzip.
type seatRowsBody struct {
	EventID  int64            `json:"eventId"`
	AsOf     time.Time        `json:"asOf"`
	Currency string           `json:"currency"`
	Sections []SectionSummary `json:"sections"`
	Rows     []SeatRow        `json:"rows"`
}

type seatMapBody struct {
	EventID  int64            `json:"eventId"`
	AsOf     time.Time        `json:"asOf"`
	Currency string           `json:"currency"`
	Sections []SectionSummary `json:"sections"`
	Seats    []SeatState      `json:"seats"`
}

// seatSnapshot is one rendering of the seat map, encoded once per refresh
// rather than once per request. The compact form (rows), which the page and
// the crowd read, is encoded with the snapshot; the object-per-seat form is
// encoded when first asked for.
type seatSnapshot struct {
	at     time.Time
	layout *seatLayout
	codes  []byte // each seat's state in layout order: asOf only moves when they change
	rows   *httpapi.Cacheable
	rowsBy map[string]*httpapi.Cacheable
	// perSeat is shared by the snapshots of unchanged states.
	perSeat *perSeatForm
}

// perSeatForm is the object-per-seat seat map of one set of states.
type perSeatForm struct {
	once      sync.Once
	body      seatMapBody
	all       *httpapi.Cacheable
	bySection map[string]*httpapi.Cacheable
	err       error
}

// objects is the object-per-seat form, the whole map and each section.
func (s *seatSnapshot) objects() (*httpapi.Cacheable, map[string]*httpapi.Cacheable, error) {
	f := s.perSeat
	f.once.Do(func() {
		f.bySection = map[string]*httpapi.Cacheable{}
		body := f.body
		body.Seats = make([]SeatState, 0, len(s.codes))
		// The summaries are in layout order, a section each.
		for k, sum := range f.body.Sections {
			one := f.body
			one.Sections = []SectionSummary{sum}
			span := s.layout.sections[k]
			for i := span.from; i < span.to; i++ {
				one.Seats = append(one.Seats, SeatState{ID: s.layout.seats[i].id, Status: seatStatus[s.codes[i]]})
			}
			if f.bySection[sum.Name], f.err = cacheable(one); f.err != nil {
				return
			}
			body.Seats = append(body.Seats, one.Seats...)
		}
		f.all, f.err = cacheable(body)
	})
	return f.all, f.bySection, f.err
}

// seatLayout is the event's seats in map order (section, row, number) with
// their prices. Seeded once, it is read once; a refresh reads only each
// seat's state.
type seatLayout struct {
	seats    []layoutSeat
	index    map[string]int // seat id → position in seats
	sections []seatSpan     // in map order
}

type layoutSeat struct {
	id, section, price string
	row, number        int
}

// seatSpan is a section's positions in the layout, [from, to).
type seatSpan struct {
	name     string
	from, to int
}

// errLayoutChanged says a refresh met seats its layout does not have.
var errLayoutChanged = errors.New("the event's seats differ from the seat map's layout")

var seatStatus = map[byte]string{'A': "AVAILABLE", 'H': "HELD", 'S': "SOLD"}

// seatMapMaxAge is how long a CDN or browser may reuse a seat map.
const seatMapMaxAge = 1

// seatStaleFactor bounds how old a snapshot may be served while a refresh
// runs: that many refresh intervals.
const seatStaleFactor = 5

// seatCache serves the seat map from a snapshot refreshed once it is
// maxAge old. A snapshot up to seatStaleFactor times that old starts one
// refresh in the background and is served until that refresh lands:
// requests must not queue behind a refresh, which reads every seat and
// under a sale's load takes a good part of a second. An older snapshot,
// after a quiet spell, is refreshed first, so the first request after it
// sees the seats as they are. The hold's conditional UPDATE is what
// decides; a stale map costs a conflict at most.
type seatCache struct {
	store  *Store
	maxAge time.Duration
	snap   atomic.Pointer[seatSnapshot]
	layout atomic.Pointer[seatLayout]
	mu     sync.Mutex // one refresh at a time
}

// seatRefreshTimeout bounds a background refresh.
const seatRefreshTimeout = 10 * time.Second

func (c *seatCache) get(ctx context.Context) (*seatSnapshot, error) {
	if s := c.snap.Load(); s != nil {
		switch age := time.Since(s.at); {
		case age < c.maxAge:
			return s, nil
		case age < seatStaleFactor*c.maxAge:
			if c.mu.TryLock() {
				go c.refresh(context.WithoutCancel(ctx))
			}
			return s, nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.snap.Load()
	if old != nil && time.Since(old.at) < c.maxAge {
		return old, nil
	}
	s, err := c.load(ctx, old)
	if err != nil {
		return nil, err
	}
	c.snap.Store(s)
	return s, nil
}

// refresh loads a new snapshot in the background; c.mu is held.
func (c *seatCache) refresh(ctx context.Context) {
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, seatRefreshTimeout)
	defer cancel()
	s, err := c.load(ctx, c.snap.Load())
	if err != nil {
		// The stale map is served until a refresh succeeds.
		slog.WarnContext(ctx, "seat map refresh failed", "err", err)
		return
	}
	c.snap.Store(s)
}

// load reads every seat's state, with the layout read first if it is not
// yet known or the seats no longer match it.
func (c *seatCache) load(ctx context.Context, old *seatSnapshot) (*seatSnapshot, error) {
	layout := c.layout.Load()
	for attempt := 0; ; attempt++ {
		if layout == nil {
			var err error
			if layout, err = c.store.seatLayout(ctx); err != nil {
				return nil, err
			}
			c.layout.Store(layout)
		}
		codes, asOf, err := c.store.seatStates(ctx, layout)
		switch {
		case errors.Is(err, errLayoutChanged) && attempt == 0:
			layout = nil
			continue
		case err != nil:
			return nil, err
		}
		return c.render(layout, codes, asOf, old)
	}
}

// render encodes the compact form of the states codes.
func (c *seatCache) render(layout *seatLayout, codes []byte, asOf time.Time, old *seatSnapshot) (*seatSnapshot, error) {
	st := c.store
	snap := &seatSnapshot{at: time.Now(), layout: layout, codes: codes, rowsBy: map[string]*httpapi.Cacheable{}}
	if old != nil && old.layout == layout && bytes.Equal(old.codes, codes) {
		// Nothing changed: the same bytes and ETags, so caches revalidate
		// with a 304.
		same := *old
		same.at = snap.at
		return &same, nil
	}
	compact := seatRowsBody{EventID: st.eventID, AsOf: asOf.UTC(), Currency: st.currency, Sections: []SectionSummary{}, Rows: []SeatRow{}}
	for _, span := range layout.sections {
		name := span.name
		var rows []SeatRow
		sum := SectionSummary{Name: name}
		for i := span.from; i < span.to; i++ {
			seat, code := &layout.seats[i], codes[i]
			sum.Price = seat.price
			if len(rows) == 0 || rows[len(rows)-1].Row != seat.row {
				rows = append(rows, SeatRow{Section: name, Row: seat.row, First: seat.number})
			}
			r := &rows[len(rows)-1]
			if next := r.First + len(r.Seats); seat.number > next {
				r.Seats += strings.Repeat("-", seat.number-next)
			}
			r.Seats += string(code)
			sum.Total++
			switch code {
			case 'A':
				sum.Available++
			case 'H':
				sum.Held++
			case 'S':
				sum.Sold++
			}
		}
		one := compact
		one.Sections, one.Rows = []SectionSummary{sum}, rows
		var err error
		if snap.rowsBy[name], err = cacheable(one); err != nil {
			return nil, err
		}
		compact.Sections = append(compact.Sections, sum)
		compact.Rows = append(compact.Rows, rows...)
	}
	var err error
	if snap.rows, err = cacheable(compact); err != nil {
		return nil, err
	}
	snap.perSeat = &perSeatForm{body: seatMapBody{EventID: st.eventID, AsOf: compact.AsOf, Currency: st.currency, Sections: compact.Sections}}
	return snap, nil
}

// seatLayout reads the event's seats in map order.
func (s *Store) seatLayout(ctx context.Context) (*seatLayout, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT seat_id, section, row_no, seat_no, price::text
		  FROM seat WHERE event_id = $1
		 ORDER BY section, row_no, seat_no`, s.eventID)
	if err != nil {
		return nil, err
	}
	l := &seatLayout{index: map[string]int{}}
	var seat layoutSeat
	_, err = pgx.ForEachRow(rows, []any{&seat.id, &seat.section, &seat.row, &seat.number, &seat.price}, func() error {
		i := len(l.seats)
		l.index[seat.id] = i
		l.seats = append(l.seats, seat)
		// Sorted by section: a section's seats are contiguous.
		if n := len(l.sections); n > 0 && l.sections[n-1].name == seat.section {
			l.sections[n-1].to = i + 1
		} else {
			l.sections = append(l.sections, seatSpan{name: seat.section, from: i, to: i + 1})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// seatStates reads each seat's state ('A', 'H' or 'S'; a lapsed hold is
// available) in layout order, as of the database's clock.
func (s *Store) seatStates(ctx context.Context, layout *seatLayout) (codes []byte, asOf time.Time, err error) {
	rows, err := s.pool.Query(ctx, `
		SELECT seat_id, CASE WHEN status = 'HELD' AND hold_expires_at <= now() THEN 'A' ELSE left(status, 1) END, now()
		  FROM seat WHERE event_id = $1`, s.eventID)
	if err != nil {
		return nil, asOf, err
	}
	defer rows.Close()
	codes = make([]byte, len(layout.seats))
	n := 0
	for rows.Next() {
		if n == 0 {
			if err := rows.Scan(nil, nil, &asOf); err != nil {
				return nil, asOf, err
			}
		}
		// The raw bytes: no string per seat.
		raw := rows.RawValues()
		i, ok := layout.index[string(raw[0])]
		if !ok || codes[i] != 0 || len(raw[1]) != 1 || seatStatus[raw[1][0]] == "" {
			return nil, asOf, errLayoutChanged
		}
		codes[i] = raw[1][0]
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, asOf, err
	}
	if n != len(codes) {
		return nil, asOf, errLayoutChanged
	}
	return codes, asOf, nil
}

func cacheable(v any) (*httpapi.Cacheable, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return httpapi.NewCacheable(b, seatMapMaxAge), nil
}
