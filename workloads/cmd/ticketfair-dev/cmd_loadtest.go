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
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
)

func init() {
	register("loadtest", "drive a simulated crowd against any ticketfair deployment", runLoadtest)
}

func runLoadtest(ctx context.Context, args []string) error {
	var cfg loadtest.Config
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.StringVar(&cfg.QueueURL, "queue-url", "http://127.0.0.1:8080", "base URL of the queue service")
	fs.StringVar(&cfg.StateURL, "state-url", "", "base URL the queue's public state is read from, e.g. a CDN in front of the queue (default: --queue-url)")
	fs.StringVar(&cfg.BookingURL, "booking-url", "http://127.0.0.1:8081", "base URL of the booking service")
	fs.StringVar(&cfg.TicketsURL, "tickets-url", "http://127.0.0.1:8083", "base URL of the tickets service")
	fs.Int64Var(&cfg.EventID, "event-id", 1, "event id")
	fs.StringVar(&cfg.IdentityIssuer, "identity-issuer", "ticketfair-identity", "iss of the identity tokens the crowd presents")
	fs.StringVar(&cfg.IdentityAudience, "identity-audience", "ticketfair", "aud of the identity tokens")
	fs.StringVar(&cfg.Currency, "currency", "EUR", "currency of payments")
	fs.StringVar(&cfg.TierClaim, "tier-claim", "", "claim of the members' identity tokens that holds their tier (default: the services' default claim)")
	fs.StringVar(&cfg.EmailClaim, "email-claim", "", "put each person's address (<name>@buyers.example) in their identity tokens under this claim and send the token with their holds, so the paid orders' tickets are mailed (empty: no addresses)")
	fs.StringVar(&cfg.MemberTier, "member-tier", loadtest.DefaultMemberTier, "tier the members' identity tokens carry (profile members=F)")
	codes := fs.String("access-codes", "", "CSV of `ticketfair access-codes`: one code for each code holder (profile codeholders=F)")
	openAt := fs.String("sales-open-at", "", "RFC 3339 opening time: customers before it join the pre-queue (default: now)")
	profile := fs.String("profile", "", "crowd overrides: customers=N,prequeue=F,members=F,codeholders=F,joinwindow=D,abandon=F,noclaim=F,holdexpire=F,webhooktwice=F,webhooklate=F,payfail=F,maxseats=N,concurrency=N,seatretries=N,minpoll=D,thinktime=D,ticketpollfor=D,bestavailable=F (0.8),standing=F (0.3 of those),wheelchair=F (0.01),acceptsplit=F (0.5)")
	venueFile := fs.String("venue-file", "", "the sale's venue as JSON (booking's TICKETFAIR_VENUE): best available asks for its categories and standing areas (default: each seated section by name, as the seating shorthand's sections are categories)")
	customers := fs.Int("customers", 1000, "simulated customers")
	reportJSON := fs.String("report-json", "", "write the result as JSON to this file")
	fs.DurationVar(&cfg.Deadline, "deadline", 30*time.Minute, "give up after this long")
	fs.Uint64Var(&cfg.Seed, "seed", uint64(time.Now().UnixNano()), "random seed")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ticketfair-dev loadtest [flags]\n\nSecrets come from the environment: TICKETFAIR_LOADTEST_IDENTITY_SECRET (HS256 secret of identity tokens)\nand TICKETFAIR_LOADTEST_WEBHOOK_SECRET (payment webhook signing secret).\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.IdentitySecret = os.Getenv("TICKETFAIR_LOADTEST_IDENTITY_SECRET")
	cfg.WebhookSecret = os.Getenv("TICKETFAIR_LOADTEST_WEBHOOK_SECRET")
	if cfg.IdentitySecret == "" || cfg.WebhookSecret == "" {
		return errors.New("set TICKETFAIR_LOADTEST_IDENTITY_SECRET and TICKETFAIR_LOADTEST_WEBHOOK_SECRET")
	}
	if *openAt != "" {
		t, err := time.Parse(time.RFC3339, *openAt)
		if err != nil {
			return fmt.Errorf("-sales-open-at: %w", err)
		}
		cfg.SalesOpenAt = t
	}
	if *codes != "" {
		f, err := os.Open(*codes)
		if err != nil {
			return fmt.Errorf("-access-codes: %w", err)
		}
		cfg.AccessCodes, err = loadtest.ReadCodesCSV(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("-access-codes %s: %w", *codes, err)
		}
	}
	if *venueFile != "" {
		v, err := booking.ReadVenueFile(*venueFile)
		if err != nil {
			return fmt.Errorf("-venue-file: %w", err)
		}
		cfg.Venue = v
	}
	p := loadtest.DefaultProfile()
	p.Customers = *customers
	p, err := loadtest.ParseProfile(p, *profile)
	if err != nil {
		return err
	}
	cfg.Profile = p
	cfg.Progress = func(pr loadtest.Progress) {
		fmt.Fprintf(os.Stderr, "\r%6.1fs waiting %7d active %5d held %5d paid seats %6d %7.0f req/s  ", pr.Elapsed.Seconds(), pr.Waiting, pr.Active, pr.Held, pr.Sold, pr.ReqPerSec)
	}
	res, runErr := loadtest.Run(ctx, cfg)
	fmt.Fprintln(os.Stderr)
	if res == nil {
		return runErr
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	if *reportJSON != "" {
		if err := os.WriteFile(*reportJSON, out, 0o644); err != nil {
			return err
		}
	} else {
		fmt.Println(string(out))
	}
	return runErr
}
