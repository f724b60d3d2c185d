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
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// tierToken is an identity token whose tier claim is tier.
func tierToken(t testing.TB, customer, tier string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": testIss, "aud": testAud, "sub": customer,
		"exp": time.Now().Add(time.Hour).Unix(), "tier": tier}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestJoinPhases: through the API, a member joins the open presale's
// members queue, a code holder the code queue, anyone else the general
// sale's pre-queue; a wrong, foreign or used code is refused with its own
// code and counted; the public state and the poll show phase and queue.
func TestJoinPhases(t *testing.T) {
	cfg := testConfig(t, testenv.RedisURL(t))
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	cfg.AccessCodeKey = key
	now := time.Now().UTC()
	ph, _ := json.Marshal([]config.Phase{
		{Name: "presale", OpensAt: now.Add(-time.Minute), Queues: []config.PhaseQueue{
			{Name: "members", Weight: 1, Tiers: []string{"member"}}, {Name: "invited", Weight: 1, AccessCode: true}}},
		{Name: "sale", OpensAt: now.Add(time.Hour), Queues: []config.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}}, {Name: "general", Weight: 1, Tiers: []string{""}}}},
		{Name: "late", OpensAt: now.Add(2 * time.Hour), Queues: []config.PhaseQueue{{Name: "late", Weight: 1, Tiers: []string{"late"}}}},
	})
	cfg.Phases = string(ph)
	base := startService(t, cfg, nil)
	k, _ := accesscode.ParseKey(key)
	code := accesscode.Issue(k, testEvent, "presale", 1)
	body := func(code string) []byte { b, _ := json.Marshal(map[string]string{"code": code}); return b }

	member := do(t, "POST", queueURL(base), tierToken(t, "m1", "member"), nil)
	if v := member.view(t); member.Status != 201 || v.Queue != "members" || v.Phase != "presale" || !v.SalesOpen || v.Position != 1 {
		t.Fatalf("member: %d %s", member.Status, member.Body)
	}
	general := do(t, "POST", queueURL(base), idToken(t, "g1"), []byte("{}"))
	if v := general.view(t); general.Status != 201 || v.Queue != "" && v.Queue != DefaultQueue || v.SalesOpen || v.SalesOpenAt == nil {
		t.Fatalf("general before its phase: %d %s", general.Status, general.Body)
	}
	invited := do(t, "POST", queueURL(base), idToken(t, "i1"), body(code))
	if v := invited.view(t); invited.Status != 201 || v.Queue != "invited" {
		t.Fatalf("code: %d %s", invited.Status, invited.Body)
	}
	if again := do(t, "POST", queueURL(base), idToken(t, "i1"), body(code)); again.Status != 200 || again.view(t).Queue != "invited" {
		t.Fatalf("the code's owner again: %d %s", again.Status, again.Body)
	}
	parts := strings.Split(code, ".")
	for _, tc := range []struct {
		tok    string
		body   []byte
		status int
		code   string
	}{
		{idToken(t, "i2"), body(code), 409, "code_used"},
		{idToken(t, "i3"), body(parts[0] + ".presale.1.AAAAAAAAAAAAAAAA"), 403, "code_invalid"},
		{idToken(t, "i4"), body(accesscode.Issue(k, testEvent+1, "presale", 1)), 403, "code_other_event"},
		{idToken(t, "i5"), body(accesscode.Issue(k, testEvent, "nope", 1)), 403, "code_invalid"},
		{tierToken(t, "l1", "late"), nil, 403, "phase_not_open"},
		{idToken(t, "i6"), []byte(`{"code": 7}`), 400, "bad_json"},
	} {
		r := do(t, "POST", queueURL(base), tc.tok, tc.body)
		if r.Status != tc.status || r.errorCode(t) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.body, r.Status, r.Body, tc.status, tc.code)
		}
	}
	// A poll of the member's place: within the members queue.
	if p := do(t, "GET", queueURL(base)+"/"+member.view(t).QueueID, tierToken(t, "m1", "member"), nil); p.Status != 200 || p.view(t).Queue != "members" {
		t.Fatalf("poll: %d %s", p.Status, p.Body)
	}
	// Leaving a place in a named queue frees it there.
	other := do(t, "POST", queueURL(base), tierToken(t, "m2", "member"), nil)
	if r := do(t, "DELETE", queueURL(base)+"/"+other.view(t).QueueID, tierToken(t, "m2", "member"), nil); r.Status != 200 {
		t.Fatalf("leave: %d %s", r.Status, r.Body)
	}
	// (The public state below counts one member waiting: m1.)
	// The public state: the phase and each queue's figures.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var st queueapi.State
		r := do(t, "GET", queueURL(base)+"/state", "", nil)
		if err := json.Unmarshal(r.Body, &st); err != nil {
			t.Fatal(err)
		}
		waiting := map[string]int64{}
		for _, q := range st.Queues {
			waiting[q.Name] = q.Waiting
		}
		if st.Phase == "presale" && len(st.Queues) == 4 && waiting["members"] == 1 && waiting["invited"] == 1 && waiting[DefaultQueue] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("public state %s", r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fams, err := scrape.Metrics(context.Background(), httpClient, base)
	if err != nil {
		t.Fatal(err)
	}
	refused := fams["ticketfair_queue_join_refused_total"]
	for reason, want := range map[string]float64{"code_invalid": 2, "code_used": 1, "code_other_event": 1, "phase_not_open": 1} {
		if n := scrape.Sum(refused, "reason", reason); n != want {
			t.Errorf("%s refusals counted %v, want %v", reason, n, want)
		}
	}
}
