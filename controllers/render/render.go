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

// Package render turns a TicketEvent into the Kubernetes objects of its sale.
// It is pure (no client), so the reconciler, the chart tests and an
// end-to-end test that runs the rendered containers as local processes all
// see exactly the same objects.
//
// Every container's configuration comes from the workloads' own config
// structs (package workloads/config) through config.Render: plain values go
// into a ConfigMap per workload and reach the container as configMapKeyRef
// env vars, credentials reach it as secretKeyRef env vars, and the pod
// identity through the downward API. Env var names are never spelled out
// here, so a renamed field cannot drift between operator and workload.
//
// Each kind of child object has its own file (deployment.go, job.go,
// service.go, pdb.go, hpa.go, networkpolicy.go, rbac.go, configmap.go, and
// keys.go for the keys Secret), as CloudNativePG's pkg/specs has, so a
// change to one kind is read and reviewed in one place. The pod template
// the Deployments and the Job share is in pod.go, the mapping of the spec
// to the workloads' config structs in workloadconfig.go, and the names and
// labels every object carries in meta.go; this file only assembles them.
package render

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Options are the operator-wide inputs of rendering.
type Options struct {
	// Image is the workloads image used when the TicketEvent names none.
	Image string
}

// Objects are the objects of one sale. The keys Secret is not among them:
// its content is generated once by the reconciler (see GenerateKeys).
type Objects struct {
	ConfigMaps               map[Component]*corev1.ConfigMap
	ServiceAccount           *corev1.ServiceAccount
	Role                     *rbacv1.Role
	RoleBinding              *rbacv1.RoleBinding
	MigrationJob             *batchv1.Job
	Deployments              map[Component]*appsv1.Deployment
	Services                 map[Component]*corev1.Service
	PodDisruptionBudgets     map[Component]*policyv1.PodDisruptionBudget
	HorizontalPodAutoscalers map[Component]*autoscalingv2.HorizontalPodAutoscaler
	// NetworkPolicies has one entry per long-running workload when
	// spec.networkPolicy.enabled, and none otherwise.
	NetworkPolicies map[Component]*networkingv1.NetworkPolicy
}

// Missing lists the spec fields that must be set before the sale can be
// provisioned. They are optional in the schema so a TicketEvent can be
// written before its infrastructure exists.
func Missing(te *ticketsv1alpha1.TicketEvent) []string {
	var m []string
	if te.Spec.Identity == nil {
		m = append(m, "spec.identity")
	}
	if te.Spec.Redis == nil {
		m = append(m, "spec.redis")
	}
	if te.Spec.Postgres == nil {
		m = append(m, "spec.postgres")
	}
	if te.Spec.Kafka == nil {
		m = append(m, "spec.kafka")
	}
	return m
}

// Render renders every object of the sale. It fails when required spec
// fields are missing (see Missing).
func Render(te *ticketsv1alpha1.TicketEvent, opts Options) (*Objects, error) {
	if m := Missing(te); len(m) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(m, ", "))
	}
	cfgs, err := workloadConfigs(te)
	if err != nil {
		return nil, err
	}
	o := &Objects{
		ConfigMaps:               map[Component]*corev1.ConfigMap{},
		Deployments:              map[Component]*appsv1.Deployment{},
		Services:                 map[Component]*corev1.Service{},
		PodDisruptionBudgets:     map[Component]*policyv1.PodDisruptionBudget{},
		HorizontalPodAutoscalers: map[Component]*autoscalingv2.HorizontalPodAutoscaler{},
		NetworkPolicies:          map[Component]*networkingv1.NetworkPolicy{},
	}
	envs := map[Component]renderedEnv{}
	for _, c := range Components {
		e, err := renderEnv(Name(te, c), cfgs[c].vars, cfgs[c].refs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		envs[c] = e
		o.ConfigMaps[c] = configMap(te, c, e)
	}
	o.ServiceAccount, o.Role, o.RoleBinding = queueRBAC(te)
	o.MigrationJob = migrationJob(te, opts, envs[Booking])
	for _, c := range Components {
		o.Deployments[c] = deployment(te, opts, c, envs[c], cfgs[c].port)
	}
	for _, c := range Served {
		o.Services[c] = service(te, c)
		o.PodDisruptionBudgets[c] = pdb(te, c)
	}
	for _, c := range []Component{Queue, Booking} {
		if as := scalable(te, c).Autoscaling; as != nil {
			o.HorizontalPodAutoscalers[c] = hpa(te, c, as)
		}
	}
	if np := te.Spec.NetworkPolicy; np != nil && np.Enabled {
		for _, c := range Components {
			o.NetworkPolicies[c] = networkPolicy(te, c, np.IngressFrom)
		}
	}
	return o, nil
}

// All returns the objects in the order they are applied; the migration Job
// and the Deployments that wait for it come last.
func (o *Objects) All() []client.Object {
	var out []client.Object
	for _, c := range Components {
		out = append(out, o.ConfigMaps[c])
	}
	out = append(out, o.ServiceAccount, o.Role, o.RoleBinding)
	for _, c := range sortedKeys(o.Services) {
		out = append(out, o.Services[c], o.PodDisruptionBudgets[c])
	}
	for _, c := range sortedKeys(o.HorizontalPodAutoscalers) {
		out = append(out, o.HorizontalPodAutoscalers[c])
	}
	for _, c := range sortedKeys(o.NetworkPolicies) {
		out = append(out, o.NetworkPolicies[c])
	}
	out = append(out, o.MigrationJob)
	for _, c := range Components {
		out = append(out, o.Deployments[c])
	}
	return out
}

func sortedKeys[V any](m map[Component]V) []Component {
	ks := make([]Component, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}
