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

package loadtest

import (
	"math"
	"sort"
	"sync"
	"time"
)

// histogram records latencies in logarithmic buckets (about 4% wide), so
// millions of samples take constant memory.
type histogram struct {
	counts [400]uint64
	n      uint64
}

const histBase = 1.04

func bucketOf(d time.Duration) int {
	us := float64(d.Microseconds())
	if us < 1 {
		return 0
	}
	b := int(math.Log(us) / math.Log(histBase))
	if b >= len(histogram{}.counts) {
		b = len(histogram{}.counts) - 1
	}
	return b
}

func (h *histogram) add(d time.Duration) { h.counts[bucketOf(d)]++; h.n++ }

// quantile returns the upper edge of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= target {
			return time.Duration(math.Pow(histBase, float64(i+1))) * time.Microsecond
		}
	}
	return 0
}

// EndpointStats summarises one endpoint in the report.
type EndpointStats struct {
	Endpoint string         `json:"endpoint"`
	Requests uint64         `json:"requests"`
	ByStatus map[int]uint64 `json:"byStatus"`
	Errors   uint64         `json:"errors"` // transport errors and 5xx
	// FirstError is the first transport error's text (status 0), if any.
	FirstError string  `json:"firstError,omitempty"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
}

type endpoint struct {
	hist       histogram
	byStatus   map[int]uint64
	errors     uint64
	firstError string
}

// recorder collects per-endpoint figures from many goroutines.
type recorder struct {
	mu        sync.Mutex
	endpoints map[string]*endpoint
	total     uint64
}

func newRecorder() *recorder { return &recorder{endpoints: map[string]*endpoint{}} }

// record notes one request; status 0 means a transport error, err's.
func (r *recorder) record(name string, status int, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.endpoints[name]
	if e == nil {
		e = &endpoint{byStatus: map[int]uint64{}}
		r.endpoints[name] = e
	}
	e.hist.add(d)
	e.byStatus[status]++
	if status == 0 || status >= 500 {
		e.errors++
	}
	if err != nil && e.firstError == "" {
		e.firstError = err.Error()
	}
	r.total++
}

func (r *recorder) requests() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

func (r *recorder) snapshot() []EndpointStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]EndpointStats, 0, len(r.endpoints))
	for name, e := range r.endpoints {
		by := make(map[int]uint64, len(e.byStatus))
		for k, v := range e.byStatus {
			by[k] = v
		}
		out = append(out, EndpointStats{
			Endpoint: name, Requests: e.hist.n, ByStatus: by, Errors: e.errors, FirstError: e.firstError,
			P50Ms: ms(e.hist.quantile(0.5)), P99Ms: ms(e.hist.quantile(0.99)),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint < out[j].Endpoint })
	return out
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }
