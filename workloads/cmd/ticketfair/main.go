// Command ticketfair runs every ticketfair service: the first argument
// picks one (queue, booking, relay, tickets, migrate, edge, check-install),
// so a single image serves every Deployment. Each lives in its own file of
// this package and registers itself in init. The tools of development (the
// local sale, the load generator, the benchmark, the audit) are in
// ticketfair-dev, so the production binary carries none of them.
package main

import (
	"context"
	"os"

	"github.com/ticketfair/ticketfair/workloads/internal/subcmd"
)

var commands = subcmd.New("ticketfair",
	"Run 'ticketfair <command> -h' for the flags of a command; every flag also has a TICKETFAIR_* environment variable.")

func register(name, summary string, run func(ctx context.Context, args []string) error) {
	commands.Register(name, summary, run)
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int { return commands.Run(args) }
