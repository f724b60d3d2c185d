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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// ServiceAccountName is the queue pods' ServiceAccount (and Role, RoleBinding).
func ServiceAccountName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-queue" }

// LeaseName is the Lease through which the queue pods elect their admitter.
func LeaseName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-admitter" }

func queueRBAC(te *ticketsv1alpha1.TicketEvent) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := ServiceAccountName(te)
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(te, Queue, name),
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: meta(te, Queue, name),
		Rules: []rbacv1.PolicyRule{
			// spec.admission is followed live, of its own TicketEvent only (the
			// queue lists and watches with a metadata.name field selector,
			// which resourceNames allow).
			{APIGroups: []string{ticketsv1alpha1.GroupVersion.Group}, Resources: []string{"ticketevents"}, ResourceNames: []string{te.Name}, Verbs: []string{"get", "list", "watch"}},
			// Admitter election; create cannot be limited to a name.
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{LeaseName(te)}, Verbs: []string{"get", "update"}},
		},
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: meta(te, Queue, name),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: te.Namespace}},
	}
	return sa, role, rb
}
