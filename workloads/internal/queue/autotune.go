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
	"errors"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// Autotune is a closed loop around booking: once per autotunePeriod the
// admitter reads booking's health (zone.ReadHealth: the worst hold p99 of
// the booking replicas over their last few seconds) and moves its rate
// between the settings' AutotuneMinRate and AutotuneMaxRate so that the
// hold p99 stays at or under AutotuneHoldP99, the target. The law
// (nextRate) is additive increase, multiplicative decrease around a dead
// band:
//
//   - p99 > target: cut, rate × (1 − cutGain·(p99/target − 1)), at most
//     by cutFloor (a p99 of twice the target halves the rate). After a
//     cut the next one waits settleAfter (booking's window must turn over
//     and the people admitted before the cut must have held) unless the
//     p99 grew by worseFactor meanwhile.
//   - p99 < raiseBelow·target, settleAfter past the last cut, enough holds
//     measured and the rate the limit of the last period's admissions:
//     raise by (max − min)/rampPeriods (at least 1/s), so the whole range
//     takes rampPeriods periods.
//   - otherwise (the dead band, too few holds, the rate not the limit):
//     hold.
//   - no fresh figures (booking not publishing): hold, never climb blind.
//
// Bounds: the rate stays within [min, max]; it falls at most by half per
// period and rises at most by (max − min)/rampPeriods per period; and,
// unless the p99 keeps growing, cuts are settleAfter apart, so a steady
// plant sees a sawtooth of one cut per settleAfter at most, not a
// swing per period. maxActive and the seats left still bound admission
// in the admit script, whatever the rate.
const (
	autotunePeriod = time.Second
	cutGain        = 0.5
	cutFloor       = 0.5
	worseFactor    = 1.5
	raiseBelow     = 0.8
	rampPeriods    = 30
	settleAfter    = 6 * time.Second
	// minHoldsToRaise is the fewest holds booking's window must have seen
	// for its p99 to justify a raise: a quiet window says nothing.
	minHoldsToRaise = 10
)

// tuning is autotune's part of the settings.
type tuning struct {
	Target   time.Duration
	Min, Max float64
}

func tuningOf(set Settings) (tuning, bool) {
	if !set.Autotuned() {
		return tuning{}, false
	}
	return tuning{Target: set.AutotuneHoldP99, Min: float64(set.AutotuneMinRate), Max: float64(set.AutotuneMaxRate)}, true
}

// tuneState is what the law carries from one period to the next.
type tuneState struct {
	Rate   float64       // admissions per second
	CutAt  time.Time     // the last cut; zero: none yet
	CutP99 time.Duration // the p99 that caused it
}

// tuneInput is what one period observed.
type tuneInput struct {
	Now    time.Time
	Health zone.Health
	Fresh  bool // Health is known: some booking replica published lately
	// Limited: the last period admitted as many as the rate allowed, so a
	// higher rate would admit more (not the zone, the queue or the seats
	// holding admission back). Without it a raise only winds up a burst.
	Limited bool
}

// Actions of nextRate, for the log and the tests.
const (
	tuneHold  = "hold"
	tuneCut   = "cut"
	tuneRaise = "raise"
	tuneBlind = "blind" // no figures: hold
)

// nextRate is the law: the state after one period that observed in.
func nextRate(st tuneState, in tuneInput, tn tuning) (tuneState, string) {
	st.Rate = min(max(st.Rate, tn.Min), tn.Max)
	if !in.Fresh {
		return st, tuneBlind
	}
	p99 := in.Health.HoldP99
	settled := st.CutAt.IsZero() || in.Now.Sub(st.CutAt) >= settleAfter
	switch {
	case p99 > tn.Target:
		if !settled && float64(p99) < worseFactor*float64(st.CutP99) {
			return st, tuneHold // the last cut has not shown yet
		}
		excess := float64(p99)/float64(tn.Target) - 1
		st.Rate = max(st.Rate*max(1-cutGain*excess, cutFloor), tn.Min)
		st.CutAt, st.CutP99 = in.Now, p99
		return st, tuneCut
	case float64(p99) < raiseBelow*float64(tn.Target) && settled && in.Limited && in.Health.Holds >= minHoldsToRaise:
		if st.Rate >= tn.Max {
			return st, tuneHold
		}
		st.Rate = min(st.Rate+max((tn.Max-tn.Min)/rampPeriods, 1), tn.Max)
		return st, tuneRaise
	}
	return st, tuneHold
}

// autotuner runs the law in the admitter: rate is asked at every step
// and runs a period when one is due, so the loop needs no goroutine of
// its own and stops with the admitter.
type autotuner struct {
	st *store
	m  *metrics
	// readHealth reads booking's figures (zone.ReadHealth).
	readHealth func(ctx context.Context) (zone.Health, bool, error)
	on         bool // tuning in the last period
	blind      bool // the last period had no figures
	state      tuneState
	due        time.Time
	// asked and got count the admissions of the current period: asked of
	// the admit script, and admitted by it.
	asked, got int64
}

func newAutotuner(st *store, m *metrics) *autotuner {
	return &autotuner{st: st, m: m, readHealth: func(ctx context.Context) (zone.Health, bool, error) {
		return zone.ReadHealth(ctx, st.rdb, st.eventID)
	}}
}

// admitted counts one step's admissions.
func (t *autotuner) admitted(asked, got int64) {
	t.asked += asked
	t.got += max(got, 0)
}

// rate is the admissions per second to admit at now under set.
func (t *autotuner) rate(ctx context.Context, set Settings, now time.Time) int {
	tn, ok := tuningOf(set)
	if !ok {
		t.on = false
		t.m.admitRate.Set(float64(set.RatePerSecond))
		return set.RatePerSecond
	}
	if !t.on {
		// Autotune starts where the last admitter left it (a failover in
		// a slowdown must not jump back to the full rate), else where
		// the fixed rate was; nextRate keeps it within the bounds.
		t.on, t.state, t.due = true, tuneState{Rate: float64(set.RatePerSecond)}, now
		t.asked, t.got = 0, 0
		rctx, cancel := context.WithTimeout(ctx, autotunePeriod/2)
		if r, ok, err := t.st.admitRate(rctx); err == nil && ok && r > 0 {
			t.state.Rate = float64(r)
		}
		cancel()
	}
	if !now.Before(t.due) {
		t.due = now.Add(autotunePeriod)
		t.period(ctx, tn, now)
	}
	r := int(math.Round(min(max(t.state.Rate, tn.Min), tn.Max)))
	t.m.admitRate.Set(float64(r))
	return r
}

// period runs the law once and publishes the rate for the stats.
func (t *autotuner) period(ctx context.Context, tn tuning, now time.Time) {
	rctx, cancel := context.WithTimeout(ctx, autotunePeriod/2)
	defer cancel()
	in := tuneInput{Now: now, Limited: t.asked > 0 && float64(t.got) >= 0.9*float64(t.asked)}
	t.asked, t.got = 0, 0
	h, fresh, err := t.readHealth(rctx)
	if err != nil {
		t.m.redisErrors.WithLabelValues("autotune").Inc()
	}
	in.Health, in.Fresh = h, fresh && err == nil
	prev := t.state.Rate
	var action string
	t.state, action = nextRate(t.state, in, tn)
	t.m.autotuneActions.WithLabelValues(action).Inc()
	if in.Fresh {
		t.m.holdP99.Set(h.HoldP99.Seconds())
	}
	// A cut, or losing or regaining the figures, is worth a line; the
	// steady climb is in the metrics.
	if action == tuneCut || (action == tuneBlind) != t.blind {
		slog.Info("autotune", "action", action, "rate", math.Round(t.state.Rate), "was", math.Round(prev),
			"holdP99", h.HoldP99, "target", tn.Target, "gateQueue", h.GateQueue)
	}
	t.blind = action == tuneBlind
	if err := t.st.setAdmitRate(rctx, int64(math.Round(t.state.Rate))); err != nil {
		t.m.redisErrors.WithLabelValues("autotune").Inc()
	}
}

// admitRateTTL is how long the published rate outlives its admitter.
const admitRateTTL = 10 * time.Second

// setAdmitRate publishes the rate autotune chose, for every pod's stats.
func (s *store) setAdmitRate(ctx context.Context, rate int64) error {
	if err := s.rdb.Set(ctx, s.k.admitRate, rate, admitRateTTL).Err(); err != nil {
		return unavailable("admit rate", err)
	}
	return nil
}

// admitRate reads the rate the admitter last published; ok is false when
// none is (autotune off, or no admitter lately).
func (s *store) admitRate(ctx context.Context) (rate int64, ok bool, err error) {
	v, err := s.rdb.Get(ctx, s.k.admitRate).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, unavailable("admit rate", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil, nil
}

// admitRate is the stats' admitRate: the rate autotune published, or the
// fixed one without autotune.
func (s *service) admitRate(ctx context.Context) (int64, error) {
	set := s.live.Load()
	if !set.Autotuned() {
		return int64(set.RatePerSecond), nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	r, _, err := s.st.admitRate(ctx)
	return r, err
}
