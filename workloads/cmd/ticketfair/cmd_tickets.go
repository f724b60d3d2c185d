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

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

func init() {
	register("tickets", "issue tickets from ticket-issued and serve them to their customers", func(ctx context.Context, args []string) error {
		var cfg config.Tickets
		if err := config.Load(flag.NewFlagSet("tickets", flag.ContinueOnError), args, &cfg); err != nil {
			return err
		}
		return tickets.Run(ctx, cfg, nil)
	})
}
