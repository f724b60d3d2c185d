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
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/txgate"
)

// metrics live on the service's own registry, so several services can run
// in one process (the local sale).
type metrics struct {
	reg       *prometheus.Registry
	holds     *prometheus.CounterVec
	confirms  *prometheus.CounterVec
	refunds   *prometheus.CounterVec
	sweeps    *prometheus.CounterVec
	sweptRows *prometheus.CounterVec
	remaining prometheus.Gauge
	seats     *prometheus.GaugeVec
	lastSweep prometheus.Gauge
	depErrors *prometheus.CounterVec
	// providerRefunds counts refunds the payment provider reports (Stripe's charge.refunded).
	providerRefunds *prometheus.CounterVec
	reqDuration     *prometheus.HistogramVec
	holdDuration    prometheus.Histogram
	holdChecks      prometheus.Histogram
	gateWait        prometheus.Histogram
}

func newMetrics(pool *pgxpool.Pool, gate *txgate.Gate) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		holds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_holds_total", Help: "Hold requests by result (ok, conflict, limit, rejected, error).",
		}, []string{"result"}),
		confirms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_confirms_total", Help: "Payment confirmations by result (paid, refund, replay, rejected, error).",
		}, []string{"result"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_refunds_total", Help: "Orders that became REFUND_REQUIRED, by reason.",
		}, []string{"reason"}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_sweeper_runs_total", Help: "Sweeper runs by result (ok, error).",
		}, []string{"result"}),
		sweptRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_sweeper_rows_total", Help: "What the sweeper changed: expired seats freed, orders expired, queue sessions of expired orders released.",
		}, []string{"kind"}),
		remaining: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ticketfair_booking_remaining_seats", Help: "Seats AVAILABLE or HELD at the last sweep.",
		}),
		seats: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ticketfair_booking_seats", Help: "Seats by state (available, held, sold) at the last sweep.",
		}, []string{"state"}),
		lastSweep: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ticketfair_booking_sweeper_last_success_timestamp_seconds", Help: "Unix time of the sweeper's last successful run (0: none yet).",
		}),
		depErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_dependency_errors_total", Help: "Requests and sweeps that failed because a dependency (database, session store) was unavailable.",
		}, []string{"dependency"}),
		providerRefunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_booking_provider_refunds_total", Help: "Refunds the payment provider reported, by the order's status (REFUND_REQUIRED: asked for; PAID: made outside ticketfair).",
		}, []string{"order_status"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ticketfair_booking_http_request_duration_seconds", Help: "HTTP request latency by route and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "code"}),
		holdDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_booking_hold_transaction_seconds", Help: "Latency of the hold transaction, retries included, without the wait in the gate.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		holdChecks: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_booking_hold_checks_seconds", Help: "Latency of a hold's checks before its transaction: the access token, the rate limit and the session in Redis.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		gateWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_booking_tx_gate_wait_seconds", Help: "Wait of hold and payment transactions in the gate that keeps PostgreSQL's load steady.",
			Buckets: []float64{.0001, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
	}
	m.reg.MustRegister(m.holds, m.confirms, m.refunds, m.sweeps, m.sweptRows, m.remaining, m.seats, m.lastSweep, m.depErrors, m.providerRefunds, m.reqDuration, m.holdDuration, m.holdChecks, m.gateWait,
		// The scheduler's latencies show how long goroutines waited for a CPU.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Exposed at 0 from the start, so rates and alerts see the first event.
	for _, r := range []string{"ok", "conflict", "limit", "rejected", "error"} {
		m.holds.WithLabelValues(r)
	}
	for _, r := range []string{"paid", "refund", "replay", "rejected", "error"} {
		m.confirms.WithLabelValues(r)
	}
	for _, r := range []string{ReasonSeatTaken, ReasonAmountMismatch, ReasonSeatLimit, ReasonOrderSettled} {
		m.refunds.WithLabelValues(r)
	}
	for _, d := range []string{"database", "session_store"} {
		m.depErrors.WithLabelValues(d)
	}
	for _, r := range []string{"ok", "error"} {
		m.sweeps.WithLabelValues(r)
	}
	m.reg.MustRegister(newPoolCollector(pool), newGateCollector(gate))
	return m
}

// poolCollector reads pgxpool.Stat at scrape time: connection counts are
// gauges, the pool's running totals (acquires that waited, time waited)
// counters.
type poolCollector struct {
	pool                                                *pgxpool.Pool
	acquired, idle, total, max, acquires, empty, waited *prometheus.Desc
}

func newPoolCollector(pool *pgxpool.Pool) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ticketfair_booking_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{pool: pool,
		acquired: d("acquired_conns", "Connections in use."),
		idle:     d("idle_conns", "Idle connections."),
		total:    d("total_conns", "Open connections."),
		max:      d("max_conns", "Pool size."),
		acquires: d("acquire_total", "Acquires from the pool."),
		empty:    d("empty_acquire_total", "Acquires that had to wait for a connection."),
		waited:   d("acquire_wait_seconds_total", "Time spent waiting for connections."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.acquires, c.empty, c.waited} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(c.acquired, prometheus.GaugeValue, float64(st.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(st.IdleConns()))
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(st.TotalConns()))
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(c.acquires, prometheus.CounterValue, float64(st.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.empty, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, st.AcquireDuration().Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// countDependencyError counts err if a dependency was unavailable.
func (m *metrics) countDependencyError(err error) {
	var he *httpapi.Error
	if errors.As(err, &he) && he.Dependency != "" {
		m.depErrors.WithLabelValues(he.Dependency).Inc()
	}
}
