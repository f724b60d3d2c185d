package main

import (
	"context"
	"flag"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

func init() {
	register("tickets", "issue tickets from ticket-issued and serve them to their customers", func(ctx context.Context, args []string) error {
		var cfg config.Tickets
		if err := config.Load(flag.NewFlagSet("tickets", flag.ContinueOnError), args, &cfg); err != nil {
			return err
		}
		return tickets.Run(ctx, cfg, nil)
	})
}
