package main

import (
	"context"
	"flag"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/queue"
)

func init() {
	register("queue", "the waiting room (join, poll, leave) and its admitter (Redis, Lease)", runQueue)
}

func runQueue(ctx context.Context, args []string) error {
	var cfg config.Queue
	if err := config.Load(flag.NewFlagSet("queue", flag.ContinueOnError), args, &cfg); err != nil {
		return err
	}
	return queue.Run(ctx, cfg, nil)
}
