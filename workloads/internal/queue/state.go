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
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

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
func publicState(snap *Snapshot, set Settings) queueapi.State {
	p := queueapi.State{Status: queueapi.StatusOpen, SalesOpen: snap.SalesOpen, Paused: set.Paused, SoldOut: snap.SoldOut,
		Watermark: snap.Watermark, Waiting: snap.Waiting, Samples: [][2]int64{}}
	// One decimal is all a wait estimate needs, and it keeps the ETag
	// stable while the rate only jitters.
	p.AdmissionRate = math.Round(snap.admissionRate(set)*10) / 10
	switch {
	case snap.SoldOut:
		p.Status = queueapi.StatusSoldOut
	case set.Paused:
		p.Status = queueapi.StatusPaused
	case !snap.SalesOpen:
		p.Status = queueapi.StatusPrequeue
	}
	if len(set.Phases) > 0 {
		p.Phase, p.Queues = publicQueues(snap, set)
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
			c: httpapi.NewCacheable(append(body, '\n'), int(queueapi.StateMaxAge/time.Second))}
		s.pub.cur.Store(c)
	}
	c.c.Serve(w, r)
	return nil
}
