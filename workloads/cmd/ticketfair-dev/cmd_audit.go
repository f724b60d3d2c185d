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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/demo"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
)

func init() {
	register("audit", "check a sale driven by loadtest: nothing sold twice, one ticket per seat, fair admission", runAudit)
}

func runAudit(ctx context.Context, args []string) error {
	var cfg demo.AuditConfig
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.Int64Var(&cfg.EventID, "event-id", 1, "event id")
	fs.IntVar(&cfg.MaxActive, "max-active", 0, "the highest admission.maxActive of the sale")
	result := fs.String("loadtest-json", "", "the result of `ticketfair-dev loadtest --report-json`")
	reportJSON := fs.String("report-json", "", "also write the report as JSON to this file")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the last paid seats' tickets")
	phases := fs.String("phases", "", "the sale's phases as JSON, the queue's TICKETFAIR_PHASES: checks weights, access codes and openings (default: a sale without phases)")
	venueFile := fs.String("venue-file", "", "the sale's venue as JSON (booking's TICKETFAIR_VENUE): its standing areas' capacities (default: the places seeded)")
	openAt := fs.String("sales-open-at", "", "RFC 3339 opening time of the sale (the first phase's): the report times the sell-out tail from it (default: no tail row)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ticketfair-dev audit [flags]\n\nThe sale's records come from the environment: TICKETFAIR_AUDIT_DATABASE_URL (PostgreSQL)\nand TICKETFAIR_AUDIT_REDIS_URL (Redis). Exits 1 when a promise was broken.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.DatabaseURL = os.Getenv("TICKETFAIR_AUDIT_DATABASE_URL")
	if err := config.Defaults(&cfg.Redis); err != nil {
		return err
	}
	cfg.Redis.RedisURL = os.Getenv("TICKETFAIR_AUDIT_REDIS_URL")
	if cfg.DatabaseURL == "" || cfg.Redis.RedisURL == "" || *result == "" || cfg.MaxActive <= 0 {
		fs.Usage()
		return errors.New("set TICKETFAIR_AUDIT_DATABASE_URL, TICKETFAIR_AUDIT_REDIS_URL, -loadtest-json and -max-active")
	}
	if *openAt != "" {
		t, err := time.Parse(time.RFC3339, *openAt)
		if err != nil {
			return fmt.Errorf("-sales-open-at: %w", err)
		}
		cfg.SalesOpenAt = t
	}
	if *venueFile != "" {
		v, err := booking.ReadVenueFile(*venueFile)
		if err != nil {
			return fmt.Errorf("-venue-file: %w", err)
		}
		cfg.Venue = v
	}
	if *phases != "" {
		if err := json.Unmarshal([]byte(*phases), &cfg.Phases); err != nil {
			return fmt.Errorf("-phases: %w", err)
		}
	}
	b, err := os.ReadFile(*result)
	if err != nil {
		return err
	}
	var res loadtest.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", *result, err)
	}
	wctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	rep, err := demo.Audit(wctx, cfg, &res)
	if err != nil {
		return err
	}
	rep.Print(os.Stdout)
	if *reportJSON != "" {
		out, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*reportJSON, out, 0o644); err != nil {
			return err
		}
	}
	if len(rep.Problems) > 0 {
		return errors.New("the sale's audit failed: " + strings.Join(rep.Problems, "; "))
	}
	return nil
}
