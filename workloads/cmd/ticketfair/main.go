// Command ticketfair runs every ticketfair workload; the first argument
// picks one (queue, booking, relay, tickets, migrate, demo, loadtest), so a
// single image serves every Deployment. Each workload lives in its own file
// of this package and registers itself in init.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string) error) {
	commands[name] = command{summary: summary, run: run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ticketfair <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'ticketfair <command> -h' for the flags of a command; every flag also has a TICKETFAIR_* environment variable.")
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ticketfair: unknown command %q\n\n", args[0])
		usage()
		return 2
	}
	setupLogging()
	// SIGTERM (Kubernetes) and SIGINT (Ctrl-C) start a graceful shutdown.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := cmd.run(ctx, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		slog.Error("ticketfair "+args[0]+" failed", "err", err)
		return 1
	}
	return 0
}

// setupLogging logs JSON to stderr at TICKETFAIR_LOG_LEVEL (default info);
// TICKETFAIR_LOG_FORMAT=text gives human-readable lines.
func setupLogging() {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("TICKETFAIR_LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if os.Getenv("TICKETFAIR_LOG_FORMAT") == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	slog.SetDefault(slog.New(h))
}
