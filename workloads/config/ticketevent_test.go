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

package config

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// ApplyTicketEvent: unset (nil or zero) keeps what q has, values replace
// it, phases are replaced as a whole, and a bad value leaves q unchanged.
func TestApplyTicketEvent(t *testing.T) {
	base := DefaultsOf[Queue]()
	base.TickInterval, base.MaxActive, base.Phases = 250*time.Millisecond, 7, `[{"name":"old"}]`

	q := base
	if err := q.ApplyTicketEvent(v1alpha1.TicketEventSpec{Admission: v1alpha1.Admission{TickInterval: dur(0)}}); err != nil {
		t.Fatal(err)
	}
	// A zero tick (which the CRD's 100ms minimum rules out) is unset, as an
	// absent one: the operator used to render it as 0s.
	if q.TickInterval != 250*time.Millisecond || q.MaxActive != 7 || q.Phases != "" || q.SalesOpenAt != "" {
		t.Fatalf("unset spec: %+v, phases %q, salesOpenAt %q", q.Admission, q.Phases, q.SalesOpenAt)
	}

	opens := time.Date(2036, 7, 1, 10, 0, 0, 0, time.UTC)
	q = base
	err := q.ApplyTicketEvent(v1alpha1.TicketEventSpec{
		SalesOpenAt: metav1.NewTime(opens.In(time.FixedZone("CEST", 2*3600))),
		Admission: v1alpha1.Admission{MaxActive: 9, RatePerSecond: 3, TickInterval: dur(2 * time.Second), TokenTTL: dur(time.Hour),
			ClaimTimeout: dur(5 * time.Second), SelectionWindow: dur(time.Minute), PreQueue: v1alpha1.PreQueueOrder("FIFO"), Paused: true},
		Phases: []v1alpha1.SalePhase{{Name: "members", OpensAt: metav1.NewTime(opens), Queues: []v1alpha1.PhaseQueue{{Name: "m", Weight: 2, Tiers: []string{"gold"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Admission{MaxActive: 9, RatePerSecond: 3, TickInterval: 2 * time.Second, TokenTTL: time.Hour,
		ClaimTimeout: 5 * time.Second, SelectionWindow: time.Minute, PreQueue: "fifo", Paused: true}
	if q.Admission != want || q.SalesOpenAt != "2036-07-01T10:00:00Z" {
		t.Fatalf("got %+v at %q, want %+v", q.Admission, q.SalesOpenAt, want)
	}
	var ps []Phase
	if err := json.Unmarshal([]byte(q.Phases), &ps); err != nil || len(ps) != 1 || !ps[0].OpensAt.Equal(opens) ||
		!reflect.DeepEqual(ps[0].Queues, []PhaseQueue{{Name: "m", Weight: 2, Tiers: []string{"gold"}}}) {
		t.Fatalf("phases %s: %+v %v", q.Phases, ps, err)
	}

	q = base
	err = q.ApplyTicketEvent(v1alpha1.TicketEventSpec{Admission: v1alpha1.Admission{MaxActive: 9, TickInterval: dur(10 * time.Millisecond), TokenTTL: dur(3 * time.Hour)}})
	if err == nil || !strings.Contains(err.Error(), "spec.admission.tickInterval: 10ms: must be between 100ms and 1m") ||
		!strings.Contains(err.Error(), "spec.admission.tokenTTL: 3h0m0s: must be between 1m and 2h") {
		t.Fatalf("out of range: %v", err)
	}
	if !reflect.DeepEqual(q, base) {
		t.Fatalf("a rejected spec changed q: %+v", q.Admission)
	}
}

// The bounds ApplyTicketEvent enforces are the CRD's: each CEL rule of a
// spec.admission duration ("must be between A and B", "must be at least
// A") accepts exactly what ApplyTicketEvent accepts at its edges.
func TestApplyTicketEventBoundsAreTheCRDs(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/tickets.ticketfair.io_ticketevents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`message: admission\.(\w+) must be (?:between (\S+) and (\S+)|at least (\S+))\s*$`)
	set := map[string]func(*v1alpha1.Admission, time.Duration){
		"tickInterval":    func(a *v1alpha1.Admission, d time.Duration) { a.TickInterval = dur(d) },
		"tokenTTL":        func(a *v1alpha1.Admission, d time.Duration) { a.TokenTTL = dur(d) },
		"claimTimeout":    func(a *v1alpha1.Admission, d time.Duration) { a.ClaimTimeout = dur(d) },
		"selectionWindow": func(a *v1alpha1.Admission, d time.Duration) { a.SelectionWindow = dur(d) },
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		m := rule.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		field, lo, hi := m[1], m[2], m[3]
		if lo == "" {
			lo = m[4]
		}
		apply, ok := set[field]
		if !ok {
			t.Errorf("the CRD bounds admission.%s, which ApplyTicketEvent does not check", field)
			continue
		}
		seen[field] = true
		accepts := func(d time.Duration) bool {
			var a v1alpha1.Admission
			apply(&a, d)
			q := DefaultsOf[Queue]()
			return q.ApplyTicketEvent(v1alpha1.TicketEventSpec{Admission: a}) == nil
		}
		min, err := time.ParseDuration(lo)
		if err != nil {
			t.Fatal(err)
		}
		if !accepts(min) || accepts(min-time.Millisecond) {
			t.Errorf("admission.%s: the CRD's minimum is %s, ApplyTicketEvent's is not", field, lo)
		}
		if hi != "" {
			max, err := time.ParseDuration(hi)
			if err != nil {
				t.Fatal(err)
			}
			if !accepts(max) || accepts(max+time.Millisecond) {
				t.Errorf("admission.%s: the CRD's maximum is %s, ApplyTicketEvent's is not", field, hi)
			}
		}
	}
	for field := range set {
		if !seen[field] {
			t.Errorf("ApplyTicketEvent bounds admission.%s, the CRD does not", field)
		}
	}
}
