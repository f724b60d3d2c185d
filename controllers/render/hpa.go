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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// The autoscaling defaults, for a TicketEvent that the API server did not
// default (a Go value rendered directly). They are the CRD's
// +kubebuilder:default markers of spec.<workload>.autoscaling, which
// TestCRDDefaultsMatchConfig keeps them equal to.
const (
	defaultMinReplicas                 int32 = 2
	defaultTargetCPUUtilizationPercent int32 = 70
)

func hpa(te *ticketsv1alpha1.TicketEvent, c Component, as *ticketsv1alpha1.Autoscaling) *autoscalingv2.HorizontalPodAutoscaler {
	minReplicas := as.MinReplicas
	if minReplicas == 0 {
		minReplicas = defaultMinReplicas
	}
	target := as.TargetCPUUtilizationPercentage
	if target == 0 {
		target = defaultTargetCPUUtilizationPercent
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: Name(te, c)},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    as.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)},
				},
			}},
		},
	}
}
