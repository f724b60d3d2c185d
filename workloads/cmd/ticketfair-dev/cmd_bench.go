package main

import (
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/bench"
)

func init() {
	register("bench", "measure joins/s, polls/s and holds/s against redis-benchmark, pgbench and a plain Go handler", runBench)
}

func runBench(ctx context.Context, args []string) error {
	o := bench.Options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "length of each measurement")
	fs.IntVar(&o.Concurrency, "concurrency", 64, "closed-loop clients of the HTTP measurements")
	fs.StringVar(&o.Markdown, "out", "", "also write the results table to this file")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (load generator and the services it runs in process) to this file, for go tool pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	_, err := bench.Run(ctx, o)
	return err
}
