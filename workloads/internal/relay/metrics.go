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

package relay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	published prometheus.Counter
	errors    prometheus.Counter
	pruned    prometheus.Counter
	batch     prometheus.Histogram
	latency   prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, pool *pgxpool.Pool, leader *atomic.Bool) *metrics {
	m := &metrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_relay_published_total", Help: "Outbox rows published and acknowledged by the broker (rate = published/s).",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_relay_publish_errors_total", Help: "Batches that failed to publish or mark and were retried.",
		}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_relay_pruned_total", Help: "Published outbox rows deleted after the retention.",
		}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_relay_batch_duration_seconds", Help: "Claim, publish and mark of one batch.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_relay_outbox_to_ack_seconds", Help: "Time from the outbox row's creation to the broker's acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.published, m.errors, m.pruned, m.batch, m.latency,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "ticketfair_relay_active", Help: "1 while this replica holds the outbox lock and publishes.",
			}, func() float64 {
				if leader.Load() {
					return 1
				}
				return 0
			}),
			&backlogCollector{pool: pool,
				backlog: prometheus.NewDesc("ticketfair_relay_outbox_backlog", "Unpublished outbox rows.", nil, nil),
				oldest:  prometheus.NewDesc("ticketfair_relay_outbox_oldest_unpublished_age_seconds", "Age of the oldest unpublished outbox row (0 when none).", nil, nil),
			})
	}
	return m
}

// backlogCollector reads the backlog from the database at scrape time, so
// every replica reports it, active or not.
type backlogCollector struct {
	pool            *pgxpool.Pool
	backlog, oldest *prometheus.Desc
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.backlog; ch <- c.oldest }

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var n int64
	var age float64
	err := c.pool.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
		FROM outbox WHERE published_at IS NULL`).Scan(&n, &age)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.backlog, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}
