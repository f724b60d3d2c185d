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

package demo

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"

	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
)

// ServerLatency is one operation's latency as the service measured it
// (from its histogram), beside the crowd's own figure, which includes the
// crowd's wait for a CPU on the same machine.
type ServerLatency struct {
	Name  string  `json:"name"`
	Count uint64  `json:"count"`
	P50   float64 `json:"p50Seconds"`
	P99   float64 `json:"p99Seconds"`
}

// serverHistogram names one series set of a service's histogram: metric,
// summed over the series whose label has value.
type serverHistogram struct {
	name, service, metric, label, value string
}

// serverHistograms are the operations the report shows server-side.
var serverHistograms = []serverHistogram{
	{"join", "queue", "ticketfair_queue_request_seconds", "op", "join"},
	{"poll", "queue", "ticketfair_queue_request_seconds", "op", "poll"},
	{"hold", "booking", "ticketfair_booking_http_request_duration_seconds", "route", "POST /events/{eventId}/holds"},
	{"hold checks", "booking", "ticketfair_booking_hold_checks_seconds", "", ""},
	{"hold/payment gate wait", "booking", "ticketfair_booking_tx_gate_wait_seconds", "", ""},
	{"hold transaction", "booking", "ticketfair_booking_hold_transaction_seconds", "", ""},
	{"seats", "booking", "ticketfair_booking_http_request_duration_seconds", "route", "GET /events/{eventId}/seats"},
	{"webhook", "booking", "ticketfair_booking_http_request_duration_seconds", "route", "POST /payments/webhook"},
	{"booking goroutines' CPU wait", "booking", "go_sched_latencies_seconds", "", ""},
}

// PoolWait is booking's PostgreSQL connection pool over the sale: a hold
// or a payment that finds every connection busy waits for one, and that
// wait is in the hold's latency but not in PostgreSQL's statement times.
type PoolWait struct {
	Size        float64 `json:"size"`
	Acquires    float64 `json:"acquires"`
	Waited      float64 `json:"waited"`      // acquires that found no idle connection
	WaitSeconds float64 `json:"waitSeconds"` // all acquires' time, the waits' and the rest
}

// serverLatencies reads serverHistograms from the services' /metrics
// (urls by service name), and booking's pool; a service that is not
// running is left out.
func serverLatencies(ctx context.Context, urls map[string]string) ([]ServerLatency, *PoolWait, error) {
	families := map[string]map[string]*dto.MetricFamily{}
	scraped := func(service string) (map[string]*dto.MetricFamily, error) {
		if families[service] == nil {
			f, err := scrape.Metrics(ctx, http.DefaultClient, urls[service])
			if err != nil {
				return nil, fmt.Errorf("%s metrics: %w", service, err)
			}
			families[service] = f
		}
		return families[service], nil
	}
	var out []ServerLatency
	for _, h := range serverHistograms {
		if _, ok := urls[h.service]; !ok {
			continue
		}
		f, err := scraped(h.service)
		if err != nil {
			return nil, nil, err
		}
		if l, ok := histogramQuantiles(f[h.metric], h.label, h.value); ok {
			l.Name = h.name
			out = append(out, l)
		}
	}
	var pool *PoolWait
	if _, ok := urls["booking"]; ok {
		f, err := scraped("booking")
		if err != nil {
			return nil, nil, err
		}
		const p = "ticketfair_booking_db_pool_"
		if f[p+"acquire_total"] != nil {
			pool = &PoolWait{Size: scrape.Sum(f[p+"max_conns"], ""), Acquires: scrape.Sum(f[p+"acquire_total"], ""),
				Waited: scrape.Sum(f[p+"empty_acquire_total"], ""), WaitSeconds: scrape.Sum(f[p+"acquire_wait_seconds_total"], "")}
		}
	}
	return out, pool, nil
}

// histogramQuantiles sums f's series whose label has value (every series
// when label is "") and estimates the p50 and p99 as Prometheus'
// histogram_quantile does: linearly within the bucket the rank falls in,
// the upper bound of the last finite bucket when it falls above that.
func histogramQuantiles(f *dto.MetricFamily, label, value string) (ServerLatency, bool) {
	if f == nil {
		return ServerLatency{}, false
	}
	cum := map[float64]uint64{}
	var count uint64
	for _, m := range f.GetMetric() {
		if label != "" && !scrape.HasLabel(m, label, value) {
			continue
		}
		h := m.GetHistogram()
		count += h.GetSampleCount()
		for _, b := range h.GetBucket() {
			cum[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	if count == 0 {
		return ServerLatency{}, false
	}
	bounds := make([]float64, 0, len(cum))
	for b := range cum {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	quantile := func(q float64) float64 {
		rank := q * float64(count)
		lower, below := 0.0, uint64(0)
		for _, b := range bounds {
			if math.IsInf(b, 1) {
				break
			}
			if float64(cum[b]) >= rank {
				in := cum[b] - below
				if in == 0 {
					return b
				}
				return lower + (b-lower)*(rank-float64(below))/float64(in)
			}
			lower, below = b, cum[b]
		}
		return lower
	}
	return ServerLatency{Count: count, P50: quantile(0.5), P99: quantile(0.99)}, true
}
