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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := ticketsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleEvent(name string) *ticketsv1alpha1.TicketEvent {
	return &ticketsv1alpha1.TicketEvent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: ticketsv1alpha1.TicketEventSpec{
			EventID:     42,
			DisplayName: "Summer Concert",
			SalesOpenAt: metav1.NewTime(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)),
			Seating: ticketsv1alpha1.Seating{Sections: []ticketsv1alpha1.Section{
				{Name: "A", Price: "89.50", Rows: 10, SeatsPerRow: 20},
			}},
		},
	}
}

func TestCreateAndReadBackTicketEvent(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&TicketEventReconciler{Client: mgr.GetClient(), Scheme: scheme}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	if err := c.Create(ctx, sampleEvent("summer")); err != nil {
		t.Fatal(err)
	}
	var got ticketsv1alpha1.TicketEvent
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "summer"}, &got); err != nil {
		t.Fatal(err)
	}
	// Defaults come from the CRD schema, applied by the real apiserver.
	if got.Spec.Admission.MaxActive != 5000 || got.Spec.Holds.TTL == nil || got.Spec.Holds.TTL.Duration != 5*time.Minute || got.Spec.Holds.MaxSeatsPerCustomer != 4 {
		t.Fatalf("defaults not applied: %+v %+v", got.Spec.Admission, got.Spec.Holds)
	}
	if got.Spec.Seating.Sections[0].Price != "89.50" {
		t.Fatalf("read back %+v", got.Spec.Seating)
	}
	// The controller observes the generation.
	deadline := time.Now().Add(30 * time.Second)
	for got.Status.ObservedGeneration != got.Generation {
		if time.Now().After(deadline) {
			t.Fatalf("observedGeneration %d, generation %d", got.Status.ObservedGeneration, got.Generation)
		}
		time.Sleep(100 * time.Millisecond)
		if err := c.Get(ctx, client.ObjectKeyFromObject(&got), &got); err != nil {
			t.Fatal(err)
		}
	}

	// CEL: eventId is immutable.
	got.Spec.EventID = 43
	if err := c.Update(ctx, &got); err == nil {
		t.Fatal("changing eventId was accepted")
	}
}
