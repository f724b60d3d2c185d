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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics live on the service's own registry, so several services can run
// in one process.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.HistogramVec
	redisErrors *prometheus.CounterVec
	waiting     prometheus.Gauge
	active      prometheus.Gauge
	choosing    prometheus.Gauge
	admitted    prometheus.Counter
	rate        prometheus.Gauge
	leader      prometheus.Gauge
	epoch       prometheus.Gauge
	maxActive   prometheus.Gauge
	salesOpen   prometheus.Gauge
	tickSeconds prometheus.Histogram
	// joinRefused counts the joins refused with a 4xx of the join's checks
	// (the access code, the phase, proof of work, rate limits), by code.
	joinRefused *prometheus.CounterVec
	// admitRate is the rate the admitter admits at; holdP99 and
	// autotuneActions show autotune's input and choices (autotune.go).
	admitRate       prometheus.Gauge
	holdP99         prometheus.Gauge
	autotuneActions *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ticketfair_queue_request_seconds", Help: "Queue API requests by operation and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"op", "code"}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_queue_redis_errors_total", Help: "Failed Redis calls by operation.",
		}, []string{"op"}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_waiting", Help: "Customers waiting in the queue (snapshot)."}),
		active:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_active_sessions", Help: "Sessions in seat selection."}),
		choosing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_choosing_sessions",
			Help: "People the admitter counted as still choosing seats at its last admitting tick: recent sessions without a hold, for whom it keeps seats free."}),
		admitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_queue_admitted_total", Help: "Customers admitted by this pod's admitter."}),
		rate:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_admission_rate", Help: "Admissions per second observed over the last ~10 s."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_leader", Help: "1 while this pod's admitter runs."}),
		epoch: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_admitter_epoch",
			Help: "The fencing epoch this pod's admitter took when it last started leading (0: never)."}),
		maxActive: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_max_active", Help: "maxActive: the most sessions in seat selection at once (live setting)."}),
		salesOpen: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_sales_open", Help: "1 once salesOpenAt has passed (snapshot)."}),
		tickSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_queue_admit_tick_seconds", Help: "Duration of one admission tick (one Lua script).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		joinRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_queue_join_refused_total", Help: "Joins refused by the join's checks, by reason (the error code)."}, []string{"reason"}),
		admitRate: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_admit_rate",
			Help: "Admissions per second this pod's admitter admits at: autotune's choice, or the configured rate (set while it leads)."}),
		holdP99: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketfair_queue_autotune_hold_p99_seconds",
			Help: "Booking's server-side hold p99 as autotune last read it (the worst replica's, over its recent window)."}),
		autotuneActions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ticketfair_queue_autotune_periods_total",
			Help: "Autotune's control periods by action: cut, raise, hold, blind (no health figures from booking: hold)."}, []string{"action"}),
	}
	m.reg.MustRegister(m.admitRate, m.holdP99, m.autotuneActions, m.joinRefused, m.requests, m.redisErrors, m.waiting, m.active, m.choosing, m.admitted, m.rate, m.leader, m.epoch, m.maxActive, m.salesOpen, m.tickSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Exposed at 0 from the start, so rates and alerts see the first error.
	for _, op := range []string{"join", "poll", "leave", "stats", "snapshot", "epoch", "admit", "autotune"} {
		m.redisErrors.WithLabelValues(op)
	}
	return m
}
