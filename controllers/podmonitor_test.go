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
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// PodMonitors are detected through discovery; with --pod-monitors the
// operator applies one per TicketEvent, owned by it, selecting the sale's
// pods and labelling series as the chart's dashboard and alerts expect.
func TestPodMonitors(t *testing.T) {
	var cfg *rest.Config
	op := startOperatorWith(t, func(*ticketsv1alpha1.TicketEvent) string { return "http://127.0.0.1:1" }, func(r *TicketEventReconciler, mgr ctrl.Manager) {
		cfg = mgr.GetConfig()
		served, err := PodMonitorsServed(cfg)
		if err != nil || served {
			t.Fatalf("PodMonitors served before the CRD: %v %v", served, err)
		}
		if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "podmonitor-crd.yaml")}}); err != nil {
			t.Fatal(err)
		}
		if served, err = PodMonitorsServed(cfg); err != nil || !served {
			t.Fatalf("PodMonitors not served after the CRD: %v %v", served, err)
		}
		r.PodMonitors = served
	})
	ctx := context.Background()
	op.namespace(t, "monitored")
	te := provisionable("monitored", "gig")
	if err := op.c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(PodMonitorGVK)
	eventually(t, "PodMonitor applied", func() error {
		return op.c.Get(ctx, client.ObjectKey{Namespace: "monitored", Name: "gig-ticketfair"}, pm)
	})
	if refs := pm.GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "gig" || refs[0].Kind != "TicketEvent" {
		t.Fatalf("owner references %v", refs)
	}
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	if sel["app.kubernetes.io/instance"] != "gig" || sel["app.kubernetes.io/name"] != "ticketfair" || len(sel) != 2 {
		t.Fatalf("selector %v", sel)
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != "http" || eps[0].(map[string]any)["path"] != "/metrics" {
		t.Fatalf("endpoints %v", eps)
	}
	// The queue Deployment's pods carry the labels the selector matches.
	var d appsv1.Deployment
	eventually(t, "queue Deployment", func() error {
		return op.c.Get(ctx, client.ObjectKey{Namespace: "monitored", Name: "gig-queue"}, &d)
	})
	for k, v := range sel {
		if d.Spec.Template.Labels[k] != v {
			t.Fatalf("queue pods lack %s=%s: %v", k, v, d.Spec.Template.Labels)
		}
	}
}
