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

// Package txgate queues work in front of a database so that the database
// sees a steady number of transactions: as many at once as it serves at
// close to its lowest latency, and no more. Past that point more
// concurrency adds no throughput, only waits inside PostgreSQL (locks,
// a core, the WAL) that every transaction then shares; waiting in the
// gate instead costs a channel receive and is first come, first served.
//
// The limit follows the measurement, as TCP Vegas does: while the
// transactions that ran with the gate full take at most Tolerance times
// the floor, the limit grows by about one per limit completions; when they
// take longer, it shrinks by a tenth, at most once per limit completions.
// The floor is the lowest latency seen. Latencies measured under load
// would ratchet it up (each higher floor tolerating a longer queue), so it
// is re-learnt only from transactions that ran with at most Min in
// flight: every Window completions, if some did, their lowest becomes the
// floor, up or down, so a database that got slower for good is not held
// to a floor it no longer has.
package txgate

import (
	"context"
	"sync"
	"time"
)

// Config of a gate. The zero value of a field takes the default stated
// next to it.
type Config struct {
	Min     int // the lowest limit (default 2)
	Max     int // the highest limit (required: the connections the work may use)
	Initial int // the first limit (default Min)
	// Tolerance is how much slower than the floor a transaction may run
	// before the limit shrinks (default 2).
	Tolerance float64
	// Slack is added to the tolerated latency, so that a floor of a few
	// hundred microseconds does not make scheduling noise look like a
	// queue (default 1 ms).
	Slack time.Duration
	// Window is the completions after which the floor is re-learnt
	// (default 1000).
	Window int
}

// Gate admits work up to its limit and queues the rest in arrival order.
type Gate struct {
	cfg Config

	mu       sync.Mutex
	limit    float64
	inFlight int
	waiters  []chan struct{} // FIFO; a closed channel is a granted slot
	floor    time.Duration   // lowest latency (0: none yet)
	light    time.Duration   // lowest of the window's with at most Min in flight (0: none)
	seen     int             // completions in the current window
	cooldown int             // completions before the limit may shrink again
}

// New returns a gate for cfg.
func New(cfg Config) *Gate {
	if cfg.Min < 1 {
		cfg.Min = 2
	}
	if cfg.Max < cfg.Min {
		cfg.Max = cfg.Min
	}
	if cfg.Initial < cfg.Min || cfg.Initial > cfg.Max {
		cfg.Initial = cfg.Min
	}
	if cfg.Tolerance <= 1 {
		cfg.Tolerance = 2
	}
	if cfg.Slack <= 0 {
		cfg.Slack = time.Millisecond
	}
	if cfg.Window < 1 {
		cfg.Window = 1000
	}
	return &Gate{cfg: cfg, limit: float64(cfg.Initial)}
}

// Limit is the number of transactions the gate lets run at once now.
func (g *Gate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return int(g.limit)
}

// InFlight is the number of admitted transactions not yet done.
func (g *Gate) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// Waiting is the number of callers queued in the gate.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiters)
}

// Acquire waits for a slot, or for ctx. On success the caller must call
// Done with the transaction's own latency (without the wait) exactly once.
func (g *Gate) Acquire(ctx context.Context) error {
	g.mu.Lock()
	if len(g.waiters) == 0 && g.inFlight < int(g.limit) {
		g.inFlight++
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	g.waiters = append(g.waiters, ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, w := range g.waiters {
			if w == ch {
				g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
				return ctx.Err()
			}
		}
		// Granted while giving up: the slot is ours to hand on.
		g.inFlight--
		g.grant()
		return ctx.Err()
	}
}

// Done ends an admitted transaction that took latency (0: it failed
// before measuring anything, which teaches the limit nothing).
func (g *Gate) Done(latency time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if latency > 0 {
		g.learn(latency, g.inFlight)
	}
	g.inFlight--
	g.grant()
}

// grant admits waiters, first come first served, up to the limit.
func (g *Gate) grant() {
	for len(g.waiters) > 0 && g.inFlight < int(g.limit) {
		close(g.waiters[0])
		g.waiters = g.waiters[1:]
		g.inFlight++
	}
}

// learn moves the limit after a completion that ran with inFlight
// admitted. Only completions that ran with the gate full say whether the
// limit is too low: below it, the database had room to spare whatever
// the latency.
func (g *Gate) learn(d time.Duration, inFlight int) {
	if g.floor == 0 || d < g.floor {
		g.floor = d
	}
	if inFlight <= g.cfg.Min && (g.light == 0 || d < g.light) {
		g.light = d
	}
	if g.seen++; g.seen >= g.cfg.Window {
		if g.light > 0 {
			g.floor = g.light
		}
		g.light, g.seen = 0, 0
	}
	if g.cooldown > 0 {
		g.cooldown--
	}
	tolerated := time.Duration(float64(g.floor)*g.cfg.Tolerance) + g.cfg.Slack
	switch {
	case d > tolerated:
		if g.cooldown == 0 {
			g.limit = max(float64(g.cfg.Min), g.limit*0.9)
			g.cooldown = int(g.limit)
		}
	case inFlight >= int(g.limit):
		g.limit = min(float64(g.cfg.Max), g.limit+1/g.limit)
	}
}
