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
	"context"
	"log/slog"
	"sort"
	"sync/atomic"
	"time"
)

// snapshotSamples is how many (rank, score) points of the queue each
// refresh reads: enough to place anyone within ~3% of the queue.
const snapshotSamples = 32

// Snapshot is what a pod knows about the queue, refreshed a few times per
// second: polls are answered from it and the queueId, without Redis.
type Snapshot struct {
	state
	Rate      float64 // admissions per second, observed over the last ~10 s
	Fetched   time.Time
	Valid     bool
	SalesOpen bool
	Paused    bool
	SoldOut   bool
}

// snapshotter refreshes the Snapshot in the background.
type snapshotter struct {
	st       *store
	live     *liveSettings
	every    time.Duration
	cur      atomic.Pointer[Snapshot]
	history  []rateSample
	onResult func(err error)
}

type rateSample struct {
	at       time.Time
	admitted int64
}

func newSnapshotter(st *store, live *liveSettings, every time.Duration) *snapshotter {
	s := &snapshotter{st: st, live: live, every: every}
	s.cur.Store(&Snapshot{})
	return s
}

func (s *snapshotter) Load() *Snapshot { return s.cur.Load() }

func (s *snapshotter) run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		if err := s.refresh(ctx); err != nil && ctx.Err() == nil {
			slog.Debug("queue snapshot", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *snapshotter) refresh(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := s.st.read(rctx, snapshotSamples)
	if s.onResult != nil {
		s.onResult(err)
	}
	if err != nil {
		return err
	}
	set := s.live.Load()
	if len(set.Phases) > 0 {
		qs := set.queues(time.Now())
		names := make([]string, len(qs))
		for i, q := range qs {
			names[i] = q.Name
		}
		if st.Queues, err = s.st.readQueues(rctx, snapshotSamples, names); err != nil {
			if s.onResult != nil {
				s.onResult(err)
			}
			return err
		}
		st.Waiting = 0
		for _, q := range st.Queues {
			st.Waiting += q.Waiting
		}
	}
	now := time.Now()
	s.history = append(s.history, rateSample{at: now, admitted: st.Admitted})
	for len(s.history) > 2 && now.Sub(s.history[1].at) > 10*time.Second {
		s.history = s.history[1:]
	}
	snap := &Snapshot{state: st, Fetched: now, Valid: true,
		SalesOpen: set.SalesOpenAt.IsZero() || !st.Now.Before(set.SalesOpenAt),
		Paused:    set.Paused, SoldOut: st.Remaining == 0}
	if first := s.history[0]; now.Sub(first.at) > 500*time.Millisecond {
		snap.Rate = float64(st.Admitted-first.admitted) / now.Sub(first.at).Seconds()
	}
	s.cur.Store(snap)
	return nil
}

// ahead estimates how many waiting customers have a place before score,
// interpolating between the sampled ranks.
func (s *Snapshot) ahead(score int64) int64 {
	sm := s.Samples
	if len(sm) == 0 {
		return 0
	}
	i := sort.Search(len(sm), func(i int) bool { return sm[i].Score >= score })
	switch {
	case i == 0:
		return 0
	case i == len(sm):
		return s.Waiting
	}
	lo, hi := sm[i-1], sm[i]
	if hi.Score == lo.Score {
		return hi.Rank
	}
	frac := float64(score-lo.Score) / float64(hi.Score-lo.Score)
	return lo.Rank + int64(frac*float64(hi.Rank-lo.Rank))
}

// admissionRate is the observed rate, or the configured one before any
// admission has been seen.
func (s *Snapshot) admissionRate(set Settings) float64 {
	if s.Rate > 0.01 {
		return s.Rate
	}
	return float64(max(set.RatePerSecond, 1))
}

// queue is the figures of queue name: the whole queue's without phases.
func (s *Snapshot) queue(name string) queueState {
	for _, q := range s.Queues {
		if q.Name == name {
			return q
		}
	}
	if len(s.Queues) > 0 {
		return queueState{Name: name, Watermark: -1}
	}
	return queueState{Name: DefaultQueue, Waiting: s.Waiting, Watermark: s.Watermark, Admitted: s.Admitted, Samples: s.Samples}
}

// aheadIn is ahead within queue q.
func aheadIn(q queueState, score int64) int64 {
	return (&Snapshot{state: state{Waiting: q.Waiting, Samples: q.Samples}}).ahead(score)
}
