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

package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/queuestats"
)

// phasedEvent is minimalEvent with a members' presale then the general
// sale, members 3 : general 1.
func phasedEvent(name string) *ticketsv1alpha1.TicketEvent {
	te := minimalEvent("default", name)
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	te.Spec.Phases = []ticketsv1alpha1.SalePhase{
		{Name: "presale", OpensAt: metav1.NewTime(at), MaxSeatsPerCustomer: ptr.To[int32](2), Queues: []ticketsv1alpha1.PhaseQueue{
			{Name: "members", Weight: 1, Tiers: []string{"member"}}, {Name: "invited", Weight: 1, AccessCode: true}}},
		{Name: "sale", OpensAt: metav1.NewTime(at.Add(time.Hour)), Sections: []string{"A"}, Queues: []ticketsv1alpha1.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}}, {Name: "general", Weight: 1}}},
	}
	return te
}

// spec.phases: ordered openings, known sections, weights of at least 1 and
// proper names, each refused with a message naming the field; a valid
// two-phase sale is accepted.
func TestPhasesValidated(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, phasedEvent("phases-ok")); err != nil {
		t.Fatalf("a valid two-phase sale: %v", err)
	}
	for i, tc := range []struct {
		mutate func(*ticketsv1alpha1.TicketEvent)
		want   string
	}{
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[1].OpensAt = te.Spec.Phases[0].OpensAt }, "phases[].opensAt must be in increasing order"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[1].Sections = []string{"Z"} }, "phases[].sections must name sections of seating.sections"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[1].Queues[0].Weight = -1 }, "phases[].queues[].weight must be at least 1"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[0].Queues[0].Name = "Members" }, "phases[].queues[].name must be lower-case"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[0].Name = "pre sale" }, "phases[].name must be lower-case"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[0].Queues = nil }, "spec.phases[0].queues"},
		{func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Phases[0].MaxSeatsPerCustomer = ptr.To[int32](5) }, "phases[].maxSeatsPerCustomer must not exceed holds.maxSeatsPerCustomer"},
	} {
		te := phasedEvent(fmt.Sprintf("phases-bad-%d", i))
		tc.mutate(te)
		err := c.Create(ctx, te)
		if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: %v, want an Invalid error containing %q", i, err, tc.want)
		}
	}
}

// The queue's figures per queue reach status.sale: the phase and each
// queue's weight, waiting and admitted; a change in one queue alone is a
// change worth a write.
func TestSaleFiguresPerQueue(t *testing.T) {
	te := phasedEvent("per-queue")
	now := time.Now().Truncate(time.Second)
	s := Stats{Waiting: 7, SalesOpen: true, UpdatedAt: now, Phase: "sale", Queues: []queuestats.QueueStats{
		{Name: "members", Weight: 3, Waiting: 4, Admitted: 30}, {Name: "general", Weight: 1, Waiting: 3, Admitted: 10}}}
	saleFigures(te, &s, nil, now)
	sale := te.Status.Sale
	if sale == nil || sale.Phase != "sale" || len(sale.Queues) != 2 ||
		sale.Queues[0] != (ticketsv1alpha1.QueueStatus{Name: "members", Weight: 3, Waiting: 4, Admitted: 30}) {
		t.Fatalf("sale %+v", sale)
	}
	s.Queues[1].Admitted = 11
	s.UpdatedAt = now.Add(time.Second)
	saleFigures(te, &s, nil, now.Add(time.Second))
	if te.Status.Sale.Queues[1].Admitted != 11 || !te.Status.Sale.UpdatedAt.Time.Equal(s.UpdatedAt) {
		t.Fatalf("a queue's new figure was not taken: %+v", te.Status.Sale)
	}
}
