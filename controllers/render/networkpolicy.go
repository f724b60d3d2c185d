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
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// networkPolicy isolates a workload's pods for ingress: only their HTTP port
// is open, to the given peers (to any source when there are none). Egress is
// left open: the operator cannot know where Redis, PostgreSQL, Kafka and the
// API server are.
func networkPolicy(te *ticketsv1alpha1.TicketEvent, c Component, from []networkingv1.NetworkPolicyPeer) *networkingv1.NetworkPolicy {
	var peers []networkingv1.NetworkPolicyPeer
	for _, p := range from {
		peers = append(peers, *p.DeepCopy())
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString(HTTPPortName))}},
				From:  peers,
			}},
		},
	}
}
