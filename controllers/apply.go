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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// applyConfiguration turns a child rendered by package render into client-go's
// typed apply configuration of its kind. Only the fields render sets are
// carried: pointers left nil stay unset, and status, which the operator never
// owns, is dropped. The PodMonitor (no Go types here) stays unstructured.
func applyConfiguration(obj client.Object) (runtime.ApplyConfiguration, error) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return convert[corev1ac.ConfigMapApplyConfiguration](o, nil)
	case *corev1.ServiceAccount:
		return convert[corev1ac.ServiceAccountApplyConfiguration](o, nil)
	case *corev1.Service:
		return convert(o, func(a *corev1ac.ServiceApplyConfiguration) { a.Status = nil })
	case *rbacv1.Role:
		return convert[rbacv1ac.RoleApplyConfiguration](o, nil)
	case *rbacv1.RoleBinding:
		return convert[rbacv1ac.RoleBindingApplyConfiguration](o, nil)
	case *batchv1.Job:
		return convert(o, func(a *batchv1ac.JobApplyConfiguration) { a.Status = nil })
	case *appsv1.Deployment:
		return convert(o, func(a *appsv1ac.DeploymentApplyConfiguration) { a.Status = nil })
	case *policyv1.PodDisruptionBudget:
		return convert(o, func(a *policyv1ac.PodDisruptionBudgetApplyConfiguration) { a.Status = nil })
	case *autoscalingv2.HorizontalPodAutoscaler:
		return convert(o, func(a *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration) { a.Status = nil })
	case *networkingv1.NetworkPolicy:
		return convert[networkingv1ac.NetworkPolicyApplyConfiguration](o, nil)
	case *unstructured.Unstructured:
		return client.ApplyConfigurationFromUnstructured(o), nil
	}
	return nil, fmt.Errorf("no apply configuration for %T", obj)
}

// convert decodes obj's JSON into the apply configuration AC. The typed
// object's null creationTimestamps decode to unset pointers.
func convert[AC any, PAC interface {
	*AC
	runtime.ApplyConfiguration
}](obj client.Object, clear func(PAC)) (runtime.ApplyConfiguration, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	ac := PAC(new(AC))
	if err := json.Unmarshal(b, ac); err != nil {
		return nil, err
	}
	if clear != nil {
		clear(ac)
	}
	return ac, nil
}

// appliedKey is one child of one TicketEvent.
type appliedKey struct {
	kind, name string
}

// appliedState is what the operator last applied to a child: the hash of the
// apply configuration and the resourceVersion the API server answered with.
type appliedState struct {
	hash, resourceVersion string
}

// appliedChildren remembers the last apply of every child. While the cached
// child still has the resourceVersion of that apply, nobody has changed it
// since, so applying the same configuration again would change nothing: the
// PATCH is skipped. Any change to the child (by anyone, its status included)
// brings a new resourceVersion and the next reconcile applies again. After a
// restart the memory is empty and every child is applied once.
type appliedChildren struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[appliedKey]appliedState
}

func (a *appliedChildren) unchanged(owner types.NamespacedName, k appliedKey, hash, resourceVersion string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.m[owner][k]
	return ok && s.hash == hash && s.resourceVersion == resourceVersion
}

func (a *appliedChildren) record(owner types.NamespacedName, k appliedKey, s appliedState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.NamespacedName]map[appliedKey]appliedState{}
	}
	if a.m[owner] == nil {
		a.m[owner] = map[appliedKey]appliedState{}
	}
	a.m[owner][k] = s
}

func (a *appliedChildren) forget(owner types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, owner)
}

// apply writes obj with server-side apply, owned by te. Only the fields the
// operator renders are sent, so an HPA's replica count or another
// controller's fields are left alone. The PATCH is skipped when the same
// configuration was applied and the child has not changed since.
func (r *TicketEventReconciler) apply(ctx context.Context, te *ticketsv1alpha1.TicketEvent, obj client.Object) error {
	if err := controllerutil.SetControllerReference(te, obj, r.Scheme); err != nil {
		return fmt.Errorf("owner reference on %s: %w", obj.GetName(), err)
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	ac, err := applyConfiguration(obj)
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, obj.GetName(), err)
	}
	body, err := json.Marshal(ac)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", kind, obj.GetName(), err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	owner, key := types.NamespacedName{Namespace: te.Namespace, Name: te.Name}, appliedKey{kind: kind, name: obj.GetName()}

	// What the cache holds now, to skip an apply that would change nothing
	// and to tell a change from a no-op apply.
	before := obj.DeepCopyObject().(client.Object)
	err = r.Get(ctx, client.ObjectKeyFromObject(obj), before)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get %s %s: %w", kind, obj.GetName(), err)
	}
	created := err != nil
	l := log.FromContext(ctx)
	if !created && r.applied.unchanged(owner, key, hash, before.GetResourceVersion()) {
		l.V(2).Info("unchanged since the last apply", "kind", kind, "name", obj.GetName())
		return nil
	}
	if err := r.Apply(ctx, ac, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s: %w", kind, obj.GetName(), err)
	}
	// The answer was decoded into ac; its resourceVersion is the child's now.
	var answer struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			Generation      int64  `json:"generation"`
		} `json:"metadata"`
	}
	if b, err := json.Marshal(ac); err == nil && json.Unmarshal(b, &answer) == nil && answer.Metadata.ResourceVersion != "" {
		r.applied.record(owner, key, appliedState{hash: hash, resourceVersion: answer.Metadata.ResourceVersion})
	}
	switch {
	case created:
		l.Info("created", "kind", kind, "name", obj.GetName())
	case answer.Metadata.ResourceVersion != before.GetResourceVersion():
		l.Info("changed", "kind", kind, "name", obj.GetName(), "generation", answer.Metadata.Generation)
	default:
		l.V(1).Info("unchanged", "kind", kind, "name", obj.GetName())
	}
	return nil
}
