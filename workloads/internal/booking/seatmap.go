package booking

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
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

type seatMapBody struct {
	EventID  int64            `json:"eventId"`
	AsOf     time.Time        `json:"asOf"`
	Currency string           `json:"currency"`
	Sections []SectionSummary `json:"sections"`
	Seats    []SeatState      `json:"seats"`
}

// seatSnapshot is one rendering of the seat map: the whole map and each
// section, encoded once per refresh rather than once per request.
type seatSnapshot struct {
	at        time.Time
	all       []byte
	bySection map[string][]byte
}

// seatCache serves the seat map from a snapshot at most maxAge old. The map
// may lag; the hold's conditional UPDATE is what decides.
type seatCache struct {
	store  *Store
	maxAge time.Duration
	snap   atomic.Pointer[seatSnapshot]
	mu     sync.Mutex // one refresh at a time
}

func (c *seatCache) get(ctx context.Context) (*seatSnapshot, error) {
	if s := c.snap.Load(); s != nil && time.Since(s.at) < c.maxAge {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.snap.Load()
	if old != nil && time.Since(old.at) < c.maxAge {
		return old, nil
	}
	s, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	c.snap.Store(s)
	return s, nil
}

func (c *seatCache) load(ctx context.Context) (*seatSnapshot, error) {
	st := c.store
	rows, err := st.pool.Query(ctx, `
		SELECT seat_id, section, price::text,
		       CASE WHEN status = 'HELD' AND hold_expires_at <= now() THEN 'AVAILABLE' ELSE status END,
		       now()
		  FROM seat WHERE event_id = $1
		 ORDER BY section, row_no, seat_no`, st.eventID)
	if err != nil {
		return nil, dbError(err)
	}
	var (
		sections []SectionSummary
		seats    = map[string][]SeatState{}
		asOf     time.Time
	)
	var id, section, price, status string
	_, err = pgx.ForEachRow(rows, []any{&id, &section, &price, &status, &asOf}, func() error {
		if len(sections) == 0 || sections[len(sections)-1].Name != section {
			sections = append(sections, SectionSummary{Name: section, Price: price})
		}
		sum := &sections[len(sections)-1]
		sum.Total++
		switch status {
		case "AVAILABLE":
			sum.Available++
		case "HELD":
			sum.Held++
		case "SOLD":
			sum.Sold++
		}
		seats[section] = append(seats[section], SeatState{ID: id, Status: status})
		return nil
	})
	if err != nil {
		return nil, dbError(err)
	}
	snap := &seatSnapshot{at: time.Now(), bySection: map[string][]byte{}}
	body := seatMapBody{EventID: st.eventID, AsOf: asOf.UTC(), Currency: st.currency, Sections: sections, Seats: []SeatState{}}
	for _, sum := range sections {
		one := body
		one.Sections = []SectionSummary{sum}
		one.Seats = seats[sum.Name]
		b, err := json.Marshal(one)
		if err != nil {
			return nil, err
		}
		snap.bySection[sum.Name] = b
		body.Seats = append(body.Seats, seats[sum.Name]...)
	}
	if body.Sections == nil {
		body.Sections = []SectionSummary{}
	}
	if snap.all, err = json.Marshal(body); err != nil {
		return nil, err
	}
	return snap, nil
}
