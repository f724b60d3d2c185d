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
	"fmt"
	"os"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/chaos"
	"github.com/ticketfair/ticketfair/workloads/internal/demo"
)

func init() {
	register("demo", "run a local sale end to end with a simulated crowd and audit it", runDemo)
}

func runDemo(ctx context.Context, args []string) error {
	o := demo.DefaultOptions()
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.IntVar(&o.Customers, "customers", o.Customers, "simulated customers")
	fs.IntVar(&o.Seats, "seats", o.Seats, "places on sale: a standing floor of 30% and four seated stands of uneven rows, in four price categories (see --seating)")
	fs.StringVar(&o.Seating, "seating", o.Seating, "what --seats are: venue (a standing floor, seated stands with aisles, blocked seats and wheelchair places) or sections (four rectangular priced sections, the seating shorthand)")
	fs.Float64Var(&o.BestAvailable, "best-available", o.BestAvailable, "share of the crowd who ask for best available (\"2 in category 1\", or standing places) rather than pick seats; the rest pick (profile bestavailable=F overrides)")
	fs.IntVar(&o.MaxActive, "max-active", o.MaxActive, "most people in seat selection at once")
	fs.IntVar(&o.AdmitRate, "admit-rate", o.AdmitRate, "admissions per second")
	fs.DurationVar(&o.OpensIn, "opens-in", o.OpensIn, "sales open this long after start; earlier joins form the shuffled pre-queue")
	fs.DurationVar(&o.HoldTTL, "hold-ttl", o.HoldTTL, "seat hold lifetime")
	fs.BoolVar(&o.Phases, "phases", o.Phases, "a presale first: members (the member tier) and code holders from --opens-in, everyone --presale-for later, members weighted 3 to 1 (false: one general queue)")
	fs.DurationVar(&o.PresaleFor, "presale-for", o.PresaleFor, "how long the presale runs before the general sale opens")
	fs.Float64Var(&o.Members, "members", o.Members, "share of the crowd who are members, with --phases")
	fs.Float64Var(&o.CodeHolders, "code-holders", o.CodeHolders, "share of the crowd who hold a presale access code, with --phases")
	fs.StringVar(&o.Profile, "profile", "", "crowd overrides, e.g. abandon=0.05,webhooktwice=0.2 (see ticketfair-dev loadtest -h)")
	fs.StringVar(&o.ReportJSON, "report-json", "", "also write the report as JSON to this file")
	fs.IntVar(&o.CrowdNice, "crowd-nice", o.CrowdNice, "niceness of this process (the crowd, the broker, the edge) once the sale's servers run, so the load generator does not starve what it measures (0: none; not with --faults)")
	fs.StringVar(&o.CPUProfiles, "cpu-profiles", "", "write a CPU profile of every Go process of the sale into this directory, and end the report with where the CPU went (with Redis's time per command and the local PostgreSQL's per statement)")
	fs.BoolVar(&o.Keep, "keep", false, "keep logs and server data for inspection")
	fs.StringVar(&o.RedisURL, "redis-url", "", "use this Redis instead of starting one (in sentinel mode: the sentinels)")
	fs.StringVar(&o.RedisMode, "redis-mode", "standalone", "standalone, or sentinel: start a master, a replica and three sentinels, and reach the master through them")
	fs.StringVar(&o.RedisMaster, "redis-master-name", "ticketfair", "sentinel mode: the master's name")
	fs.StringVar(&o.DatabaseURL, "database-url", "", "use this PostgreSQL database instead of starting a server")
	fs.StringVar(&o.Binary, "workloads-binary", "", "the ticketfair service binary the workloads run from (default: ticketfair next to this binary, else on PATH)")
	brokers := fs.String("kafka-brokers", "", "use these Kafka brokers instead of starting one")
	fs.StringVar(&o.Kafka, "kafka", o.Kafka, "the broker the sale starts: embedded (an in-process Kafka-protocol imitation, no Java) or apache (Apache Kafka in KRaft mode from bin/kafka: make kafka)")
	fs.IntVar(&o.KafkaNodes, "kafka-nodes", o.KafkaNodes, "with --kafka apache: the cluster's nodes (3: three replicas, min.insync.replicas 2, so a fault plan can kill one)")
	fs.DurationVar(&o.Deadline, "deadline", o.Deadline, "give up after this long")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "random seed of the crowd")
	fs.BoolVar(&o.Door, "door", o.Door, "mail the tickets through a local SMTP server (Mailpit, from bin/mailpit) and scan buyers at four gates after the sale, from their QR images (zbarimg); the audit checks both")
	fs.IntVar(&o.Bots, "bots", 0, "add this many scripted scalper accounts to the crowd: one client network, one card, a join flood, polls at 20/s, the proof of work solved on every core (the sale then asks for one)")
	fs.IntVar(&o.PowDifficulty, "pow-difficulty", 0, "ask every join for a proof of work of this many bits (0: none, or 8 with --bots)")
	faults := fs.String("faults", "", "run a fault plan during the sale: \"default\" (every fault, full length), \"small\" (every fault once, short), \"sentinel\" (the master of --redis-mode sentinel killed mid-sale) or a plan file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.RedisMode != "standalone" && o.RedisMode != "sentinel" {
		return fmt.Errorf("demo: --redis-mode %q: standalone or sentinel", o.RedisMode)
	}
	if *faults != "" {
		text := map[string]string{"default": chaos.DefaultPlan, "small": chaos.SmallPlan, "sentinel": chaos.SentinelPlan}[*faults]
		if text == "" {
			b, err := os.ReadFile(*faults)
			if err != nil {
				return err
			}
			text = string(b)
		}
		plan, err := chaos.Parse(text)
		if err != nil {
			return err
		}
		o.Faults = &plan
		// A fault plan tests one general queue unless asked for phases:
		// a Redis that loses its data loses the redeemed codes too.
		explicit := false
		fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "phases" })
		if !explicit {
			o.Phases = false
		}
	}
	if *brokers != "" {
		o.KafkaBrokers = strings.Split(*brokers, ",")
	}
	_, err := demo.Run(ctx, o)
	return err
}
