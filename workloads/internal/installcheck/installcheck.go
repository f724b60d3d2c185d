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

// Package installcheck is `ticketfair check-install`, the Helm chart's
// `helm test`: the operator's Deployment is available and the API server
// serves the TicketEvent API. It runs in the operator's own image, which has
// no kubectl.
package installcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Check checks once.
func Check(ctx context.Context, cfg *rest.Config, namespace, deployment string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gv := v1alpha1.GroupVersion.String()
	list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil {
		return fmt.Errorf("the API server does not serve %s (is the CRD installed?): %w", gv, err)
	}
	served := false
	for _, r := range list.APIResources {
		served = served || r.Name == "ticketevents"
	}
	if !served {
		return fmt.Errorf("%s does not list ticketevents", gv)
	}
	d, err := cs.AppsV1().Deployments(namespace).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("operator Deployment %s/%s: %w", namespace, deployment, err)
	}
	if d.Status.ObservedGeneration < d.Generation {
		return fmt.Errorf("operator Deployment %s/%s: generation %d not rolled out yet", namespace, deployment, d.Generation)
	}
	if !available(d) || d.Status.AvailableReplicas < 1 {
		return fmt.Errorf("operator Deployment %s/%s: %d of %d replicas available", namespace, deployment, d.Status.AvailableReplicas, d.Status.Replicas)
	}
	return nil
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Wait checks every interval until Check passes or timeout has passed, and
// returns the last failure then.
func Wait(ctx context.Context, cfg *rest.Config, namespace, deployment string, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := Check(ctx, cfg, namespace, deployment)
		if err == nil {
			slog.Info("ticketfair is installed: the operator is available and the TicketEvent API is served",
				"namespace", namespace, "deployment", deployment)
			return nil
		}
		slog.Info("not ready yet", "err", err)
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("check-install timed out"), err)
		case <-time.After(interval):
		}
	}
}
