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
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// StatsPoller copies the figures of every running sale from
// GET /events/{eventId}/stats into the TicketEvent's status: from a ready
// queue the Sale figures and the SalesOpen condition, from a ready tickets
// service the Tickets figures, nothing else. It is apart from the
// reconciler so that a running sale does not re-run provisioning on every
// refresh, and it writes, once for both, only when a figure or the
// condition changed.
type StatsPoller struct {
	// Client reads TicketEvents and Deployments from the manager's cache
	// and patches status.
	Client client.Client
	// Stats fetches the queue's figures.
	Stats StatsFetcher
	// Tickets fetches the tickets service's figures; nil uses Stats when it
	// is a TicketStatsFetcher too (HTTPStats is), and otherwise fetches none.
	Tickets TicketStatsFetcher
	// Interval defaults to DefaultStatsInterval.
	Interval time.Duration
	// Recorder records Events on the TicketEvent; nil records none.
	Recorder events.EventRecorder
	// Log defaults to a discarding logger.
	Log logr.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

var _ manager.LeaderElectionRunnable = (*StatsPoller)(nil)

// statsParallelism bounds the fetches in flight, each up to the HTTP
// client's timeout.
const statsParallelism = 8

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// leader writes status.
func (p *StatsPoller) NeedLeaderElection() bool { return true }

// Start polls until ctx ends; the manager starts it once the caches synced.
func (p *StatsPoller) Start(ctx context.Context) error {
	interval := p.Interval
	if interval <= 0 {
		interval = DefaultStatsInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.pollAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// pollAll fetches the figures of every running sale, a few at a time, so
// one slow queue does not hold up the others.
func (p *StatsPoller) pollAll(ctx context.Context) {
	var list ticketsv1alpha1.TicketEventList
	if err := p.Client.List(ctx, &list); err != nil {
		if ctx.Err() == nil {
			p.Log.Error(err, "list TicketEvents")
		}
		return
	}
	tickets := p.ticketsFetcher()
	sem := make(chan struct{}, statsParallelism)
	var wg sync.WaitGroup
	for i := range list.Items {
		te := &list.Items[i]
		up := services{queue: p.running(ctx, te, render.Queue)}
		up.tickets = tickets != nil && p.running(ctx, te, render.Tickets)
		if !up.queue && !up.tickets {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.poll(ctx, te, up, tickets)
		})
	}
	wg.Wait()
}

// services says which of a sale's services are asked for figures.
type services struct{ queue, tickets bool }

func (p *StatsPoller) ticketsFetcher() TicketStatsFetcher {
	if p.Tickets != nil {
		return p.Tickets
	}
	f, _ := p.Stats.(TicketStatsFetcher)
	return f
}

// running reports a sale whose own Deployment of c has a ready pod. A
// duplicate eventId or a sale being deleted has none to ask.
func (p *StatsPoller) running(ctx context.Context, te *ticketsv1alpha1.TicketEvent, c render.Component) bool {
	if !te.DeletionTimestamp.IsZero() {
		return false
	}
	var d appsv1.Deployment
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: render.Name(te, c)}, &d); err != nil {
		return false
	}
	return metav1.IsControlledBy(&d, te) && d.Status.ReadyReplicas > 0
}

// poll fetches one sale's figures from the services that are up and
// patches status if they changed.
func (p *StatsPoller) poll(ctx context.Context, te *ticketsv1alpha1.TicketEvent, up services, tickets TicketStatsFetcher) {
	next := te.DeepCopy()
	var err error // the queue's
	if up.queue {
		if err = p.pollQueue(ctx, next); err != nil && ctx.Err() != nil {
			return
		}
	}
	if up.tickets {
		p.pollTickets(ctx, next, tickets)
	}
	if ctx.Err() != nil || equality.Semantic.DeepEqual(te.Status, next.Status) {
		return
	}
	// The optimistic lock keeps a merge patch of the conditions list from
	// undoing a status the reconciler wrote meanwhile; the next tick retries.
	patch := client.MergeFromWithOptions(te, client.MergeFromWithOptimisticLock{})
	if perr := p.Client.Status().Patch(ctx, next, patch); perr != nil {
		if !apierrors.IsConflict(perr) && !apierrors.IsNotFound(perr) && ctx.Err() == nil {
			p.Log.Error(perr, "patch figures", "ticketevent", client.ObjectKeyFromObject(te))
		}
		return
	}
	ticketEvents.set(types.NamespacedName{Namespace: te.Namespace, Name: te.Name}, next.Status.Conditions)
	if err != nil && p.Recorder != nil {
		if c := meta.FindStatusCondition(te.Status.Conditions, ticketsv1alpha1.ConditionSalesOpen); c == nil || c.Reason != reasonStatsUnavailable {
			p.Recorder.Eventf(te, nil, corev1.EventTypeWarning, reasonStatsUnavailable, "FetchStats", "sale figures unavailable: %v", err)
		}
	}
}

// pollQueue fetches the queue's figures into te's status, and returns the
// error of a fetch that failed.
func (p *StatsPoller) pollQueue(ctx context.Context, te *ticketsv1alpha1.TicketEvent) error {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	s, err := p.Stats.FetchStats(ctx, te)
	if err != nil {
		if ctx.Err() == nil {
			statsFetchErrors.Inc()
		}
		saleFigures(te, nil, err, now())
		return err
	}
	saleFigures(te, &s, nil, now())
	return nil
}

// pollTickets fetches the tickets service's figures into te's status. A
// failed fetch keeps the last figures: the tickets service has no
// condition of its own, the Ready condition tells whether it runs.
func (p *StatsPoller) pollTickets(ctx context.Context, te *ticketsv1alpha1.TicketEvent, f TicketStatsFetcher) {
	s, err := f.FetchTicketStats(ctx, te)
	switch {
	case errors.Is(err, errNoTicketsURL), err != nil && ctx.Err() != nil:
	case err != nil:
		statsFetchErrors.Inc()
		p.Log.V(1).Info("tickets figures unavailable", "ticketevent", client.ObjectKeyFromObject(te), "error", err.Error())
	default:
		ticketFigures(te, &s)
	}
}

// ticketFigures sets the Tickets figures from what the tickets service
// reported. As with saleFigures, UpdatedAt moves only with a figure. Gates
// are ordered by name, and a name reported twice is added up, so that a
// new order alone is no change and the list stays a valid map.
func ticketFigures(te *ticketsv1alpha1.TicketEvent, s *TicketStats) {
	t := &ticketsv1alpha1.TicketsStatus{
		Tickets: s.Tickets, EmailsSent: s.EmailsSent, EmailsPending: s.EmailsPending, EmailsFailing: s.EmailsFailing,
		CheckedIn: s.CheckedIn, Conflicts: s.Conflicts, LastMinute: s.LastMinute,
		UpdatedAt: metav1.NewTime(s.UpdatedAt.UTC().Truncate(time.Second)),
	}
	for _, g := range s.Gates {
		i := slices.IndexFunc(t.Gates, func(x ticketsv1alpha1.GateStatus) bool { return x.Gate == g.Gate })
		if i < 0 {
			t.Gates = append(t.Gates, ticketsv1alpha1.GateStatus{Gate: g.Gate})
			i = len(t.Gates) - 1
		}
		t.Gates[i].Admitted += g.Admitted
		t.Gates[i].Offline += g.Offline
	}
	slices.SortFunc(t.Gates, func(a, b ticketsv1alpha1.GateStatus) int { return cmp.Compare(a.Gate, b.Gate) })
	if te.Status.Tickets == nil || !sameTicketFigures(*te.Status.Tickets, *t) {
		te.Status.Tickets = t
	}
}

// sameTicketFigures compares two sets of figures but not their time stamps.
func sameTicketFigures(a, b ticketsv1alpha1.TicketsStatus) bool {
	a.UpdatedAt, b.UpdatedAt = metav1.Time{}, metav1.Time{}
	return equality.Semantic.DeepEqual(a, b)
}

// saleFigures sets the Sale figures and the SalesOpen condition from what
// the queue reported (s), or, when it could not be asked (err), keeps the
// last figures and state and says they are stale. UpdatedAt moves only with
// a figure: the queue stamps every answer, and a new stamp alone is not
// worth a write.
func saleFigures(te *ticketsv1alpha1.TicketEvent, s *Stats, err error, now time.Time) {
	st := &te.Status
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ticketsv1alpha1.ConditionSalesOpen,
			Status: status, Reason: reason, Message: msg, ObservedGeneration: te.Generation})
	}
	if err != nil {
		status, _, _ := timedSalesOpen(te, now)
		if c := meta.FindStatusCondition(st.Conditions, ticketsv1alpha1.ConditionSalesOpen); c != nil && fromQueue(c) {
			status = c.Status
		}
		msg := "sale figures are stale: " + err.Error()
		if salesOpenAtInPast(te) {
			msg += "; " + pastOpeningNote(te)
		}
		set(status, reasonStatsUnavailable, msg)
		return
	}
	sale := &ticketsv1alpha1.SaleStatus{
		Waiting: s.Waiting, Active: s.Active, AdmittedTotal: s.AdmittedTotal, Remaining: s.Remaining,
		Held: s.Held, Sold: s.Sold, SoldOut: s.SoldOut, Paused: s.Paused, AdmitRate: s.AdmitRate,
		UpdatedAt: metav1.NewTime(s.UpdatedAt.UTC().Truncate(time.Second)),
	}
	sale.Phase = s.Phase
	for _, q := range s.Queues {
		sale.Queues = append(sale.Queues, ticketsv1alpha1.QueueStatus{Name: q.Name, Weight: int32(q.Weight), Waiting: q.Waiting, Admitted: q.Admitted})
	}
	if st.Sale == nil || !sameFigures(*st.Sale, *sale) {
		st.Sale = sale
	}
	status, msg := metav1.ConditionFalse, "the queue reports sales not open yet"
	if s.SalesOpen {
		status, msg = metav1.ConditionTrue, "the queue reports sales open"
	}
	if s.SoldOut {
		msg = "sold out"
	}
	if salesOpenAtInPast(te) {
		msg += "; " + pastOpeningNote(te)
	}
	set(status, reasonStatsReported, msg)
}

// sameFigures compares two sets of figures but not their time stamps.
func sameFigures(a, b ticketsv1alpha1.SaleStatus) bool {
	a.UpdatedAt, b.UpdatedAt = metav1.Time{}, metav1.Time{}
	return equality.Semantic.DeepEqual(a, b)
}
