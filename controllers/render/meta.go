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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Component is one workload of a sale.
type Component string

// The workloads; the value is also the ticketfair subcommand that runs it.
const (
	Queue   Component = "queue"
	Booking Component = "booking"
	Relay   Component = "relay"
	Tickets Component = "tickets"
	Migrate Component = "migrate"
)

// Components are the long-running workloads, each a Deployment.
var Components = []Component{Queue, Booking, Relay, Tickets}

// Served are the workloads whose API is reached through a Service (and kept
// up through voluntary disruptions by a PodDisruptionBudget): the queue and
// booking APIs, and tickets, which serves customers' tickets. The relay
// serves nothing but probes and metrics.
var Served = []Component{Queue, Booking, Tickets}

const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	labelManagedBy = "app.kubernetes.io/managed-by"
	// ManagerName is the value of app.kubernetes.io/managed-by on every object.
	ManagerName = "ticketfair-operator"
	labelPartOf = "app.kubernetes.io/part-of"
)

// Name is the name of a component's objects (Deployment, Service, ConfigMap).
func Name(te *ticketsv1alpha1.TicketEvent, c Component) string { return te.Name + "-" + string(c) }

// Labels are the labels of every object of a component.
func Labels(te *ticketsv1alpha1.TicketEvent, c Component) map[string]string {
	l := SelectorLabels(te, c)
	l[labelManagedBy] = ManagerName
	l[labelPartOf] = "ticketfair"
	return l
}

// SelectorLabels select the pods of a component.
func SelectorLabels(te *ticketsv1alpha1.TicketEvent, c Component) map[string]string {
	return map[string]string{labelName: "ticketfair", labelInstance: te.Name, labelComponent: string(c)}
}

func meta(te *ticketsv1alpha1.TicketEvent, c Component, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: te.Namespace, Labels: Labels(te, c)}
}
