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
	"math"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

var testTuning = tuning{Target: 100 * time.Millisecond, Min: 10, Max: 310}

// healthy is an input of a booking well under the target.
func healthy(now time.Time, p99 time.Duration) tuneInput {
	return tuneInput{Now: now, Fresh: true, Limited: true, Health: zone.Health{HoldP99: p99, Holds: 100}}
}

func TestAutotuneLaw(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name   string
		st     tuneState
		in     tuneInput
		rate   float64
		action string
	}{
		{"no figures hold", tuneState{Rate: 100}, tuneInput{Now: t0, Limited: true}, 100, tuneBlind},
		{"no figures keep within bounds", tuneState{Rate: 1000}, tuneInput{Now: t0}, 310, tuneBlind},
		{"comfortably below raises by range/30", tuneState{Rate: 100}, healthy(t0, 20*time.Millisecond), 110, tuneRaise},
		{"raise stops at max", tuneState{Rate: 305}, healthy(t0, 20*time.Millisecond), 310, tuneRaise},
		{"at max holds", tuneState{Rate: 310}, healthy(t0, 20*time.Millisecond), 310, tuneHold},
		{"dead band holds", tuneState{Rate: 100}, healthy(t0, 90*time.Millisecond), 100, tuneHold},
		{"not limited holds", tuneState{Rate: 100}, tuneInput{Now: t0, Fresh: true, Health: zone.Health{HoldP99: time.Millisecond, Holds: 100}}, 100, tuneHold},
		{"too few holds holds", tuneState{Rate: 100}, tuneInput{Now: t0, Fresh: true, Limited: true, Health: zone.Health{HoldP99: time.Millisecond, Holds: 3}}, 100, tuneHold},
		{"20% over cuts 10%", tuneState{Rate: 100}, healthy(t0, 120*time.Millisecond), 90, tuneCut},
		{"twice the target halves", tuneState{Rate: 100}, healthy(t0, 200*time.Millisecond), 50, tuneCut},
		{"ten times the target halves", tuneState{Rate: 100}, healthy(t0, time.Second), 50, tuneCut},
		{"a cut stops at min", tuneState{Rate: 15}, healthy(t0, time.Second), 10, tuneCut},
		{"settling after a cut holds", tuneState{Rate: 50, CutAt: t0.Add(-2 * time.Second), CutP99: 200 * time.Millisecond},
			healthy(t0, 250*time.Millisecond), 50, tuneHold},
		{"settling after a cut, much worse cuts", tuneState{Rate: 50, CutAt: t0.Add(-2 * time.Second), CutP99: 200 * time.Millisecond},
			healthy(t0, 300*time.Millisecond), 25, tuneCut},
		{"settled, still over cuts", tuneState{Rate: 50, CutAt: t0.Add(-settleAfter), CutP99: 200 * time.Millisecond},
			healthy(t0, 150*time.Millisecond), 37.5, tuneCut},
		{"settling after a cut does not raise", tuneState{Rate: 50, CutAt: t0.Add(-time.Second), CutP99: 200 * time.Millisecond},
			healthy(t0, 10*time.Millisecond), 50, tuneHold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, action := nextRate(tc.st, tc.in, testTuning)
			if math.Abs(st.Rate-tc.rate) > 1e-9 || action != tc.action {
				t.Errorf("nextRate = %.2f %s, want %.2f %s", st.Rate, action, tc.rate, tc.action)
			}
		})
	}
}

// plant is a booking whose hold p99 grows with the rate above its
// capacity: p99 = base below capacity, base·(rate/capacity)² above.
type plant struct {
	base     time.Duration
	capacity float64
}

func (p plant) p99(rate float64) time.Duration {
	if rate <= p.capacity {
		return p.base
	}
	return time.Duration(float64(p.base) * (rate / p.capacity) * (rate / p.capacity))
}

// TestAutotuneLawConverges runs the law against a plant with a lag of
// booking's window: it settles below the capacity without a sustained
// oscillation, and never leaves [min, max].
func TestAutotuneLawConverges(t *testing.T) {
	p := plant{base: 80 * time.Millisecond, capacity: 120}
	t0 := time.Unix(1_700_000_000, 0)
	st := tuneState{Rate: testTuning.Max}
	var rates []float64
	lag := 5 // periods: booking's window and the people's think time
	for i := range 180 {
		seen := st.Rate
		if i >= lag {
			seen = rates[i-lag]
		}
		rates = append(rates, st.Rate)
		st, _ = nextRate(st, healthy(t0.Add(time.Duration(i)*time.Second), p.p99(seen)), testTuning)
		if st.Rate < testTuning.Min || st.Rate > testTuning.Max {
			t.Fatalf("period %d: rate %.1f outside [%v, %v]", i, st.Rate, testTuning.Min, testTuning.Max)
		}
	}
	lo, hi := minMax(rates[60:])
	t.Logf("capacity %.0f/s: the rate stays in [%.1f, %.1f] after a minute", p.capacity, lo, hi)
	// The sawtooth of AIMD: at most one cut of at most half, and the
	// rate never settles far under the capacity.
	if hi > 1.3*p.capacity || lo < 0.5*p.capacity {
		t.Errorf("rate in [%.1f, %.1f] after a minute, want within [%.0f, %.0f]", lo, hi, 0.5*p.capacity, 1.3*p.capacity)
	}
}

func minMax(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// TestAutotuneHoldsWithoutFigures: a booking that stops publishing
// leaves the rate where it was, and the rate is published for the stats.
func TestAutotuneHoldsWithoutFigures(t *testing.T) {
	_, rdb := testenv.RedisDB(t)
	st := newStore(rdb, testEvent)
	tu := newAutotuner(st, newMetrics())
	set := Settings{Admission: config.Admission{RatePerSecond: 200, AutotuneHoldP99: 100 * time.Millisecond, AutotuneMinRate: 10, AutotuneMaxRate: 150}}
	ctx := context.Background()
	now := time.Now()
	if r := tu.rate(ctx, set, now); r != 150 {
		t.Fatalf("first rate %d, want the fixed rate within the bounds, 150", r)
	}
	for i := range 5 {
		tu.admitted(100, 100)
		if r := tu.rate(ctx, set, now.Add(time.Duration(i+1)*time.Second)); r != 150 {
			t.Fatalf("period %d without figures: rate %d, want 150", i, r)
		}
	}
	if r, ok, err := st.admitRate(ctx); err != nil || !ok || r != 150 {
		t.Fatalf("published rate = %d %v %v, want 150", r, ok, err)
	}
	// Off, the fixed rate applies.
	set.AutotuneHoldP99 = 0
	if r := tu.rate(ctx, set, now.Add(time.Minute)); r != 200 {
		t.Fatalf("autotune off: rate %d, want 200", r)
	}
}
