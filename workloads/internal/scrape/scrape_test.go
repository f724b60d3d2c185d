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

package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// A real registry served over HTTP: counters, gauges and histograms are
// summed by label, as the demo and the bench read the services.
func TestMetricsAndSum(t *testing.T) {
	reg := prometheus.NewRegistry()
	reqs := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "req_seconds"}, []string{"op"})
	leader := prometheus.NewGauge(prometheus.GaugeOpts{Name: "leader"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "errors_total"}, []string{"dep"})
	reg.MustRegister(reqs, leader, errs)
	for op, n := range map[string]int{"join": 3, "poll": 5, "state": 7} {
		for range n {
			reqs.WithLabelValues(op).Observe(0.01)
		}
	}
	leader.Set(1)
	errs.WithLabelValues("redis").Add(2)
	errs.WithLabelValues("database").Add(4)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	f, err := Metrics(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, label string
		values      []string
		want        float64
	}{
		{"req_seconds", "op", []string{"state", "poll"}, 12},
		{"req_seconds", "op", []string{"join"}, 3},
		{"req_seconds", "", nil, 15},
		{"req_seconds", "op", []string{"leave"}, 0},
		{"leader", "", nil, 1},
		{"errors_total", "dep", []string{"database"}, 4},
		{"missing", "", nil, 0},
	} {
		if got := Sum(f[c.name], c.label, c.values...); got != c.want {
			t.Errorf("Sum(%s, %s=%v) = %v, want %v", c.name, c.label, c.values, got, c.want)
		}
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	if _, err := Metrics(context.Background(), down.Client(), down.URL); err == nil {
		t.Error("a /metrics answering 503 read without an error")
	}
}

// A real Redis: its INFO commandstats and cpu as the demo and bench read them.
func TestRedisInfo(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	stats := func(field string) map[string]int64 {
		t.Helper()
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return CommandStats(info, field)
	}
	// Differences: the server may be shared with other tests.
	calls0, usec0 := stats("calls"), stats("usec")
	for range 3 {
		rdb.Set(ctx, "k", "v", 0)
	}
	rdb.Get(ctx, "k")
	calls, usec := stats("calls"), stats("usec")
	if calls["set"]-calls0["set"] < 3 || calls["get"]-calls0["get"] < 1 || usec["info"] <= usec0["info"] || calls["info"] <= calls0["info"] {
		t.Fatalf("calls %v then %v, usec %v then %v", calls0, calls, usec0, usec)
	}
	cpu, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	if CPUSeconds(cpu) <= 0 {
		t.Fatalf("no CPU time in %q", cpu)
	}
}
