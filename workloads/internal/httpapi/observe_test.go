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

package httpapi

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestObserveCountsEveryStatus races requests answering different statuses
// (explicit, implicit 200, an informational 103 before the final one)
// through a real server and checks that every request is counted once,
// under its final status and the curried labels.
func TestObserveCountsEveryStatus(t *testing.T) {
	reg := prometheus.NewRegistry()
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "req_seconds", Help: "x"}, []string{"route", "code"})
	reg.MustRegister(vec)
	h := Observe(vec, prometheus.Labels{"route": "r"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		switch code {
		case 200:
			_, _ = w.Write([]byte("implicit"))
		case 204:
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(code)
		default:
			w.WriteHeader(code)
			w.WriteHeader(http.StatusTeapot) // superfluous: the first status stands
		}
		// The connection's writer is reachable through the wrapper.
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the wrapper: %v", err)
		}
	}))
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the superfluous WriteHeader is meant
	srv.Start()

	codes := []int{200, 201, 204, 404, 409, 503}
	const perCode = 60
	var wg sync.WaitGroup
	for _, code := range codes {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perCode / 4 {
					resp, err := http.Get(fmt.Sprintf("%s/?code=%d", srv.URL, code))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != code {
						t.Errorf("status %d, want %d", resp.StatusCode, code)
					}
				}
			}()
		}
	}
	wg.Wait()
	// The handler flushed its answer before returning, so a client can be
	// done before its request is observed; Close waits for every handler.
	srv.Close()

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] != "r" {
				t.Errorf("labels %v: want route=r", labels)
			}
			got[labels["code"]] += m.GetHistogram().GetSampleCount()
		}
	}
	if len(got) != len(codes) {
		t.Errorf("codes counted %v, want exactly %v", got, codes)
	}
	for _, code := range codes {
		if n := got[strconv.Itoa(code)]; n != perCode {
			t.Errorf("code %d counted %d times, want %d", code, n, perCode)
		}
	}
}

// BenchmarkObserve is the instrumentation's own cost per request.
//
//	go test -run '^$' -bench Observe ./workloads/internal/httpapi/
func BenchmarkObserve(b *testing.B) {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "x", Help: "x"}, []string{"op", "code"})
	h := Observe(vec, prometheus.Labels{"op": "join"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
