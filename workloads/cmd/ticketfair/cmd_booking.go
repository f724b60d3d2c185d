package main

import (
	"context"
	"flag"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
)

func init() {
	register("booking", "seat holds, payment confirmation and the outbox (PostgreSQL)", runBooking)
}

func runBooking(ctx context.Context, args []string) error {
	var cfg config.Booking
	if err := config.Load(flag.NewFlagSet("booking", flag.ContinueOnError), args, &cfg); err != nil {
		return err
	}
	return booking.Run(ctx, cfg, nil)
}
