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
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
)

func init() {
	register("migrate", "apply the database schema, then seed the event's seating or venue", runMigrate)
}

// runMigrate is safe to run from several pods at once: goose holds an
// advisory lock while migrating and the seeding never overwrites a seat.
func runMigrate(ctx context.Context, args []string) error {
	var cfg config.Booking
	if err := config.Load(flag.NewFlagSet("migrate", flag.ContinueOnError), args, &cfg); err != nil {
		return err
	}
	// A venue that does not parse fails before the schema changes.
	venue, err := booking.LoadVenue(cfg)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	conn, err := database.ConnConfig(cfg.Postgres)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := migrations.UpConn(ctx, conn); err != nil {
		return err
	}
	slog.Info("migrations applied")
	if venue == nil {
		return nil
	}
	if cfg.EventID <= 0 {
		return fmt.Errorf("migrate: seeding a seating or venue needs TICKETFAIR_EVENT_ID")
	}
	pool, err := database.Pool(ctx, cfg.Postgres)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer pool.Close()
	start := time.Now()
	n, err := booking.SeedVenue(ctx, pool, cfg.EventID, *venue)
	if err != nil {
		return err
	}
	slog.Info("seating seeded", "eventId", cfg.EventID, "sections", len(venue.Sections), "newPlaces", n, "took", time.Since(start))
	return nil
}
