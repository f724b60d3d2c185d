package main

import (
	"context"
	"flag"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/relay"
)

func init() {
	register("relay", "publish the outbox to Kafka (one active replica per database)", func(ctx context.Context, args []string) error {
		var cfg config.Relay
		if err := config.Load(flag.NewFlagSet("relay", flag.ContinueOnError), args, &cfg); err != nil {
			return err
		}
		return relay.Run(ctx, cfg, nil)
	})
}
