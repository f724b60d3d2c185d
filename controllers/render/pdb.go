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
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

func pdb(te *ticketsv1alpha1.TicketEvent, c Component) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			// A pod that is not ready serves nothing: evicting it must not
			// wait for the budget (a node drain would hang on a crashlooping pod).
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
			Selector:                   &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
		},
	}
}
