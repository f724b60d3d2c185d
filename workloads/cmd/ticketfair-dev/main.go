// Command ticketfair-dev carries the tools of development and testing
// that the production binary (ticketfair) does not: demo (a local sale end
// to end, also under a fault plan), loadtest (a simulated crowd against
// any deployment), audit (the checks of a sale driven by loadtest) and
// bench. demo runs the sale's workloads from the ticketfair binary next to
// this one. Each command lives in its own file of this package and
// registers itself in init.
package main

import (
	"context"
	"os"

	"github.com/ticketfair/ticketfair/workloads/internal/subcmd"
)

var commands = subcmd.New("ticketfair-dev",
	"Run 'ticketfair-dev <command> -h' for the flags of a command.")

func register(name, summary string, run func(ctx context.Context, args []string) error) {
	commands.Register(name, summary, run)
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int { return commands.Run(args) }
