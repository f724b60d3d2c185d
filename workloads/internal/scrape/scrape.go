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

// Package scrape reads what the tools of development (the local sale, the
// benchmark) measure with: a service's Prometheus /metrics, and a Redis
// server's INFO commandstats and cpu. One reader of each, so the figures
// they print are read the same way.
package scrape

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics reads and parses the /metrics of the service at base.
func Metrics(ctx context.Context, hc *http.Client, base string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s/metrics: status %d", base, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// Sum adds the values of f's series whose label is one of values (every
// series when no values are given): a counter's or a gauge's value, a
// histogram's sample count.
func Sum(f *dto.MetricFamily, label string, values ...string) float64 {
	var sum float64
	for _, m := range f.GetMetric() {
		if len(values) > 0 && !HasLabel(m, label, values...) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// HasLabel says whether m's label name has one of values.
func HasLabel(m *dto.Metric, name string, values ...string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return slices.Contains(values, l.GetValue())
		}
	}
	return false
}

// CommandStats reads one field (calls, usec) of each command's line of
// INFO commandstats ("cmdstat_get:calls=10,usec=..."), by command name.
// Commands run inside scripts are counted as well as the scripts.
func CommandStats(info, field string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, field+"="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return out
}

// CPUSeconds is the CPU time of INFO cpu: used_cpu_user + used_cpu_sys.
func CPUSeconds(info string) float64 {
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
