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
	"flag"
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
	fs.BoolVar(&o.HoldsOnly, "holds-only", false, "run the hold measurements alone (pgbench hold_seats, booking.Store, HTTP); -out is not written")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the HTTP holds (the bench serves them in-process) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, err := bench.Run(ctx, o)
	return err
}
