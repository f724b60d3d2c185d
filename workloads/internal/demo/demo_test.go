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
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// A short local sale: real Redis, PostgreSQL, Kafka protocol, and the
// workloads as processes of the real binary; a presale for members and
// code holders, then the general sale (the demo's default phases).
func TestShortSale(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	requireServers(t)
	dir := t.TempDir()
	bin := testenv.BuildWorkloads(t)

	o := DefaultOptions()
	o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 1500, 1000, 150, 100
	o.OpensIn, o.HoldTTL, o.Seed = 4*time.Second, 8*time.Second, 42
	// Members join faster than their share of the admissions, so their
	// queue and the general one both wait once the general sale opens.
	o.PresaleFor, o.Members, o.CodeHolders = time.Second, 0.3, 0.05
	o.Profile = "prequeue=0.05,joinwindow=3s"
	o.Binary, o.Deadline = bin, 4*time.Minute
	o.ReportJSON = filepath.Join(dir, "report.json")
	o.CPUProfiles = filepath.Join(dir, "cpu")
	// The dashboard's and the alerts' metrics, checked live (monitoring_test.go).
	o.Observe = observeSale(t)
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(context.Background(), o)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.SeatsSold == 0 || rep.TicketsIssued != rep.SeatsSold {
		t.Fatalf("sold %d, tickets %d", rep.SeatsSold, rep.TicketsIssued)
	}
	if rep.DoubleSold.Total() != 0 {
		t.Fatalf("double sold: %+v", rep.DoubleSold)
	}
	// The tail, from the ledger: a sold-out sale reached 98% first, and
	// the seats after the mark are the rest.
	if so := rep.SellOut; so == nil || rep.SeatsSold == int64(rep.Seats) &&
		(so.Seats98Seconds <= 0 || so.Seats98Seconds > so.Seats100Seconds || so.TailSeats != rep.Seats-tailMark(rep.Seats) ||
			so.TailFromExpired+so.TailFromReleased > so.TailSeats) {
		t.Errorf("sell-out tail %+v, %d of %d seats sold", rep.SellOut, rep.SeatsSold, rep.Seats)
	}
	if rep.Fairness.PostOpenAdmitted == 0 || rep.Fairness.PostOpenInversions != 0 || rep.Fairness.AdmittedTwice != 0 {
		t.Fatalf("fairness: %+v", rep.Fairness)
	}
	if rep.Crowd.MaxActiveSample > int64(o.MaxActive) {
		t.Fatalf("active %d above MAX_ACTIVE %d", rep.Crowd.MaxActiveSample, o.MaxActive)
	}
	// The services counted every hold and join the crowd made.
	if rep.ServerLatencyError != "" {
		t.Fatal(rep.ServerLatencyError)
	}
	server := map[string]ServerLatency{}
	for _, l := range rep.ServerLatency {
		server[l.Name] = l
	}
	// The crowd names its holds by kind ("hold", "hold best", ...);
	// booking counts them on one route.
	made := map[string]uint64{}
	for _, e := range rep.Endpoints {
		if e.Endpoint == "hold" || strings.HasPrefix(e.Endpoint, "hold ") {
			made["hold"] += e.Requests
		}
		if e.Endpoint == "join" {
			made["join"] += e.Requests
		}
	}
	for name, n := range made {
		if l, ok := server[name]; !ok || l.Count != n || l.P50 <= 0 || l.P50 > l.P99 {
			t.Errorf("server-side %s: %+v, crowd made %d", name, l, n)
		}
	}
	// Most of the crowd asks for best available, and it is never refused
	// for a race while places are left.
	if h := rep.Crowd.Holds; h.Best.Requests == 0 || h.Standing.Requests == 0 || h.Picked.Requests == 0 || h.Best.Conflicts() != 0 || h.Standing.Conflicts() != 0 {
		t.Errorf("holds by kind: %+v", h)
	}
	if rep.Places.Total() != 0 || rep.Places.BestOrders == 0 || len(rep.Places.Standing) != 1 {
		t.Errorf("places audit: %+v", rep.Places)
	}
	// Booking's pool: every hold the crowd made took a connection.
	if p := rep.BookingPool; p == nil || p.Size <= 0 || p.Acquires < float64(server["hold"].Count) || p.Waited > p.Acquires || p.WaitSeconds <= 0 {
		t.Errorf("booking's pool: %+v after %d holds", p, server["hold"].Count)
	}

	// The queue's own counts, read from its /metrics, are the crowd's
	// per-person polls, and the cache filled the public state from it.
	if w := rep.Waiting; w.OriginByOp["poll"] != rep.Crowd.PersonalPolls || w.OriginByOp["state"] <= 0 {
		t.Errorf("origin requests %v, crowd's per-person polls %d", w.OriginByOp, rep.Crowd.PersonalPolls)
	}

	// Where the CPU went: every Go process's profile, Redis's commands and
	// PostgreSQL's statements.
	checkWhereCPU(t, rep.CPU)

	checkPhases(t, rep)

	// The JSON report has the documented shape.
	b, err := os.ReadFile(o.ReportJSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for key, kind := range map[string]string{
		"seatsSold": "number", "ordersPaid": "number", "ticketsIssued": "number", "doubleSold": "object",
		"fairness": "object", "crowd": "object", "endpoints": "array", "redisCommands": "object",
		"peakMemoryBytes": "object", "durationSeconds": "number", "timeToSellOutSeconds": "number", "sellOut": "object", "whereCPU": "object",
		"queues": "array", "phaseChecks": "object", "queueTimeline": "array", "places": "object",
	} {
		v, ok := doc[key]
		if !ok {
			t.Errorf("report JSON lacks %q", key)
			continue
		}
		got := map[bool]string{true: "ok"}[false]
		switch v.(type) {
		case float64:
			got = "number"
		case map[string]any:
			got = "object"
		case []any:
			got = "array"
		}
		if got != kind {
			t.Errorf("report JSON %q is %T, want %s", key, v, kind)
		}
	}
	if eps, _ := doc["endpoints"].([]any); len(eps) < 5 {
		t.Errorf("report has %d endpoints, want join, poll, seats, hold, webhook, tickets...", len(eps))
	}
}

// requireServers skips without redis-server or PostgreSQL, or fails where
// they are required.
func requireServers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Unavailable(t, "redis-server", err)
	}
	if _, err := localsvc.PostgresBinDir(); err != nil {
		testenv.Unavailable(t, "PostgreSQL", err)
	}
}

// checkPhases checks the two-phase sale's rows and checks: every queue
// took people in and let some in, the access codes were each redeemed
// once, nobody came in before their phase, and the admissions made while
// members and general both waited were weighed (a checked group) within
// the tolerance of the weights (else the audit would have failed).
func checkPhases(t *testing.T, rep *Report) {
	t.Helper()
	if len(rep.Queues) != 3 {
		t.Fatalf("queue rows %+v, want members, codes, general", rep.Queues)
	}
	for i, want := range []string{membersQueue, codesQueue, "general"} {
		if r := rep.Queues[i]; r.Name != want || r.Joined == 0 || r.Admitted == 0 || r.SeatsPaidFor == 0 {
			t.Errorf("queue row %d: %+v, want %s with joins, admissions and seats", i, r, want)
		}
	}
	pc := rep.PhaseChecks
	if pc == nil || pc.CodesRedeemed == 0 || int64(pc.CodesRedeemed) != rep.Queues[1].Joined || pc.AdmittedBeforeOpening != 0 || len(pc.problems()) != 0 {
		t.Fatalf("phase checks %+v (codes queue joined %d)", pc, rep.Queues[1].Joined)
	}
	// People of the general sale who came before the presale opened were
	// told when theirs opens, and came back then.
	if rep.Crowd.PhaseNotOpen == 0 || rep.Queues[2].Joined+rep.Queues[0].Joined+rep.Queues[1].Joined != rep.Crowd.Joined {
		t.Errorf("phase_not_open %d; joined %d, per queue %+v", rep.Crowd.PhaseNotOpen, rep.Crowd.Joined, rep.Queues)
	}
	checked := false
	for _, g := range pc.Shares {
		if g.Checked && g.Phase == generalPhase && slices.Contains(g.Queues, membersQueue) && slices.Contains(g.Queues, "general") {
			checked = true
			total := 0
			for _, w := range g.Weights {
				total += w
			}
			share := float64(g.Admitted[membersQueue]) / float64(g.Admissions)
			if want := float64(g.Weights[membersQueue]) / float64(total); math.Abs(share-want) > ShareTolerance {
				t.Errorf("members got %.3f of %d admissions, weight %.3f", share, g.Admissions, want)
			}
		}
	}
	if !checked {
		t.Errorf("no checked group of members and general waiting: %+v", pc.Shares)
	}
	if rep.Queues[0].WeightShare == 0 || rep.Queues[2].WeightShare == 0 {
		t.Errorf("rows without shares: %+v", rep.Queues)
	}
}
