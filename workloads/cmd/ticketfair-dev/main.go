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
