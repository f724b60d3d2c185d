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

package render

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Booking gets each phase's name, seat limit and sections, nothing of the
// queue's part: a new weight or opening keeps booking's config hash (no
// roll in mid-sale), a new limit changes it (new pods apply it).
func TestBookingPhases(t *testing.T) {
	phased := func(limit int32, weight int32, opens time.Time) *ticketsv1alpha1.TicketEvent {
		te := event()
		te.Spec.Phases = []ticketsv1alpha1.SalePhase{
			{Name: "presale", OpensAt: metav1.NewTime(opens), MaxSeatsPerCustomer: &limit, Sections: []string{"A"},
				Queues: []ticketsv1alpha1.PhaseQueue{{Name: "members", Weight: weight, Tiers: []string{"member"}}}},
			{Name: "sale", OpensAt: metav1.NewTime(opens.Add(time.Hour)),
				Queues: []ticketsv1alpha1.PhaseQueue{{Name: "members", Weight: 3}, {Name: "general", Weight: 1}}},
		}
		return te
	}
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	render := func(te *ticketsv1alpha1.TicketEvent) (hash string, data map[string]string) {
		o, err := Render(te, Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		return o.Deployments[Booking].Spec.Template.Annotations[ConfigHashAnnotation], o.ConfigMaps[Booking].Data
	}
	h0, cm := render(phased(2, 1, at))
	want := `[{"name":"presale","maxSeatsPerCustomer":2,"sections":["A"]},{"name":"sale"}]`
	if got := cm["TICKETFAIR_PHASES"]; got != want {
		t.Fatalf("booking's TICKETFAIR_PHASES %s, want %s", got, want)
	}
	if h1, _ := render(phased(2, 5, at.Add(time.Minute))); h1 != h0 {
		t.Fatal("a new weight or opening changed booking's config hash")
	}
	if h2, _ := render(phased(1, 1, at)); h2 == h0 {
		t.Fatal("a new phase limit kept booking's config hash")
	}
	if _, cm := render(event()); cm["TICKETFAIR_PHASES"] != "" {
		t.Fatalf("a sale without phases renders booking phases %q", cm["TICKETFAIR_PHASES"])
	}
}
