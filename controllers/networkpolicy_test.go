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
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// provisionable is minimalEvent with the infrastructure references set, so
// the operator provisions it.
func provisionable(ns, name string) *ticketsv1alpha1.TicketEvent {
	te := minimalEvent(ns, name)
	ref := func(n, k string) corev1.SecretKeySelector {
		return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: n}, Key: k}
	}
	hmac := ref("identity", "hmac-secret")
	te.Spec.Identity = &ticketsv1alpha1.Identity{HMACSecretRef: &hmac}
	te.Spec.Redis = &ticketsv1alpha1.Redis{URLSecretRef: ref("redis", "url")}
	te.Spec.Postgres = &ticketsv1alpha1.Postgres{URLSecretRef: ref("postgres", "url")}
	te.Spec.Kafka = &ticketsv1alpha1.Kafka{Brokers: []string{"kafka:9092"}}
	return te
}

func listNetworkPolicies(t *testing.T, c client.Client, ns string) map[string]networkingv1.NetworkPolicy {
	t.Helper()
	var l networkingv1.NetworkPolicyList
	if err := c.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]networkingv1.NetworkPolicy{}
	for _, np := range l.Items {
		out[np.Name] = np
	}
	return out
}

// updateSpec changes a TicketEvent's spec, retrying when the operator's
// status write got there first.
func updateSpec(t *testing.T, c client.Client, key client.ObjectKey, mutate func(*ticketsv1alpha1.TicketEvent)) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	var te *ticketsv1alpha1.TicketEvent
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		te = getTE(t, c, key)
		mutate(te)
		return c.Update(context.Background(), te)
	}); err != nil {
		t.Fatal(err)
	}
	return te
}

func TestNetworkPolicies(t *testing.T) {
	op := startOperator(t)
	ctx := context.Background()
	c := op.c
	op.namespace(t, "guarded")

	gateway := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress-nginx"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "ingress-nginx"}},
	}
	operatorNS := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ticketfair-system"}},
	}
	office := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.20.0.0/16", Except: []string{"10.20.9.0/24"}}}

	te := provisionable("guarded", "fest")
	te.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: true, IngressFrom: []networkingv1.NetworkPolicyPeer{gateway, operatorNS, office}}
	key := client.ObjectKeyFromObject(te)
	wantNames := []string{"fest-booking", "fest-queue", "fest-relay", "fest-tickets"}

	// checkPolicies waits for exactly the four NetworkPolicies with ingress
	// from the given peers and checks every field the operator renders.
	checkPolicies := func(t *testing.T, from []networkingv1.NetworkPolicyPeer) {
		t.Helper()
		owner := getTE(t, c, key)
		eventually(t, "four NetworkPolicies with the expected peers", func() error {
			nps := listNetworkPolicies(t, c, "guarded")
			var names []string
			for n := range nps {
				names = append(names, n)
			}
			sort.Strings(names)
			if !reflect.DeepEqual(names, wantNames) {
				return fmt.Errorf("NetworkPolicies %v, want %v", names, wantNames)
			}
			for _, comp := range render.Components {
				np := nps[render.Name(owner, comp)]
				if got := np.Spec.Ingress; len(got) != 1 || !reflect.DeepEqual(got[0].From, from) {
					return fmt.Errorf("%s: ingress %+v", np.Name, got)
				}
			}
			return nil
		})
		nps := listNetworkPolicies(t, c, "guarded")
		for _, comp := range render.Components {
			np := nps[render.Name(owner, comp)]
			ref := metav1.GetControllerOf(&np)
			if ref == nil || ref.UID != owner.UID || ref.Kind != "TicketEvent" || ref.Name != "fest" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
				t.Fatalf("%s: controller reference %+v", np.Name, ref)
			}
			if !reflect.DeepEqual(np.Labels, render.Labels(owner, comp)) {
				t.Fatalf("%s: labels %v", np.Name, np.Labels)
			}
			wantSelector := map[string]string{
				"app.kubernetes.io/name": "ticketfair", "app.kubernetes.io/instance": "fest", "app.kubernetes.io/component": string(comp),
			}
			if !reflect.DeepEqual(np.Spec.PodSelector.MatchLabels, wantSelector) || len(np.Spec.PodSelector.MatchExpressions) != 0 {
				t.Fatalf("%s: pod selector %+v", np.Name, np.Spec.PodSelector)
			}
			if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Egress) != 0 {
				t.Fatalf("%s: policyTypes %v, egress %+v: egress must stay unrestricted", np.Name, np.Spec.PolicyTypes, np.Spec.Egress)
			}
			ports := np.Spec.Ingress[0].Ports
			if len(ports) != 1 || ports[0].Protocol == nil || *ports[0].Protocol != corev1.ProtocolTCP ||
				ports[0].Port == nil || ports[0].Port.StrVal != "http" || ports[0].EndPort != nil {
				t.Fatalf("%s: ports %+v", np.Name, ports)
			}
		}
	}

	t.Run("enabled creates one owned NetworkPolicy per service", func(t *testing.T) {
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		checkPolicies(t, []networkingv1.NetworkPolicyPeer{gateway, operatorNS, office})

		// The queue's policy selects the queue pods and opens the port they declare;
		// no policy selects the migration Job's pods.
		owner := waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		queue := deploymentOf(t, c, owner, render.Queue)
		nps := listNetworkPolicies(t, c, "guarded")
		queueNP := nps["fest-queue"]
		sel, err := metav1.LabelSelectorAsSelector(&queueNP.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Matches(labels.Set(queue.Spec.Template.Labels)) {
			t.Fatalf("queue NetworkPolicy %v does not select the queue pods %v", sel, queue.Spec.Template.Labels)
		}
		if p := queue.Spec.Template.Spec.Containers[0].Ports; len(p) != 1 || p[0].Name != "http" {
			t.Fatalf("queue container ports %+v", p)
		}
		jobLabels := render.Labels(owner, render.Migrate)
		for name, np := range nps {
			s, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			if s.Matches(labels.Set(jobLabels)) {
				t.Fatalf("NetworkPolicy %s selects the migration Job's pods", name)
			}
		}
	})

	t.Run("changed peers are applied", func(t *testing.T) {
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.NetworkPolicy.IngressFrom = []networkingv1.NetworkPolicyPeer{gateway}
		})
		checkPolicies(t, []networkingv1.NetworkPolicyPeer{gateway})

		// No peers: the HTTP port is open to any source (from is empty).
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.NetworkPolicy.IngressFrom = nil
		})
		checkPolicies(t, nil)
	})

	t.Run("disabled deletes them, and only them", func(t *testing.T) {
		// A NetworkPolicy the operator does not own, in the same namespace.
		mine := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "team-default-deny", Namespace: "guarded"},
			Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		}
		if err := c.Create(ctx, mine); err != nil {
			t.Fatal(err)
		}
		owner := getTE(t, c, key)
		queueBefore := deploymentOf(t, c, owner, render.Queue)
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			// Peers may stay while it is off.
			te.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: false, IngressFrom: []networkingv1.NetworkPolicyPeer{gateway}}
		})
		eventually(t, "NetworkPolicies deleted", func() error {
			nps := listNetworkPolicies(t, c, "guarded")
			if len(nps) != 1 {
				return fmt.Errorf("%d NetworkPolicies left", len(nps))
			}
			if _, ok := nps["team-default-deny"]; !ok {
				return fmt.Errorf("the NetworkPolicy the operator does not own was deleted: %v", nps)
			}
			return nil
		})
		// The rest of the sale is untouched.
		owner = waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		if q := deploymentOf(t, c, owner, render.Queue); q.UID != queueBefore.UID || q.Generation != queueBefore.Generation {
			t.Fatalf("queue Deployment replaced or changed: generation %d -> %d", queueBefore.Generation, q.Generation)
		}

		// A NetworkPolicy that has a sale's name but is not controlled by it is
		// not deleted. (Reconciles after the spec updates below see it.)
		foreign := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "fest-relay", Namespace: "guarded"},
			Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		}
		if err := c.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		// Removing the field altogether keeps them off.
		for _, np := range []*ticketsv1alpha1.NetworkPolicy{nil, {}} {
			updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) { te.Spec.NetworkPolicy = np })
			waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		}
		nps := listNetworkPolicies(t, c, "guarded")
		kept, ok := nps["fest-relay"]
		if len(nps) != 2 || !ok || kept.UID != foreign.UID {
			t.Fatalf("NetworkPolicies while disabled: %v", nps)
		}
		if ref := metav1.GetControllerOf(&kept); ref != nil {
			t.Fatalf("foreign NetworkPolicy taken over while disabled: %+v", ref)
		}

		// Enabling again recreates them (and takes over the same-named one).
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: true, IngressFrom: []networkingv1.NetworkPolicyPeer{office}}
		})
		wantNames = []string{"fest-booking", "fest-queue", "fest-relay", "fest-tickets", "team-default-deny"}
		checkPolicies(t, []networkingv1.NetworkPolicyPeer{office})
	})

	t.Run("invalid peers are rejected", func(t *testing.T) {
		cases := map[string]networkingv1.NetworkPolicyPeer{
			"empty peer":             {},
			"ipBlock with selectors": {IPBlock: office.IPBlock, NamespaceSelector: gateway.NamespaceSelector},
		}
		for name, peer := range cases {
			bad := provisionable("guarded", "bad-"+strings.ReplaceAll(name, " ", "-"))
			bad.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: true, IngressFrom: []networkingv1.NetworkPolicyPeer{gateway, peer}}
			err := c.Create(ctx, bad)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "each networkPolicy.ingressFrom peer needs podSelector and/or namespaceSelector, or ipBlock alone") ||
				!strings.Contains(err.Error(), "spec.networkPolicy.ingressFrom[1]") {
				t.Fatalf("%s: %v", name, err)
			}
		}
	})

	t.Run("the operator's ClusterRole allows exactly what the reconciler does", func(t *testing.T) {
		root, err := testenv.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(b, &role); err != nil {
			t.Fatal(err)
		}
		var verbs []string
		for _, r := range role.Rules {
			if reflect.DeepEqual(r.APIGroups, []string{"networking.k8s.io"}) && reflect.DeepEqual(r.Resources, []string{"networkpolicies"}) {
				verbs = append(verbs, r.Verbs...)
			}
		}
		// Server-side apply needs patch, and create for a new object; update is never used.
		if want := []string{"create", "delete", "get", "list", "patch", "watch"}; !reflect.DeepEqual(verbs, want) {
			t.Fatalf("networkpolicies verbs %v, want %v", verbs, want)
		}

		role.ObjectMeta = metav1.ObjectMeta{Name: "np-test-manager"}
		if err := c.Create(ctx, &role); err != nil {
			t.Fatal(err)
		}
		const user = "np-test-operator"
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "np-test-manager"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(op.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		scheme := newScheme(t)
		rc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}

		owner := provisionable("guarded", "rbac")
		owner.UID = "00000000-0000-0000-0000-000000000001"
		owner.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: true, IngressFrom: []networkingv1.NetworkPolicyPeer{office}}
		objs, err := render.Render(owner, render.Options{Image: testImage})
		if err != nil {
			t.Fatal(err)
		}
		np := objs.NetworkPolicies[render.Tickets]
		r := &TicketEventReconciler{Client: rc, Scheme: scheme}
		// The reconciler's own apply, once to create and once to change.
		var applyErr error
		eventually(t, "RBAC binding in effect", func() error {
			applyErr = r.apply(ctx, owner, np.DeepCopy())
			if apierrors.IsForbidden(applyErr) {
				return applyErr
			}
			return nil
		})
		if applyErr != nil {
			t.Fatalf("create by server-side apply: %v", applyErr)
		}
		changed := np.DeepCopy()
		changed.Spec.Ingress[0].From = nil
		if err := r.apply(ctx, owner, changed); err != nil {
			t.Fatalf("change by server-side apply: %v", err)
		}
		var got networkingv1.NetworkPolicy
		if err := rc.Get(ctx, client.ObjectKeyFromObject(np), &got); err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(got.Spec.Ingress) != 1 || got.Spec.Ingress[0].From != nil || got.Name != "rbac-tickets" {
			t.Fatalf("applied NetworkPolicy %+v", got.Spec)
		}
		if err := rc.List(ctx, &networkingv1.NetworkPolicyList{}); err != nil {
			t.Fatalf("list in all namespaces: %v", err)
		}
		w, err := rc.Watch(ctx, &networkingv1.NetworkPolicyList{})
		if err != nil {
			t.Fatalf("watch in all namespaces: %v", err)
		}
		w.Stop()
		// Not granted, because not needed.
		got.Spec.Ingress = nil
		if err := rc.Update(ctx, &got); !apierrors.IsForbidden(err) {
			t.Fatalf("update (PUT) is granted but never used: %v", err)
		}
		if err := rc.Delete(ctx, &got); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})
}
