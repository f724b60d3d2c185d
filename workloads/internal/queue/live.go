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
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// watchTicketEvent follows spec.admission, spec.salesOpenAt and
// spec.phases of one TicketEvent through an informer limited to that object
// (a field selector on metadata.name), so the RBAC it needs is
// get/list/watch ticketevents in the namespace. Each change is applied over
// base (the env/flag configuration) within the watch latency, well under a second. It returns once the
// informer has synced, and keeps watching until ctx ends.
func watchTicketEvent(ctx context.Context, kube *rest.Config, namespace, name string, base config.Queue, live *liveSettings) error {
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

// settingsFromTicketEvent lays the TicketEvent's spec over base (the
// env/flag configuration) with config.Queue.ApplyTicketEvent, the mapping
// the operator renders the queue's ConfigMap with, and reads the result as
// a start would: the live settings are what a restarted pod would get.
// Fields the spec leaves unset keep their env/flag values.
func settingsFromTicketEvent(base config.Queue, te *v1alpha1.TicketEvent) (Settings, error) {
	cfg := base
	if err := cfg.ApplyTicketEvent(te.Spec); err != nil {
		return Settings{}, err
	}
	return settingsFromConfig(cfg)
}
