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
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Server is the HTTP side of a service: where it listens, what it serves
// and how it stops (see ServeDrain).
type Server struct {
	Addr    string
	Handler http.Handler
	// Drain keeps answering, with Connection: close, this long after the
	// stop; Grace then bounds the graceful shutdown.
	Drain, Grace time.Duration
	// Ready, when not nil, receives the bound address once listening.
	Ready func(net.Addr)
}

// Background is a loop a service runs beside its server (a sweeper, a
// consumer, an admitter). It runs until ctx ends; an error stops the
// service (nil: the loop is simply done).
type Background func(ctx context.Context) error

// Run is every service's lifecycle: it serves srv and runs the background
// loops in one errgroup. Cancelling ctx (SIGTERM) stops the loops (an
// admitter hands its Lease over at once) and drains, then shuts down, the
// server. A loop's error stops the server and the other loops and is
// returned; a clean stop returns nil. Run returns only once the server has
// shut down and every loop has returned.
func Run(ctx context.Context, srv Server, background ...Background) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, fn := range background {
		g.Go(func() error {
			err := fn(gctx)
			if gctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil // stopped by the stop
			}
			return err
		})
	}
	// gctx ends with ctx or with a loop's error: either stops the server.
	g.Go(func() error { return ServeDrain(gctx, srv.Addr, srv.Handler, srv.Drain, srv.Grace, srv.Ready) })
	return g.Wait()
}

// Observe records every request of h in obs, a histogram of request
// durations with a "code" label (the response status, as promhttp counts
// it) and the labels given (e.g. route: the mux pattern). Each status
// code's observer is resolved once: promhttp's InstrumentHandlerDuration
// builds and hashes a label map on every request, which cost about as much
// as verifying the join's identity token.
func Observe(obs prometheus.ObserverVec, labels prometheus.Labels, h http.Handler) http.Handler {
	codes := &codeObservers{vec: obs.MustCurryWith(labels)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		codes.get(sw.status()).Observe(time.Since(start).Seconds())
	})
}

// codeObservers caches a curried vec's observer per status code: reads
// are a lock-free map lookup, and a code seen for the first time copies
// the map under the lock.
type codeObservers struct {
	vec prometheus.ObserverVec
	mu  sync.Mutex
	m   atomic.Pointer[map[int]prometheus.Observer]
}

func (c *codeObservers) get(code int) prometheus.Observer {
	if m := c.m.Load(); m != nil {
		if o, ok := (*m)[code]; ok {
			return o
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := map[int]prometheus.Observer{}
	if m := c.m.Load(); m != nil {
		if o, ok := (*m)[code]; ok {
			return o
		}
		maps.Copy(next, *m)
	}
	o := c.vec.WithLabelValues(strconv.Itoa(code))
	next[code] = o
	c.m.Store(&next)
	return o
}

// statusWriter remembers the status a handler answered with. Unwrap lets
// http.ResponseController reach the connection's writer (flush, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the answered status; a handler that wrote nothing answered 200.
func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Check is one readiness condition: Fn returns nil when it holds, an
// *Error (its code and message are shown) or another error (shown as
// unavailable) when not.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// probeTimeout bounds all of a readiness probe's checks.
const probeTimeout = 2 * time.Second

// Probes registers every service's liveness and readiness probes on mux:
// GET /healthz answers {"status":"ok"} while the process serves; GET
// /readyz runs the checks and answers {"status":"ok"} when all hold, or
// 503 with the error body naming the failing checks (the code is the first
// failure's).
func Probes(mux *Mux, checks ...Check) {
	mux.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	mux.Handle("GET /readyz", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
		defer cancel()
		var first *Error
		var failed []string
		for _, c := range checks {
			err := c.Fn(ctx)
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) {
				e = Unavailable(c.Name, err)
			}
			if first == nil {
				first = e
			}
			failed = append(failed, c.Name+": "+e.Message)
		}
		if first == nil {
			WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return nil
		}
		e := *first
		e.Status = http.StatusServiceUnavailable
		e.Message = "not ready: " + strings.Join(failed, "; ")
		if e.RetryAfter == 0 {
			e.RetryAfter = time.Second
		}
		e.Dependency = "" // a probe is not a request that failed
		return &e
	}))
}
