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
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketfair/ticketfair/workloads/internal/txgate"
)

// gateReserve is the pool's connections the sale's transactions (holds,
// payments) leave to the rest: the sweeper, the seat map, order reads.
const gateReserve = 2

// gateMin is the fewest transactions the gate lets run at once. In the
// full-scale demo, where the crowd, the queue and Redis share PostgreSQL's
// two cores, latency rises at any concurrency, so the gate sat at its
// floor: at 8 a hold waited 109 ms in it at the median, at 18 (the whole
// pool less the reserve) 6 to 9 ms; the hold transaction's p99 rose from
// about 80 ms to about 90, and 90 of 47,000 pool acquires waited, not 13.
// The floor is therefore most of the default pool; a larger pool lets the
// gate find the knee above it.
const gateMin = 16

// gateSlack is the latency a transaction may add to the tolerated one
// before the gate shrinks: a PostgreSQL backend waiting a scheduler tick
// or two for a core is no queue in the database.
const gateSlack = 5 * time.Millisecond

// newGate queues the sale's transactions inside booking, so PostgreSQL
// sees a steady number of them, as many as it serves near its lowest
// latency (package txgate); the pool, less gateReserve, bounds the limit.
func newGate(poolSize int) *txgate.Gate {
	hi := max(1, poolSize-gateReserve)
	return txgate.New(txgate.Config{Min: min(gateMin, hi), Max: hi, Slack: gateSlack})
}

// gated runs tx, one hold or payment transaction, through the gate. The
// wait is observed apart from the transaction, whose latency teaches the
// gate. Other errors teach it nothing: a request refused before it
// reached PostgreSQL (a seat outside the phase) took no time there, and a
// lost connection or a cancelled request measured nothing.
func (s *service) gated(ctx context.Context, tx func() error) error {
	start := time.Now()
	if err := s.gate.Acquire(ctx); err != nil {
		return err
	}
	began := time.Now()
	s.metrics.gateWait.Observe(began.Sub(start).Seconds())
	s.health.gateWait(began.Sub(start))
	err := tx()
	took := time.Since(began)
	if err != nil && !refusedByDatabase(err) {
		took = 0
	}
	s.gate.Done(took)
	return err
}

// refusedByDatabase reports whether err is hold_seats's refusal: a
// transaction that ran.
func refusedByDatabase(err error) bool {
	var (
		unavailable *SeatsUnavailableError
		limit       *SeatLimitError
		unknown     *UnknownSeatsError
	)
	return errors.As(err, &unavailable) || errors.As(err, &limit) || errors.As(err, &unknown)
}

// gateCollector reads the gate at scrape time.
type gateCollector struct {
	g                      *txgate.Gate
	limit, inFlight, queue *prometheus.Desc
}

func newGateCollector(g *txgate.Gate) *gateCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ticketfair_booking_tx_gate_"+name, help, nil, nil)
	}
	return &gateCollector{g: g,
		limit:    d("limit", "Hold and payment transactions the gate lets run at once, as it has learnt."),
		inFlight: d("in_flight", "Hold and payment transactions running."),
		queue:    d("waiting", "Hold and payment transactions queued in the gate.")}
}

func (c *gateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.limit
	ch <- c.inFlight
	ch <- c.queue
}

func (c *gateCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(c.g.Limit()))
	ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(c.g.InFlight()))
	ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(c.g.Waiting()))
}
