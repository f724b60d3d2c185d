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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/ticketstats"
)

// The tickets figures are written when one changes, not for a new time
// stamp or another order of the gates alone.
func TestTicketFigures(t *testing.T) {
	now := time.Date(2026, 8, 1, 19, 0, 0, 0, time.UTC)
	te := minimalEvent("default", "doors")
	s := TicketStats{Tickets: 100, EmailsSent: 90, EmailsPending: 10, EmailsFailing: 2, CheckedIn: 40, Conflicts: 1, LastMinute: 7,
		Gates: []ticketstats.GateStats{{Gate: "south", Admitted: 15, Offline: 3}, {Gate: "north", Admitted: 25}}, UpdatedAt: now}
	ticketFigures(te, &s)
	want := &ticketsv1alpha1.TicketsStatus{Tickets: 100, EmailsSent: 90, EmailsPending: 10, EmailsFailing: 2, CheckedIn: 40, Conflicts: 1,
		LastMinute: 7, Gates: []ticketsv1alpha1.GateStatus{{Gate: "north", Admitted: 25}, {Gate: "south", Admitted: 15, Offline: 3}},
		UpdatedAt: metav1.NewTime(now)}
	if !equality.Semantic.DeepEqual(te.Status.Tickets, want) {
		t.Fatalf("tickets %+v, want %+v", te.Status.Tickets, want)
	}

	stamped := te.DeepCopy()
	s.UpdatedAt = now.Add(5 * time.Second)
	s.Gates[0], s.Gates[1] = s.Gates[1], s.Gates[0]
	ticketFigures(stamped, &s)
	if !equality.Semantic.DeepEqual(te.Status, stamped.Status) {
		t.Fatalf("a new time stamp or order alone changed status: %+v", stamped.Status.Tickets)
	}

	changed := te.DeepCopy()
	s.CheckedIn = 41
	s.Gates = append(s.Gates, ticketstats.GateStats{Gate: "north", Admitted: 1})
	ticketFigures(changed, &s)
	if got := changed.Status.Tickets; got.CheckedIn != 41 || !got.UpdatedAt.Time.Equal(s.UpdatedAt) ||
		len(got.Gates) != 2 || got.Gates[0] != (ticketsv1alpha1.GateStatus{Gate: "north", Admitted: 26}) {
		t.Fatalf("changed figures not taken (a gate reported twice is added up): %+v", got)
	}
}

// fakeTickets serves the tickets service's stats endpoint; fail makes it
// answer 503.
type fakeTickets struct {
	mu    sync.Mutex
	stats TicketStats
	fail  bool
	gets  atomic.Int64
}

func (f *fakeTickets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.gets.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/events/42/stats" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if f.fail {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	_ = json.NewEncoder(w).Encode(f.stats)
}

func (f *fakeTickets) set(s TicketStats, fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats, f.fail = s, fail
}

// The StatsPoller copies the tickets service's figures into
// status.tickets once its Deployment is ready, with one write per change:
// none for figures that did not change, none when the tickets service
// cannot be reached, whose last figures stay.
func TestStatsPollerTicketFigures(t *testing.T) {
	ctx := context.Background()
	_, cfg := testenv.Kube(t)
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := "ticketfigures"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	te := provisionable(ns, "doors")
	if err := c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(te)

	f := &fakeTickets{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	now := time.Date(2026, 8, 1, 19, 0, 0, 0, time.UTC)
	f.set(TicketStats{Tickets: 500, EmailsSent: 480, EmailsPending: 20, EmailsFailing: 5, CheckedIn: 120, Conflicts: 2, LastMinute: 30,
		Gates: []ticketstats.GateStats{{Gate: "north", Admitted: 70, Offline: 4}, {Gate: "east", Admitted: 50}}, UpdatedAt: now}, false)
	queueAsked := false
	p := &StatsPoller{
		Client: c,
		Stats: &HTTPStats{
			BaseURL:        func(*ticketsv1alpha1.TicketEvent) string { queueAsked = true; return "http://127.0.0.1:1" },
			TicketsBaseURL: func(*ticketsv1alpha1.TicketEvent) string { return srv.URL },
		},
	}

	// Before the tickets Deployment exists, or while it has no ready pod:
	// nothing is asked nor written.
	p.pollAll(ctx)
	objs, err := render.Render(te, render.Options{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	d := objs.Deployments[render.Tickets]
	if err := controllerutil.SetControllerReference(te, d, scheme); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	p.pollAll(ctx)
	if n := f.gets.Load(); n != 0 {
		t.Fatalf("%d fetches before the tickets service is ready", n)
	}
	if got := getTE(t, c, key); got.Status.Tickets != nil || got.ResourceVersion != te.ResourceVersion {
		t.Fatalf("status written before the tickets service is ready: %+v", got.Status.Tickets)
	}

	markAvailable(t, c, client.ObjectKeyFromObject(d))
	p.pollAll(ctx)
	got := getTE(t, c, key)
	want := &ticketsv1alpha1.TicketsStatus{Tickets: 500, EmailsSent: 480, EmailsPending: 20, EmailsFailing: 5, CheckedIn: 120, Conflicts: 2,
		LastMinute: 30, Gates: []ticketsv1alpha1.GateStatus{{Gate: "east", Admitted: 50}, {Gate: "north", Admitted: 70, Offline: 4}},
		UpdatedAt: metav1.NewTime(now)}
	if !equality.Semantic.DeepEqual(got.Status.Tickets, want) {
		t.Fatalf("status.tickets %+v, want %+v", got.Status.Tickets, want)
	}
	if got.Status.Sale != nil || queueAsked {
		t.Fatalf("the queue, which runs no pod, was asked (%v) or its figures written: %+v", queueAsked, got.Status.Sale)
	}
	written := got.ResourceVersion

	// The same figures, stamped later: fetched, not written.
	s := f.stats
	s.UpdatedAt = now.Add(5 * time.Second)
	f.set(s, false)
	before := f.gets.Load()
	p.pollAll(ctx)
	if f.gets.Load() == before {
		t.Fatal("not fetched again")
	}
	if got := getTE(t, c, key); got.ResourceVersion != written {
		t.Fatalf("unchanged figures written: resourceVersion %s -> %s", written, got.ResourceVersion)
	}

	// The tickets service fails: the last figures stay, nothing is written.
	f.set(s, true)
	p.pollAll(ctx)
	if got := getTE(t, c, key); got.ResourceVersion != written || !equality.Semantic.DeepEqual(got.Status.Tickets, want) {
		t.Fatalf("a failed fetch wrote (resourceVersion %s -> %s) or lost the figures: %+v", written, got.ResourceVersion, got.Status.Tickets)
	}

	// A figure changes: one write.
	s.CheckedIn, s.Gates[1].Admitted = 121, 51
	f.set(s, false)
	p.pollAll(ctx)
	got = getTE(t, c, key)
	if got.Status.Tickets.CheckedIn != 121 || got.Status.Tickets.Gates[0].Admitted != 51 || !got.Status.Tickets.UpdatedAt.Time.Equal(s.UpdatedAt) {
		t.Fatalf("changed figures not written: %+v", got.Status.Tickets)
	}
	if got.ResourceVersion == written {
		t.Fatal("no write for changed figures")
	}
}

// A fetcher pointed at a queue outside the cluster (BaseURL) asks no
// tickets Service; the Service's address follows the queue's rules.
func TestTicketsServiceURL(t *testing.T) {
	te := minimalEvent("sales", "summer")
	if _, err := (&HTTPStats{BaseURL: func(*ticketsv1alpha1.TicketEvent) string { return "http://q" }}).FetchTicketStats(context.Background(), te); err != errNoTicketsURL {
		t.Errorf("FetchTicketStats with BaseURL only: %v, want errNoTicketsURL", err)
	}
	if got, want := TicketsServiceURL(te), "http://summer-tickets.sales.svc:8080"; got != want {
		t.Errorf("TicketsServiceURL = %s, want %s", got, want)
	}
}

// The API server checks spec.startsAt, spec.delivery.mail and spec.gates,
// and its messages name the field.
func TestDeliveryAndGatesValidated(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	valid := func(name string) *ticketsv1alpha1.TicketEvent {
		te := minimalEvent("default", name)
		te.Spec.Venue = "Olympic Stadium"
		te.Spec.StartsAt = ptr.To(metav1.NewTime(te.Spec.SalesOpenAt.Add(30 * 24 * time.Hour)))
		te.Spec.Delivery.Mail = &ticketsv1alpha1.Mail{
			SMTP: ticketsv1alpha1.SMTP{Host: "smtp.example.com", CredentialsSecretRef: &corev1.LocalObjectReference{Name: "smtp"}},
			From: "tickets@example.com",
		}
		te.Spec.Gates.GateSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gates"}, Key: "secret"}
		te.Spec.Gates.Transfers.Max = ptr.To(int32(0))
		return te
	}

	te := valid("delivery-ok")
	if err := c.Create(ctx, te); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	// The defaults: starttls on 587 with 4 workers; 0 transfers is kept (not
	// defaulted to 3), the cutoff is 2h.
	m := te.Spec.Delivery.Mail
	if m.SMTP.Port != 587 || m.SMTP.TLS != ticketsv1alpha1.SMTPStartTLS || m.Workers != 4 ||
		*te.Spec.Gates.Transfers.Max != 0 || te.Spec.Gates.Transfers.Cutoff.Duration != 2*time.Hour {
		t.Errorf("defaults: smtp %+v, workers %d, transfers max %d cutoff %s", m.SMTP, m.Workers, *te.Spec.Gates.Transfers.Max, te.Spec.Gates.Transfers.Cutoff)
	}
	plain := minimalEvent("default", "delivery-defaults")
	if err := c.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if tr := plain.Spec.Gates.Transfers; tr.Max == nil || *tr.Max != 3 || tr.Cutoff == nil || tr.Cutoff.Duration != 2*time.Hour {
		t.Errorf("transfers defaulted to %+v, want max 3, cutoff 2h", tr)
	}

	for i, tc := range []struct {
		what, field string
		mutate      func(*ticketsv1alpha1.TicketEvent)
	}{
		{"port -1", "spec.delivery.mail.smtp.port", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.SMTP.Port = -1 }},
		{"port 65536", "spec.delivery.mail.smtp.port", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.SMTP.Port = 65536 }},
		{"tls ssl", "spec.delivery.mail.smtp.tls", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.SMTP.TLS = "ssl" }},
		{"tls upper case", "spec.delivery.mail.smtp.tls", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.SMTP.TLS = "STARTTLS" }},
		{"host with a space", "spec.delivery.mail.smtp.host", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.SMTP.Host = "smtp example" }},
		{"from without domain", "spec.delivery.mail.from", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.From = "tickets" }},
		{"from with a header", "spec.delivery.mail.from", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.From = "a@b.com\nBcc: x@y.com" }},
		{"workers -1", "spec.delivery.mail.workers", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Delivery.Mail.Workers = -1 }},
		{"startsAt before salesOpenAt", "spec.startsAt", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.StartsAt = ptr.To(metav1.NewTime(te.Spec.SalesOpenAt.Add(-time.Hour)))
		}},
		{"startsAt at salesOpenAt", "spec.startsAt", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.StartsAt = ptr.To(te.Spec.SalesOpenAt)
		}},
		{"transfers.max 21", "spec.gates.transfers.max", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Gates.Transfers.Max = ptr.To(int32(21)) }},
		{"transfers.max -1", "spec.gates.transfers.max", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Gates.Transfers.Max = ptr.To(int32(-1)) }},
		{"transfers.cutoff 31d", "spec.gates.transfers.cutoff", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Gates.Transfers.Cutoff = &metav1.Duration{Duration: 31 * 24 * time.Hour}
		}},
		{"emailClaim sub", "spec.identity.emailClaim", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Identity = &ticketsv1alpha1.Identity{HMACSecretRef: te.Spec.Gates.GateSecretRef, EmailClaim: "sub"}
		}},
	} {
		te := valid(fmt.Sprintf("delivery-bad-%d", i))
		tc.mutate(te)
		err := c.Create(ctx, te)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want invalid at %s", tc.what, err, tc.field)
		}
	}
}
