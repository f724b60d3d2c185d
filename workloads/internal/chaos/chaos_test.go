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

package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestParsePlans(t *testing.T) {
	for name, text := range map[string]string{"default": DefaultPlan, "small": SmallPlan} {
		p, err := Parse(text)
		if err != nil {
			t.Fatalf("%s plan: %v", name, err)
		}
		// Each plan holds every fault, every link's network faults, and
		// kills of every service.
		kinds := map[string]bool{}
		for _, f := range p.Faults {
			kinds[string(f.Kind)+" "+f.Target] = true
		}
		for _, want := range []string{
			"kill queue-admitter", "kill booking", "kill relay", "kill tickets", "redis-restart ", "redis-restart-aof ",
			"pg-restart ", "broker-outage ", "broker-outage kafka-2", "latency booking-postgres", "blackhole booking-postgres", "reset booking-postgres",
			"latency queue-redis", "blackhole queue-redis", "reset queue-redis",
		} {
			if !kinds[want] {
				t.Errorf("%s plan lacks %q", name, want)
			}
		}
		// The printed plan parses back to itself (failures print it for replay).
		again, err := Parse(p.String())
		if err != nil || again.String() != p.String() {
			t.Errorf("%s plan does not round-trip: %v\n%s\n%s", name, err, p, again)
		}
	}
	p, err := Parse("10s latency queue-redis for=2s latency=500ms\n1s kill relay # first")
	if err != nil {
		t.Fatal(err)
	}
	if p.Faults[0].Kind != Kill || p.Faults[0].For != 2*time.Second || p.Faults[1].Latency != 500*time.Millisecond || p.End() != 12*time.Second {
		t.Fatalf("parsed %+v", p.Faults)
	}
	// Without a target a broker outage takes every node down; kafka-<n> one.
	for text, want := range map[string]int{"1s broker-outage for=2s": 1, "1s broker-outage kafka-3 for=2s\n2s broker-outage for=1s": 3, DefaultPlan: 2, SmallPlan: 2} {
		p, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.BrokerNodes(); got != want {
			t.Errorf("%q needs %d Kafka nodes, want %d", text, got, want)
		}
	}
	for _, bad := range []string{
		"x kill relay", "5s kill", "5s kill nginx", "5s explode", "5s broker-outage", "5s latency queue-redis for=1s",
		"5s blackhole postgres for=1s", "5s reset queue-redis", "5s pg-restart db", "5s kill relay for=soon", "5s kill relay booking",
		"5s kill relay color=red", "5s broker-outage kafka-0 for=1s", "5s broker-outage node-2 for=1s", "5s broker-outage kafka-x for=1s",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestWindowsAttributeFailures(t *testing.T) {
	open := time.Unix(1000, 0)
	r := NewRecorder()
	at := func(s float64) time.Time { return open.Add(time.Duration(s * float64(time.Second))) }
	r.Observe("poll", 200, at(0.5))
	r.Observe("poll", 503, at(1.1)) // before any fault
	r.Observe("hold", 503, at(10.1))
	r.Observe("hold", 503, at(10.2))
	r.Observe("join", 0, at(11.6))
	r.Observe("tickets", 404, at(11.7)) // not a failure: not issued yet
	r.Observe("poll", 404, at(13.0))    // a lost place: a failure
	r.Observe("poll", 503, at(21.0))    // in the second fault's recovery tail (it ended at 17 s)
	r.Observe("poll", 503, at(40.0))    // long after
	r.Observe("poll", 503, at(40.1))
	ws := []Window{
		{Fault: Fault{At: 10 * time.Second, Kind: Kill, Target: "booking"}, Target: "booking", Start: at(10), End: at(12)},
		// Starts before the first one's tail ends: the tail stops there.
		{Fault: Fault{At: 16 * time.Second, Kind: PostgresRestart}, Start: at(16), End: at(17)},
	}
	reps := r.Windows(open, ws)
	if len(reps) != 3 {
		t.Fatalf("%d windows", len(reps))
	}
	k, pg, rest := reps[0], reps[1], reps[2]
	if k.Failed["hold 503"] != 2 || k.Failed["join 0"] != 1 || k.Failed["poll 404"] != 1 || len(k.Failed) != 3 || k.UnavailableSeconds != 0.75 {
		t.Errorf("kill window: %+v", k)
	}
	if k.AtSeconds != 10 || k.Seconds != 2 {
		t.Errorf("kill window times: %+v", k)
	}
	if pg.Failed["poll 503"] != 1 || len(pg.Failed) != 1 || pg.UnavailableSeconds != 0.25 {
		t.Errorf("pg window: %+v", pg)
	}
	if rest.Failed["poll 503"] != 3 || rest.UnavailableSeconds != 0.5 {
		t.Errorf("outside faults: %+v", rest)
	}
	var b strings.Builder
	PrintWindows(&b, reps)
	if !strings.Contains(b.String(), "hold 503×2") || !strings.Contains(b.String(), "outside faults") {
		t.Errorf("printed:\n%s", b.String())
	}
}
