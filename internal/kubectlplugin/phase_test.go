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

package kubectlplugin

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

func TestPhaseOf(t *testing.T) {
	opens := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		now             time.Time
		paused, soldOut bool
		noSale          bool
		want            Phase
	}{
		{name: "before the opening", now: opens.Add(-time.Second), noSale: true, want: PhaseScheduled},
		{name: "at the opening", now: opens, want: PhaseOpen},
		{name: "after the opening", now: opens.Add(time.Hour), want: PhaseOpen},
		{name: "after the opening, no figures yet", now: opens.Add(time.Hour), noSale: true, want: PhaseOpen},
		{name: "paused while open", now: opens.Add(time.Minute), paused: true, want: PhasePaused},
		{name: "paused before the opening", now: opens.Add(-time.Hour), paused: true, want: PhasePaused},
		{name: "sold out", now: opens.Add(time.Hour), soldOut: true, want: PhaseSoldOut},
		{name: "sold out and paused", now: opens.Add(time.Hour), soldOut: true, paused: true, want: PhaseSoldOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := &ticketsv1alpha1.TicketEvent{}
			te.Spec.SalesOpenAt = metav1.NewTime(opens)
			te.Spec.Admission.Paused = tc.paused
			if !tc.noSale {
				te.Status.Sale = &ticketsv1alpha1.SaleStatus{SoldOut: tc.soldOut, Remaining: -1, Held: -1, Sold: -1}
			}
			if got := PhaseOf(te, tc.now); got != tc.want {
				t.Errorf("PhaseOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestQueueETA(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiting int64
		rate    int32
		phase   Phase
		want    time.Duration
		wantOK  bool
		human   string
	}{
		{"exact seconds", 12000, 500, PhaseOpen, 24 * time.Second, true, "24s"},
		{"rounded up", 12001, 500, PhaseOpen, 25 * time.Second, true, "25s"},
		{"one person", 1, 500, PhaseOpen, time.Second, true, "1s"},
		{"minutes", 100000, 500, PhaseOpen, 200 * time.Second, true, "3m20s"},
		{"hours", 2000000, 100, PhaseOpen, 20000 * time.Second, true, "5h33m"},
		{"before the opening: time after it", 5000, 500, PhaseScheduled, 10 * time.Second, true, "10s"},
		{"nobody waits", 0, 500, PhaseOpen, 0, false, none},
		{"rate 0", 10, 0, PhaseOpen, 0, false, none},
		{"paused", 10, 500, PhasePaused, 0, false, none},
		{"sold out", 10, 500, PhaseSoldOut, 0, false, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := QueueETA(tc.waiting, tc.rate, tc.phase)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("QueueETA(%d, %d, %s) = %s, %v; want %s, %v", tc.waiting, tc.rate, tc.phase, got, ok, tc.want, tc.wantOK)
			}
			var secs *int64
			if ok {
				s := int64(got / time.Second)
				secs = &s
			}
			if h := eta(secs); h != tc.human {
				t.Errorf("printed %q, want %q", h, tc.human)
			}
		})
	}
}

// An unset rate is shown as the default the queue applies, which is the
// CRD's (controllers/render's TestCRDDefaultsMatchConfig ties the two).
func TestRatePerSecondDefault(t *testing.T) {
	te := &ticketsv1alpha1.TicketEvent{}
	want := int32(config.DefaultsOf[config.Admission]().RatePerSecond)
	if want <= 0 {
		t.Fatalf("the admission default rate is %d", want)
	}
	if got := RatePerSecond(te); got != want {
		t.Errorf("unset: %d, want the default %d", got, want)
	}
	te.Spec.Admission.RatePerSecond = 35
	if got := RatePerSecond(te); got != 35 {
		t.Errorf("set to 35: %d", got)
	}
}

// StatusOf shows unpublished figures (-1) as unknown and falls back to the
// seating for the seat count before the operator has written it.
func TestStatusOfUnknownFigures(t *testing.T) {
	now := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	te := &ticketsv1alpha1.TicketEvent{}
	te.Spec.SalesOpenAt = metav1.NewTime(now.Add(-time.Minute))
	te.Spec.Seating.Sections = []ticketsv1alpha1.Section{{Name: "A", Price: "10", Rows: 3, SeatsPerRow: 7}}
	s := StatusOf(te, now)
	if s.Waiting != nil || s.Sold != nil || s.ETASeconds != nil || s.UpdatedAt != nil || s.SeatsTotal != 21 || s.Ready != "Unknown" {
		t.Fatalf("no status: %+v", s)
	}
	te.Status.Sale = &ticketsv1alpha1.SaleStatus{Waiting: 1000, Active: 5, Remaining: -1, Held: -1, Sold: 4}
	te.Status.SeatsTotal = 20
	s = StatusOf(te, now)
	if *s.Waiting != 1000 || s.Remaining != nil || s.Held != nil || *s.Sold != 4 || s.SeatsTotal != 20 || s.ETASeconds == nil || *s.ETASeconds != 2 {
		t.Fatalf("partial figures: %+v", s)
	}
}
