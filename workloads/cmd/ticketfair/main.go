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
