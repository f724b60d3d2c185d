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
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// healthWindow is the span booking's health figures cover. The queue's
// admitter steers by them: a p99 sees a slowdown as soon as 1% of the
// window is slow, and forgets it healthWindow after it ended, so the
// window is short enough for the admitter to recover within seconds.
const healthWindow = 5 * time.Second

// healthPublishEvery is how often a replica publishes its figures.
const healthPublishEvery = time.Second

// Latency buckets of the health window: bounds grow by healthGrowth from
// healthBase, so a percentile is off by less than 10% up to about 50 s.
const (
	healthBase    = 100 * time.Microsecond
	healthGrowth  = 1.1
	healthBuckets = 140
)

// latencies counts durations in the buckets of one second.
type latencies [healthBuckets]int64

func bucketOf(d time.Duration) int {
	if d <= healthBase {
		return 0
	}
	i := int(math.Ceil(math.Log(float64(d)/float64(healthBase)) / math.Log(healthGrowth)))
	return min(i, healthBuckets-1)
}

// bucketBound is the upper bound of bucket i.
func bucketBound(i int) time.Duration {
	return time.Duration(float64(healthBase) * math.Pow(healthGrowth, float64(i)))
}

// quantile is the upper bound of the bucket holding the q-th quantile of
// the counts together, 0 without any.
func quantile(q float64, ls ...*latencies) (time.Duration, int64) {
	var n int64
	for _, l := range ls {
		for _, c := range l {
			n += c
		}
	}
	if n == 0 {
		return 0, 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i := range healthBuckets {
		for _, l := range ls {
			seen += l[i]
		}
		if seen >= rank {
			return bucketBound(i), n
		}
	}
	return bucketBound(healthBuckets - 1), n
}

// healthSecond is one second of the window.
type healthSecond struct {
	at   int64 // Unix second
	hold latencies
	gate latencies
}

// health keeps this replica's recent hold and gate-wait latencies in
// memory, one ring slot per second: a hold costs a lock and two adds, and
// Redis sees one publish a second, never a call per hold.
type health struct {
	mu    sync.Mutex
	ring  [int(healthWindow / time.Second)]healthSecond
	now   func() time.Time
	queue func() int64 // the gate's queue now
}

func newHealth(queue func() int64) *health {
	return &health{now: time.Now, queue: queue}
}

// slot returns the ring slot of the current second, cleared if it held
// an older one. Callers hold mu.
func (h *health) slot() *healthSecond {
	sec := h.now().Unix()
	s := &h.ring[sec%int64(len(h.ring))]
	if s.at != sec {
		*s = healthSecond{at: sec}
	}
	return s
}

// hold records the server-side duration of one hold.
func (h *health) hold(d time.Duration) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.slot().hold[bucketOf(d)]++
	h.mu.Unlock()
}

// gateWait records one transaction's wait in the gate.
func (h *health) gateWait(d time.Duration) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.slot().gate[bucketOf(d)]++
	h.mu.Unlock()
}

// figures are the window's: the last healthWindow, this second included.
func (h *health) figures() zone.Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	sec := h.now().Unix()
	var holds, gates []*latencies
	for i := range h.ring {
		if s := &h.ring[i]; s.at > sec-int64(len(h.ring)) && s.at <= sec {
			holds, gates = append(holds, &s.hold), append(gates, &s.gate)
		}
	}
	var z zone.Health
	z.HoldP99, z.Holds = quantile(0.99, holds...)
	z.GateWaitP99, _ = quantile(0.99, gates...)
	z.HoldsPerSecond = float64(z.Holds) / healthWindow.Seconds()
	if h.queue != nil {
		z.GateQueue = h.queue()
	}
	return z
}

// instanceID names this replica in the health hash: its pod (the host
// name) and a random suffix, so that services sharing a process or a
// restarted pod never overwrite each other.
func instanceID() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// publishHealth publishes the figures every healthPublishEvery until ctx
// ends (zone.PublishHealth).
func (s *service) publishHealth(ctx context.Context) {
	id := instanceID()
	t := time.NewTicker(healthPublishEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, healthPublishEvery)
		err := zone.PublishHealth(pctx, s.rdb, s.cfg.EventID, id, s.health.figures())
		cancel()
		if err != nil && ctx.Err() == nil {
			// Without figures the admitter holds its rate: worth a count,
			// not a log line a second.
			s.metrics.depErrors.WithLabelValues("session_store").Inc()
			slog.DebugContext(ctx, "publish health", "err", err)
		}
	}
}
