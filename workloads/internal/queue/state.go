package queue

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// stateMaxAge is how long a CDN or browser may reuse the public state:
// with it, a waiting crowd of any size costs the origin about one request
// per second per cache.
const stateMaxAge = 1

// PublicState is the JSON of GET /events/{eventId}/queue/state: what the
// waiting page needs to place itself, identical for everyone, so a CDN can
// answer it. A waiting person's place is the score their queueId carries
// (`place` in the join and poll answers); they have been admitted once
// Watermark >= place, and then (only then) ask their own endpoint for the
// access token.
type PublicState struct {
	// Status is prequeue (sales not open), open, paused or sold_out.
	Status      string     `json:"status"`
	SalesOpen   bool       `json:"salesOpen"`
	SalesOpenAt *time.Time `json:"salesOpenAt,omitempty"`
	Paused      bool       `json:"paused"`
	SoldOut     bool       `json:"soldOut"`
	// Watermark is the place of the last admitted person, -1 before the
	// first admission: every place at or below it has been let in.
	Watermark int64 `json:"watermark"`
	Waiting   int64 `json:"waiting"`
	// AdmissionRate is admissions per second observed over the last ~10 s
	// (the configured rate before any was seen).
	AdmissionRate float64 `json:"admissionRate"`
	// Samples are [rank, place] points of the waiting queue in order: the
	// number ahead of a place is interpolated between them. None before
	// opening, when no rank exists yet.
	Samples [][2]int64 `json:"samples"`
}

// stateCache holds the encoded state of one snapshot and settings.
type stateCache struct {
	snap   *Snapshot
	paused bool
	openAt time.Time
	rate   int
	c      *httpapi.Cacheable
}

type stateServer struct {
	cur atomic.Pointer[stateCache]
}

// publicState builds the state from snap and set.
func publicState(snap *Snapshot, set Settings) PublicState {
	p := PublicState{Status: "open", SalesOpen: snap.SalesOpen, Paused: set.Paused, SoldOut: snap.SoldOut,
		Watermark: snap.Watermark, Waiting: snap.Waiting, Samples: [][2]int64{}}
	// One decimal is all a wait estimate needs, and it keeps the ETag
	// stable while the rate only jitters.
	p.AdmissionRate = math.Round(snap.admissionRate(set)*10) / 10
	switch {
	case snap.SoldOut:
		p.Status = "sold_out"
	case set.Paused:
		p.Status = "paused"
	case !snap.SalesOpen:
		p.Status = "prequeue"
	}
	if !snap.SalesOpen {
		if !set.SalesOpenAt.IsZero() {
			at := set.SalesOpenAt.UTC()
			p.SalesOpenAt = &at
		}
		return p
	}
	for _, s := range snap.Samples {
		p.Samples = append(p.Samples, [2]int64{s.Rank, s.Score})
	}
	return p
}

func (s *service) state(w http.ResponseWriter, r *http.Request) error {
	if err := s.event(r); err != nil {
		return err
	}
	snap, set := s.snap.Load(), s.live.Load()
	if !snap.Valid || time.Since(snap.Fetched) > staleAfter {
		return fmt.Errorf("%w: queue snapshot is stale", zone.ErrUnavailable)
	}
	c := s.pub.cur.Load()
	if c == nil || c.snap != snap || c.paused != set.Paused || !c.openAt.Equal(set.SalesOpenAt) || c.rate != set.RatePerSecond {
		body, err := json.Marshal(publicState(snap, set))
		if err != nil {
			return err
		}
		c = &stateCache{snap: snap, paused: set.Paused, openAt: set.SalesOpenAt, rate: set.RatePerSecond,
			c: httpapi.NewCacheable(append(body, '\n'), stateMaxAge)}
		s.pub.cur.Store(c)
	}
	c.c.Serve(w, r)
	return nil
}
