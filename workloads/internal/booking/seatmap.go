package booking

import (
	"context"
	"crypto/sha256"
	"encoding/json"
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

var seatCode = map[string]byte{"AVAILABLE": 'A', "HELD": 'H', "SOLD": 'S'}

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
	content   [32]byte // hash of the seats' states: asOf only moves when it changes
	all       *httpapi.Cacheable
	bySection map[string]*httpapi.Cacheable
	rows      *httpapi.Cacheable
	rowsBy    map[string]*httpapi.Cacheable
}

// seatMapMaxAge is how long a CDN or browser may reuse a seat map.
const seatMapMaxAge = 1

// seatCache serves the seat map from a snapshot refreshed once it is
// maxAge old. Under steady requests a snapshot up to twice that old starts
// one refresh in the background and is served until that refresh lands,
// however long it takes under load (a refresh reads every seat; requests
// must not queue behind it). A snapshot older than that with no refresh
// started from it, after a quiet spell, is refreshed first, so the first
// request after it sees the seats as they are. The hold's conditional
// UPDATE is what decides.
type seatCache struct {
	store  *Store
	maxAge time.Duration
	snap   atomic.Pointer[seatSnapshot]
	mu     sync.Mutex // one refresh at a time
	// refreshing is the snapshot a background refresh started from,
	// while it runs: that snapshot is served until the refresh lands.
	refreshing atomic.Pointer[seatSnapshot]
}

// seatRefreshTimeout bounds a background refresh.
const seatRefreshTimeout = 10 * time.Second

func (c *seatCache) get(ctx context.Context) (*seatSnapshot, error) {
	if s := c.snap.Load(); s != nil {
		switch age := time.Since(s.at); {
		case age < c.maxAge:
			return s, nil
		case age < 2*c.maxAge:
			if c.mu.TryLock() {
				c.refreshing.Store(s)
				go c.refresh(context.WithoutCancel(ctx))
			}
			return s, nil
		case c.refreshing.Load() == s:
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

// refresh loads a new snapshot in the background; c.mu is held and
// c.refreshing is the snapshot it started from.
func (c *seatCache) refresh(ctx context.Context) {
	defer c.mu.Unlock()
	defer c.refreshing.Store(nil)
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

func (c *seatCache) load(ctx context.Context, old *seatSnapshot) (*seatSnapshot, error) {
	st := c.store
	rows, err := st.pool.Query(ctx, `
		SELECT seat_id, section, row_no, seat_no, price::text,
		       CASE WHEN status = 'HELD' AND hold_expires_at <= now() THEN 'AVAILABLE' ELSE status END,
		       now()
		  FROM seat WHERE event_id = $1
		 ORDER BY section, row_no, seat_no`, st.eventID)
	if err != nil {
		return nil, err
	}
	var (
		sections []SectionSummary
		seats    = map[string][]SeatState{}
		seatRows = map[string][]SeatRow{}
		asOf     time.Time
		hash     = sha256.New()
	)
	var id, section, price, status string
	var rowNo, seatNo int
	_, err = pgx.ForEachRow(rows, []any{&id, &section, &rowNo, &seatNo, &price, &status, &asOf}, func() error {
		hash.Write([]byte(id))
		hash.Write([]byte{0, seatCode[status]})
		rs := seatRows[section]
		if len(rs) == 0 || rs[len(rs)-1].Row != rowNo {
			rs = append(rs, SeatRow{Section: section, Row: rowNo, First: seatNo})
		}
		r := &rs[len(rs)-1]
		if next := r.First + len(r.Seats); seatNo > next {
			r.Seats += strings.Repeat("-", seatNo-next)
		}
		r.Seats += string(seatCode[status])
		seatRows[section] = rs
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
		return nil, err
	}
	snap := &seatSnapshot{at: time.Now(), bySection: map[string]*httpapi.Cacheable{}, rowsBy: map[string]*httpapi.Cacheable{}}
	hash.Sum(snap.content[:0])
	if old != nil && old.content == snap.content {
		// Nothing changed: the same bytes and ETags, so caches revalidate
		// with a 304.
		same := *old
		same.at = snap.at
		return &same, nil
	}
	body := seatMapBody{EventID: st.eventID, AsOf: asOf.UTC(), Currency: st.currency, Sections: sections, Seats: []SeatState{}}
	compact := seatRowsBody{EventID: st.eventID, AsOf: asOf.UTC(), Currency: st.currency, Sections: sections, Rows: []SeatRow{}}
	for _, sum := range sections {
		one := body
		one.Sections = []SectionSummary{sum}
		one.Seats = seats[sum.Name]
		if snap.bySection[sum.Name], err = cacheable(one); err != nil {
			return nil, err
		}
		body.Seats = append(body.Seats, seats[sum.Name]...)
		oneRows := compact
		oneRows.Sections = []SectionSummary{sum}
		oneRows.Rows = seatRows[sum.Name]
		if snap.rowsBy[sum.Name], err = cacheable(oneRows); err != nil {
			return nil, err
		}
		compact.Rows = append(compact.Rows, seatRows[sum.Name]...)
	}
	if body.Sections == nil {
		body.Sections, compact.Sections = []SectionSummary{}, []SectionSummary{}
	}
	if snap.all, err = cacheable(body); err != nil {
		return nil, err
	}
	if snap.rows, err = cacheable(compact); err != nil {
		return nil, err
	}
	return snap, nil
}

func cacheable(v any) (*httpapi.Cacheable, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return httpapi.NewCacheable(b, seatMapMaxAge), nil
}
