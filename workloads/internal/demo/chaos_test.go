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

package demo

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/chaos"
)

var fullPlan = flag.Bool("chaos-full", false, "run the full fault plan (chaos.DefaultPlan) at the size of make chaos instead of the small one")

// A sale while every part breaks once: kills of the admitting queue
// replica, a booking replica, the relay and tickets; Redis restarted
// without and with persistence; a PostgreSQL fast restart; a broker
// outage; latency, blackholes and resets between booking and PostgreSQL
// and between the queue and Redis. Kafka is a three-node Apache Kafka
// cluster (KRaft, three replicas, min.insync.replicas 2): the outage
// SIGKILLs every node, and a later fault one of them. The audit must hold: nothing sold twice,
// one ticket per sold seat, the outbox drained, every accepted payment
// paid or refunded once, nobody admitted twice in one Redis lifetime, FIFO,
// MAX_ACTIVE, and the customers whose places Redis lost joined again.
func TestSaleUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	requireServers(t)
	bin := testenv.BuildWorkloads(t)

	o := DefaultOptions()
	o.Phases = false // one general queue: this sale tests something else
	o.Kafka, o.KafkaNodes = KafkaApache, 3
	text := chaos.SmallPlan
	o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 4000, 2000, 100, 30
	o.OpensIn, o.HoldTTL, o.Seed = 4*time.Second, 8*time.Second, 7
	o.Profile = "prequeue=0.05,joinwindow=40s"
	if *fullPlan {
		text = chaos.DefaultPlan
		o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 50000, 10000, 500, 35
		o.OpensIn, o.HoldTTL = 8*time.Second, 20*time.Second
		o.Profile = "joinwindow=150s"
	}
	plan, err := chaos.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	o.Faults = &plan
	o.Binary, o.Deadline = bin, 10*time.Minute
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(context.Background(), o)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("%v\n(plan and seed above: replay with ticketfair-dev demo --faults <plan file> --seed %d)", err, o.Seed)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\nseed %d, plan:\n%s", append(args, o.Seed, plan)...)
	}
	if rep.Faults == nil || len(rep.Faults.Windows) != len(plan.Faults)+1 {
		fail("fault windows missing from the report: %+v", rep.Faults)
	}
	for _, w := range rep.Faults.Windows {
		if w.Error != "" {
			fail("fault %s: %s", w.Fault, w.Error)
		}
		if strings.Contains(w.Fault, "kill queue-admitter") && w.Target != "queue" && w.Target != "queue-2" {
			fail("the admitter kill hit %q", w.Target)
		}
	}
	if rep.SeatsSold == 0 || rep.TicketsIssued != rep.SeatsSold || rep.DoubleSold.Total() != 0 || rep.OutboxUnpublished != 0 {
		fail("sold %d, tickets %d, double-sold %+v, outbox %d", rep.SeatsSold, rep.TicketsIssued, rep.DoubleSold, rep.OutboxUnpublished)
	}
	if rep.PaidWebhooks.Delivered == 0 || rep.PaidWebhooks.Broken != 0 {
		fail("accepted payments %+v", rep.PaidWebhooks)
	}
	if rep.Fairness.AdmittedTwice != 0 || rep.Fairness.PostOpenInversions != 0 || rep.Fairness.PostOpenAdmitted == 0 {
		fail("fairness %+v", rep.Fairness)
	}
	if rep.Crowd.MaxActiveSample > int64(o.MaxActive) {
		fail("active %d above MAX_ACTIVE %d", rep.Crowd.MaxActiveSample, o.MaxActive)
	}
	// The Redis restart without persistence lost places, and their
	// customers got new ones; the one with the append-only file lost none.
	if rep.RedisLifetimes != 2 || rep.Crowd.PlacesLost == 0 || rep.Crowd.Rejoined == 0 || rep.Crowd.RejoinFailed != 0 {
		fail("redis lifetimes %d, places lost %d, rejoined %d, could not %d", rep.RedisLifetimes, rep.Crowd.PlacesLost, rep.Crowd.Rejoined, rep.Crowd.RejoinFailed)
	}
}

// A sale on Sentinel (master, replica, three sentinels) whose master is
// SIGKILLed mid-sale while the loadtest's crowd joins, polls, buys and
// pays: the sentinels promote the replica, every service follows them,
// and the audit holds as ever. The report gives the failover's seconds of
// unavailability and the places lost through asynchronous replication.
func TestSaleOnSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	requireServers(t)
	bin := testenv.BuildWorkloads(t)
	plan, err := chaos.Parse(chaos.SentinelPlan)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Phases = false // one general queue: this sale tests something else
	o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 3000, 1000, 80, 30
	o.OpensIn, o.HoldTTL, o.Seed = 3*time.Second, 8*time.Second, 11
	o.Profile = "prequeue=0.05,joinwindow=30s"
	o.Faults, o.RedisMode = &plan, "sentinel"
	o.Binary, o.Deadline = bin, 6*time.Minute
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(context.Background(), o)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("%v\n(replay with ticketfair-dev demo --redis-mode sentinel --faults sentinel --seed %d)", err, o.Seed)
	}
	if rep.Faults == nil || len(rep.Faults.Windows) != 2 {
		t.Fatalf("fault windows missing from the report: %+v", rep.Faults)
	}
	if w := rep.Faults.Windows[0]; w.Error != "" || !strings.Contains(w.Note, "sentinels promoted") {
		t.Fatalf("failover window %+v", w)
	}
	if rep.SeatsSold == 0 || rep.TicketsIssued != rep.SeatsSold || rep.DoubleSold.Total() != 0 || rep.OutboxUnpublished != 0 {
		t.Fatalf("sold %d, tickets %d, double-sold %+v, outbox %d", rep.SeatsSold, rep.TicketsIssued, rep.DoubleSold, rep.OutboxUnpublished)
	}
	if rep.PaidWebhooks.Delivered == 0 || rep.PaidWebhooks.Broken != 0 {
		t.Fatalf("accepted payments %+v", rep.PaidWebhooks)
	}
	if rep.Fairness.AdmittedTwice != 0 || rep.Fairness.PostOpenInversions != 0 || rep.Fairness.PostOpenAdmitted == 0 {
		t.Fatalf("fairness %+v", rep.Fairness)
	}
	if rep.Crowd.MaxActiveSample > int64(o.MaxActive) || rep.Crowd.RejoinFailed != 0 {
		t.Fatalf("active %d (MAX_ACTIVE %d), rejoins failed %d", rep.Crowd.MaxActiveSample, o.MaxActive, rep.Crowd.RejoinFailed)
	}
}
