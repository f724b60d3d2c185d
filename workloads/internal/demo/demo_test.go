package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// A short local sale: real Redis, PostgreSQL, Kafka protocol, and the
// workloads as processes of the real binary.
func TestShortSale(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	requireServers(t)
	dir := t.TempDir()
	bin := testenv.BuildWorkloads(t)

	o := DefaultOptions()
	o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 1500, 400, 150, 100
	o.OpensIn, o.HoldTTL, o.Seed = 4*time.Second, 8*time.Second, 42
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
	for _, e := range rep.Endpoints {
		l, ok := server[e.Endpoint]
		if (e.Endpoint == "hold" || e.Endpoint == "join") && (!ok || l.Count != e.Requests || l.P50 <= 0 || l.P50 > l.P99) {
			t.Errorf("server-side %s: %+v, crowd made %d", e.Endpoint, l, e.Requests)
		}
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
	for _, probe := range []func() error{
		func() error { _, err := exec.LookPath("redis-server"); return err },
		func() error { _, err := localsvc.PostgresBinDir(); return err },
	} {
		if err := probe(); err != nil {
			if os.Getenv("CI") == "true" || os.Getenv("TICKETFAIR_TEST_REQUIRE_SERVICES") == "1" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
	}
}
