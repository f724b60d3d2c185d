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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

const (
	// ConfigHashAnnotation on a pod template changes when configuration that
	// the workload reads only at start changes, so the pods roll.
	ConfigHashAnnotation = "tickets.ticketfair.io/config-hash"
)

var defaultReplicas = map[Component]int32{Queue: 2, Booking: 2, Relay: 1, Tickets: 2}

func deployment(te *ticketsv1alpha1.TicketEvent, opts Options, c Component, env renderedEnv, port int32) *appsv1.Deployment {
	w := workload(te, c)
	var replicas *int32
	autoscaled := (c == Queue || c == Booking) && scalable(te, c).Autoscaling != nil
	if !autoscaled {
		// Left unset under an HPA, so server-side apply leaves the count to it.
		replicas = ptr.To(defaultReplicas[c])
		if w.Replicas != nil {
			replicas = ptr.To(*w.Replicas)
		}
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
					MaxSurge:       ptr.To(intstr.FromString("25%")),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      Labels(te, c),
					Annotations: map[string]string{ConfigHashAnnotation: env.hash},
				},
				Spec: podSpec(te, opts, c, env, port),
			},
		},
	}
}
