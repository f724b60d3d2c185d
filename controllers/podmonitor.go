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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// PodMonitorGVK is the Prometheus Operator's PodMonitor. The operator
// writes it as unstructured, so it needs no Prometheus Operator module.
var PodMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// PodMonitorsServed reports whether the API server serves PodMonitors (the
// Prometheus Operator's CRD is installed).
func PodMonitorsServed(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	list, err := dc.ServerResourcesForGroupVersion(PodMonitorGVK.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Kind == PodMonitorGVK.Kind {
			return true, nil
		}
	}
	return false, nil
}

// PodMonitorName is the PodMonitor of a sale's pods.
func PodMonitorName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-ticketfair" }

// podMonitor selects the sale's workload pods (the migration Job's pods
// have no http port and are skipped) and labels their series with namespace,
// ticketevent, component and pod, as the chart's dashboard and alerts expect.
func podMonitor(te *ticketsv1alpha1.TicketEvent) *unstructured.Unstructured {
	sel := render.SelectorLabels(te, render.Queue)
	delete(sel, "app.kubernetes.io/component")
	matchLabels := map[string]any{}
	for k, v := range sel {
		matchLabels[k] = v
	}
	labels := map[string]any{}
	for k, v := range render.Labels(te, render.Queue) {
		labels[k] = v
	}
	delete(labels, "app.kubernetes.io/component")
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": PodMonitorName(te), "namespace": te.Namespace, "labels": labels},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": matchLabels},
			"podMetricsEndpoints": []any{map[string]any{
				"port": render.HTTPPortName,
				"path": "/metrics",
				"relabelings": []any{
					map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_label_app_kubernetes_io_instance"}, "targetLabel": "ticketevent"},
					map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_label_app_kubernetes_io_component"}, "targetLabel": "component"},
				},
			}},
		},
	}}
	u.SetGroupVersionKind(PodMonitorGVK)
	return u
}

// The PodMonitor is server-side applied (create, patch) and owned by the TicketEvent.
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;create;patch

// stepPodMonitor applies the sale's PodMonitor when PodMonitors is set
// (--pod-monitors and the CRD served at start).
func (r *TicketEventReconciler) stepPodMonitor(ctx context.Context, te *ticketsv1alpha1.TicketEvent, _ *render.Objects, _ *observed) error {
	if !r.PodMonitors {
		return nil
	}
	if err := r.apply(ctx, te, podMonitor(te)); err != nil {
		return fmt.Errorf("podmonitor: %w", err)
	}
	return nil
}
