package main

import (
	"context"
	"flag"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/web"
)

func init() {
	register("edge", "serve the web pages and proxy the services under one origin", runEdge)
}

func runEdge(ctx context.Context, args []string) error {
	var cfg config.Edge
	if err := config.Load(flag.NewFlagSet("edge", flag.ContinueOnError), args, &cfg); err != nil {
		return err
	}
	return web.Run(ctx, cfg, nil)
}
