package queue

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// watchTicketEvent follows spec.admission and spec.salesOpenAt of one
// TicketEvent through an informer limited to that object (a field selector
// on metadata.name), so the RBAC it needs is get/list/watch ticketevents in
// the namespace. Each change is applied over base (the env/flag settings)
// within the watch latency, well under a second. It returns once the
// informer has synced, and keeps watching until ctx ends.
func watchTicketEvent(ctx context.Context, kube *rest.Config, namespace, name string, base Settings, live *liveSettings) error {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := cache.New(kube, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.TicketEvent{}: {Field: fields.OneTermEqualSelector("metadata.name", name)},
		},
	})
	if err != nil {
		return fmt.Errorf("ticketevent cache: %w", err)
	}
	inf, err := c.GetInformer(ctx, &v1alpha1.TicketEvent{})
	if err != nil {
		return fmt.Errorf("ticketevent informer: %w", err)
	}
	apply := func(obj any) {
		te, ok := obj.(*v1alpha1.TicketEvent)
		if !ok || te.Name != name {
			return
		}
		s, err := settingsFromTicketEvent(base, te)
		if err != nil {
			slog.Warn("ignoring TicketEvent admission settings", "ticketevent", name, "err", err)
			return
		}
		live.Store(s)
		slog.Info("admission settings", "ticketevent", name, "maxActive", s.MaxActive, "ratePerSecond", s.RatePerSecond,
			"tick", s.TickInterval, "paused", s.Paused, "salesOpenAt", s.SalesOpenAt)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: apply,
		UpdateFunc: func(old, obj any) {
			// Status writes (the operator's figures, every few seconds) do
			// not change the spec; only a new generation does.
			o, ok1 := old.(*v1alpha1.TicketEvent)
			n, ok2 := obj.(*v1alpha1.TicketEvent)
			if ok1 && ok2 && o.Generation == n.Generation {
				return
			}
			apply(obj)
		},
	}); err != nil {
		return err
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			slog.Error("ticketevent cache stopped", "err", err)
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("ticketevent cache did not sync")
	}
	return nil
}

// settingsFromTicketEvent lays the TicketEvent's spec over base: fields the
// spec leaves unset keep their env/flag values.
func settingsFromTicketEvent(base Settings, te *v1alpha1.TicketEvent) (Settings, error) {
	s := base
	a := te.Spec.Admission
	if a.MaxActive > 0 {
		s.MaxActive = int(a.MaxActive)
	}
	if a.RatePerSecond > 0 {
		s.RatePerSecond = int(a.RatePerSecond)
	}
	if a.TickInterval != nil && a.TickInterval.Duration > 0 {
		s.TickInterval = a.TickInterval.Duration
	}
	if a.TokenTTL != nil && a.TokenTTL.Duration > 0 {
		s.TokenTTL = a.TokenTTL.Duration
	}
	if a.ClaimTimeout != nil && a.ClaimTimeout.Duration > 0 {
		s.ClaimTimeout = a.ClaimTimeout.Duration
	}
	if a.SelectionWindow != nil && a.SelectionWindow.Duration > 0 {
		s.SelectionWindow = a.SelectionWindow.Duration
	}
	if a.PreQueue != "" {
		s.PreQueue = strings.ToLower(string(a.PreQueue))
	}
	s.Paused = a.Paused
	if !te.Spec.SalesOpenAt.IsZero() {
		s.SalesOpenAt = te.Spec.SalesOpenAt.Time
	}
	// The phases, their weights included, follow the spec too.
	s.Phases = phasesFromSpec(te.Spec.Phases)
	return s.validate()
}

// phasesFromSpec is spec.phases as the queue's configuration reads them
// (the operator renders the same into TICKETFAIR_PHASES).
func phasesFromSpec(src []v1alpha1.SalePhase) []config.Phase {
	if len(src) == 0 {
		return nil
	}
	out := make([]config.Phase, 0, len(src))
	for _, p := range src {
		ph := config.Phase{Name: p.Name, OpensAt: p.OpensAt.UTC(), Sections: p.Sections}
		if p.MaxSeatsPerCustomer != nil {
			ph.MaxSeatsPerCustomer = int(*p.MaxSeatsPerCustomer)
		}
		for _, q := range p.Queues {
			ph.Queues = append(ph.Queues, config.PhaseQueue{Name: q.Name, Weight: int(q.Weight), Tiers: q.Tiers, AccessCode: q.AccessCode})
		}
		out = append(out, ph)
	}
	return out
}
