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

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
)

// holdSection is the hold measurements of one run: pgbench running
// hold_seats, booking.Store alone, and the whole HTTP hold path, one after
// the other on the same seats.
type holdSection struct {
	pgbenchTPS               float64
	store, http              measurement
	best                     measurement // best available, two together, through the store
	sweptPgbench, sweptStore string
}

// measureHoldSection runs the three hold measurements, sweeping the
// expired holds between them. With o.CPUProfile set, the HTTP holds run
// under a CPU profile of this process, which serves them too: where the
// HTTP path's time goes beside the store's.
func (s *services) measureHoldSection(ctx context.Context, dir string, hc *http.Client, o Options, logf func(string, ...any)) (holdSection, error) {
	var h holdSection
	var err error
	logf("ticketfair: hold_seats run by pgbench on booking's seats ...")
	if h.pgbenchTPS, err = pgbench(ctx, s.databaseURL, dir, "hold_seats", holdSeatsScript, pgbenchClients, int(o.Duration.Seconds())); err != nil {
		return h, err
	}
	if h.sweptPgbench, err = s.sweep(ctx); err != nil {
		return h, err
	}
	logf("ticketfair: holds through booking.Store, as many clients as pgbench ...")
	if h.store, err = s.measureStoreHolds(ctx, o, pgbenchClients); err != nil {
		return h, err
	}
	if h.sweptStore, err = s.sweep(ctx); err != nil {
		return h, err
	}
	logf("ticketfair: best-available holds (2 together) through booking.Store, as many clients ...")
	if h.best, err = s.measureStoreBest(ctx, o, pgbenchClients); err != nil {
		return h, err
	}
	if _, err = s.sweep(ctx); err != nil {
		return h, err
	}
	logf("ticketfair: holds ...")
	tokens, err := s.holdTokens(ctx, 60000)
	if err != nil {
		return h, err
	}
	stop := func() {}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return h, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return h, err
		}
		stop = func() { pprof.StopCPUProfile(); f.Close() }
	}
	h.http = s.measureHolds(ctx, hc, o, tokens)
	stop()
	for name, m := range map[string]measurement{"holds through the store": h.store, "best-available holds": h.best, "holds": h.http} {
		if m.Errors > (m.Ops+m.Errors)/100 {
			return h, fmt.Errorf("bench: %s: %d of %d calls failed, the first: %v", name, m.Errors, m.Ops+m.Errors, m.FirstErr)
		}
	}
	return h, nil
}

// ratioRow is the hold path's figure of merit: HTTP holds against the
// store's own, measured in the same run.
func (h holdSection) ratioRow() Row {
	return Row{What: "booking holds/s (HTTP)", PerSecond: h.http.PerSecond, P50: h.http.P50, P99: h.http.P99,
		Baseline: "booking holds/s (store)", BaselineRPS: h.store.PerSecond}
}

// bestRow compares a best-available hold with a picked one, both through
// the store with as many clients: what finding the seats costs.
func (h holdSection) bestRow() Row {
	return Row{What: "best-available holds/s (store, 2 together)", PerSecond: h.best.PerSecond, P50: h.best.P50, P99: h.best.P99,
		Baseline: "booking holds/s (store, 1 picked seat)", BaselineRPS: h.store.PerSecond}
}

func (h holdSection) rows() []Row {
	return []Row{
		{What: "booking holds/s (store)", PerSecond: h.store.PerSecond, P50: h.store.P50, P99: h.store.P99, Baseline: "pgbench hold_seats", BaselineRPS: h.pgbenchTPS},
		h.bestRow(),
		h.ratioRow(),
	}
}

func (h holdSection) sweepLine() string {
	return fmt.Sprintf("\nbooking's sweep of the expired holds, one connection, batches of 1,000: after pgbench hold_seats %s; after the store's holds %s\n", h.sweptPgbench, h.sweptStore)
}

// runHolds is a run of the hold measurements alone.
func runHolds(ctx context.Context, o Options, dir, redisURL, databaseURL string, logf func(string, ...any)) ([]Row, error) {
	s, err := startServices(ctx, redisURL, databaseURL)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	h, err := s.measureHoldSection(ctx, dir, httpClient(o.Concurrency), o, logf)
	if err != nil {
		return nil, err
	}
	rows := h.rows()
	fmt.Fprint(o.Out, formatRows(rows, o)+h.sweepLine())
	return rows, nil
}
