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
	"math"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/retry"
)

// admitter admits customers tick by tick while its fencing number is the
// highest the admission script has seen.
type admitter struct {
	st    *store
	live  *liveSettings
	m     *metrics
	carry float64 // fraction of an admission left over from earlier steps
	// step is the shortest admission step (config.Queue.AdmitStep): a
	// tick's admissions are spread over steps of at least this length,
	// so booking gets people evenly rather than in a burst per tick. 0:
	// one step per tick.
	step time.Duration
	// tune chooses the rate when the settings ask for autotune; nil: the
	// fixed rate always.
	tune *autotuner
}

// stepOf is the length of one admission step under set: the tick divided
// into as many steps of at least a.step as there are admissions in a tick
// (one step, the tick, when a.step is 0 or not shorter). Each step is the
// same fenced script call as a whole tick, with its share of the batch.
func (a *admitter) stepOf(set Settings) time.Duration {
	if a.step <= 0 || a.step >= set.TickInterval {
		return set.TickInterval
	}
	n := int64(set.TickInterval / a.step)
	if per := int64(float64(set.RatePerSecond) * set.TickInterval.Seconds()); per < n {
		n = max(per, 1)
	}
	return set.TickInterval / time.Duration(n)
}

// run ticks with fencing number epoch until ctx ends or an admitter with a
// higher number ticks (then it stops: it has been deposed). An elected
// admitter's number comes from the Lease (leaseFencing); epoch 0 takes one
// from a counter in Redis, for a single admitter without election.
func (a *admitter) run(ctx context.Context, epoch int64) error {
	for epoch == 0 {
		e, err := a.st.takeEpoch(ctx)
		if err == nil {
			epoch = e
			break
		}
		a.m.redisErrors.WithLabelValues("epoch").Inc()
		slog.Warn("admitter: cannot take fencing epoch", "err", err)
		if retry.Sleep(ctx, time.Second) != nil {
			return nil
		}
	}
	slog.Info("admitter started", "event", a.st.eventID, "epoch", epoch)
	a.m.epoch.Set(float64(epoch))
	a.m.leader.Set(1)
	defer a.m.leader.Set(0)
	if a.tune != nil {
		a.tune.on = false // a new term resumes from the published rate
		defer a.m.admitRate.Set(0)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			slog.Info("admitter stopped", "epoch", epoch)
			return nil
		case <-a.live.changed:
			// A new tick interval applies now, not after the old one.
			timer.Reset(0)
			continue
		case <-timer.C:
		}
		set := a.live.Load()
		if a.tune != nil {
			set.RatePerSecond = a.tune.rate(ctx, set, time.Now())
		}
		timer.Reset(a.stepOf(set))
		r, err := a.tickOnce(ctx, epoch, set)
		if err != nil {
			a.m.redisErrors.WithLabelValues("admit").Inc()
			slog.Warn("admitter tick", "err", err)
			continue
		}
		if r.Fenced {
			slog.Warn("admitter fenced off: a newer admitter holds the epoch", "epoch", epoch)
			return nil
		}
	}
}

// tickOnce runs one admission step with the current settings.
func (a *admitter) tickOnce(ctx context.Context, epoch int64, set Settings) (tickResult, error) {
	want := float64(set.RatePerSecond)*a.stepOf(set).Seconds() + a.carry
	batch := int64(math.Floor(want))
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, max(set.TickInterval, time.Second))
	defer cancel()
	r, err := a.st.tick(tctx, epoch, set, batch)
	a.m.tickSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return r, err
	}
	if r.Reason == "" && !r.Fenced {
		// Carry the fraction only while admission runs, and at most one
		// person, so a pause does not bank a burst.
		a.carry = min(want-float64(r.Admitted), 1)
		if r.Admitted < batch {
			a.carry = 0
		}
	}
	a.m.admitted.Add(float64(max(r.Admitted, 0)))
	if a.tune != nil {
		a.tune.admitted(batch, r.Admitted)
	}
	if !r.Fenced {
		a.m.active.Set(float64(r.Active))
	}
	if r.Choosing >= 0 {
		a.m.choosing.Set(float64(r.Choosing))
	}
	return r, nil
}
