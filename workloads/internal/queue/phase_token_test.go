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

package queue

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// TestPhaseInAccessToken: the access token names the phase its holder
// was admitted under, the latest opened phase listing their queue. A
// member admitted in the presale keeps the presale in every token of the
// session, also signed after the sale opened; a member admitted after the
// sale opened from the same queue, and a general customer, get the sale.
func TestPhaseInAccessToken(t *testing.T) {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.Admitter = true
	cfg.MaxActive, cfg.RatePerSecond, cfg.TickInterval = 100, 100, 50*time.Millisecond
	now := time.Now().UTC()
	// Room for the start and m1's admission before the sale opens.
	saleAt := now.Add(4 * time.Second)
	ph, _ := json.Marshal([]config.Phase{
		{Name: "presale", OpensAt: now.Add(-time.Minute), MaxSeatsPerCustomer: 2, Sections: []string{"A"},
			Queues: []config.PhaseQueue{{Name: "members", Weight: 1, Tiers: []string{"member"}}}},
		{Name: "sale", OpensAt: saleAt, Queues: []config.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}}, {Name: "general", Weight: 1}}},
	})
	cfg.Phases = string(ph)
	base := startService(t, cfg, nil)
	keys, err := accesstoken.ParseJWKS(do(t, "GET", base+"/.well-known/jwks.json", "", nil).Body)
	if err != nil {
		t.Fatal(err)
	}
	verifier := accesstoken.NewVerifier(func() map[string]ed25519.PublicKey { return keys })

	join := func(customer, token string) string {
		r := do(t, "POST", queueURL(base), token, nil)
		if r.Status != 201 {
			t.Fatalf("%s joins: %d %s", customer, r.Status, r.Body)
		}
		return r.view(t).QueueID
	}
	// phaseOf polls until admitted and returns the token's phase.
	phaseOf := func(customer, token, qid string) string {
		t.Helper()
		var v queueapi.Place
		testenv.WaitFor(t, 10*time.Second, customer+" admitted", func() bool {
			r := do(t, "GET", queueURL(base)+"/"+qid, token, nil)
			v = r.view(t)
			return r.Status == 200 && v.Status == queueapi.StatusAdmitted
		})
		c, err := verifier.Verify(v.AccessToken, testEvent)
		if err != nil || c.Customer() != customer {
			t.Fatalf("%s's token: %+v %v", customer, c, err)
		}
		return c.Phase
	}

	m1 := tierToken(t, "m1", "member")
	q1 := join("m1", m1)
	if p := phaseOf("m1", m1, q1); p != "presale" {
		t.Fatalf("member admitted in the presale: phase %q", p)
	}
	if time.Now().After(saleAt) {
		t.Fatal("m1 was admitted after the sale opened: the machine is too slow for this test's timing")
	}
	g1 := idToken(t, "g1")
	qg := join("g1", g1) // the sale's pre-queue
	time.Sleep(time.Until(saleAt) + 200*time.Millisecond)
	if p := phaseOf("m1", m1, q1); p != "presale" {
		t.Fatalf("member admitted in the presale, polled after the sale opened: phase %q", p)
	}
	m2 := tierToken(t, "m2", "member")
	if p := phaseOf("m2", m2, join("m2", m2)); p != "sale" {
		t.Fatalf("member admitted in the sale: phase %q", p)
	}
	if p := phaseOf("g1", g1, qg); p != "sale" {
		t.Fatalf("general customer: phase %q", p)
	}
}

// phaseOfAdmission: the latest phase opened by the time that lists the
// queue; none without phases.
func TestPhaseOfAdmission(t *testing.T) {
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	s := Settings{Phases: []config.Phase{
		{Name: "presale", OpensAt: at, Queues: []config.PhaseQueue{{Name: "members"}, {Name: "invited"}}},
		{Name: "sale", OpensAt: at.Add(time.Hour), Queues: []config.PhaseQueue{{Name: "members"}, {Name: "general"}}},
		{Name: "late", OpensAt: at.Add(2 * time.Hour), Queues: []config.PhaseQueue{{Name: "general"}}},
	}}
	for _, tc := range []struct {
		queue string
		at    time.Time
		want  string
	}{
		{"members", at, "presale"},
		{"members", at.Add(time.Hour - time.Second), "presale"},
		{"members", at.Add(time.Hour), "sale"},
		{"members", at.Add(3 * time.Hour), "sale"},
		{"invited", at.Add(3 * time.Hour), "presale"},
		{"general", at.Add(time.Hour), "sale"},
		{"general", at.Add(2 * time.Hour), "late"},
		{"general", at, "sale"}, // not yet open: its first phase
	} {
		if got := s.phaseOfAdmission(tc.queue, tc.at); got != tc.want {
			t.Errorf("%s at %s: %q, want %q", tc.queue, tc.at.Format(time.Kitchen), got, tc.want)
		}
	}
	if got := (Settings{}).phaseOfAdmission(DefaultQueue, at); got != "" {
		t.Errorf("without phases: %q", got)
	}
}
