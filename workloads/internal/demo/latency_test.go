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
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHistogramQuantiles(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "latency_seconds", Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"route"})
	reg.MustRegister(h)
	for range 98 {
		h.WithLabelValues("hold").Observe(.003)
	}
	h.WithLabelValues("hold").Observe(.3)
	h.WithLabelValues("hold").Observe(.4)
	for range 50 {
		h.WithLabelValues("seats").Observe(2) // above every bucket
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	f := families[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

	hold, ok := histogramQuantiles(f, "route", "hold")
	// Rank 50 of 98 in (2.5 ms, 5 ms]; rank 99 is the first of 2 in (250 ms, 500 ms].
	if !ok || hold.Count != 100 || !near(hold.P50, .0025+.0025*50/98) || !near(hold.P99, .375) {
		t.Errorf("hold: %+v", hold)
	}
	// Above the last finite bucket: its bound, as histogram_quantile says.
	if seats, _ := histogramQuantiles(f, "route", "seats"); seats.Count != 50 || seats.P50 != 1 || seats.P99 != 1 {
		t.Errorf("seats: %+v", seats)
	}
	if all, _ := histogramQuantiles(f, "", ""); all.Count != 150 {
		t.Errorf("every series: %+v", all)
	}
	if _, ok := histogramQuantiles(f, "route", "none"); ok {
		t.Error("a label value with no series gave a latency")
	}
	if _, ok := histogramQuantiles(nil, "", ""); ok {
		t.Error("a missing metric gave a latency")
	}
}
