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
	"os/exec"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ticketfair/ticketfair/internal/kubelint"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// helmTemplate renders the chart with the given --set values.
func helmTemplate(t *testing.T, root, helm string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "tf", "charts/ticketfair", "--namespace", "ticketfair-system"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	objs, err := kubelint.ParseYAML([]byte(run(t, root, nil, helm, args...)))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind, nameSuffix string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasSuffix(o.GetName(), nameSuffix) {
			out = append(out, o)
		}
	}
	return out
}

func rulesOf(t *testing.T, o *unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	var r rbacv1.ClusterRole // a Role has the same rules field
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
		t.Fatal(err)
	}
	return r.Rules
}

func grants(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func managerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	ds := find(objs, "Deployment", "")
	if len(ds) != 1 {
		t.Fatalf("%d operator Deployments", len(ds))
	}
	args, _, _ := unstructured.NestedSlice(ds[0].Object, "spec", "template", "spec", "containers")
	var out []string
	for _, a := range args[0].(map[string]any)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// TestChart checks the chart's rendered output without a cluster: values the
// schema refuses, least-privilege RBAC, secure metrics, kube-linter's
// default checks, and what NOTES tell.
func TestChart(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm := tool(t, root, "HELM", "helm")

	t.Run("two replicas need leader election", func(t *testing.T) {
		cmd := exec.Command(helm, "template", "tf", "charts/ticketfair", "--set", "replicaCount=2", "--set", "leaderElection.enabled=false")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "replicaCount") {
			t.Fatalf("replicaCount=2 with leaderElection.enabled=false accepted: %v\n%s", err, out)
		}
		helmTemplate(t, root, helm, "replicaCount=1", "leaderElection.enabled=false")
		helmTemplate(t, root, helm, "replicaCount=3", "leaderElection.enabled=true")
	})

	t.Run("watchNamespaces grants Roles in those namespaces only", func(t *testing.T) {
		objs := helmTemplate(t, root, helm, "watchNamespaces={sales,presales}")
		for _, cr := range find(objs, "ClusterRole", "") {
			if rules := rulesOf(t, cr); grants(rules, "secrets", "create") || grants(rules, "secrets", "get") || grants(rules, "deployments", "create") {
				t.Fatalf("ClusterRole %s grants the sale's resources cluster-wide", cr.GetName())
			}
		}
		if n := len(find(objs, "ClusterRoleBinding", "-manager")); n != 0 {
			t.Fatalf("%d manager ClusterRoleBindings", n)
		}
		var nss []string
		for _, r := range find(objs, "Role", "-manager") {
			if !grants(rulesOf(t, r), "secrets", "create") || !grants(rulesOf(t, r), "deployments", "patch") {
				t.Fatalf("Role %s/%s lacks the operator's rules", r.GetNamespace(), r.GetName())
			}
			nss = append(nss, r.GetNamespace())
		}
		var bound []string
		for _, rb := range find(objs, "RoleBinding", "-manager") {
			bound = append(bound, rb.GetNamespace())
		}
		slices.Sort(nss)
		slices.Sort(bound)
		if !slices.Equal(nss, []string{"presales", "sales"}) || !slices.Equal(bound, nss) {
			t.Fatalf("manager Roles in %v, RoleBindings in %v; want presales and sales", nss, bound)
		}

		all := helmTemplate(t, root, helm)
		crs := find(all, "ClusterRole", "-manager")
		if len(crs) != 1 || !grants(rulesOf(t, crs[0]), "secrets", "create") || len(find(all, "Role", "-manager")) != 0 {
			t.Fatal("without watchNamespaces the operator needs its ClusterRole")
		}
	})

	t.Run("metrics are served securely", func(t *testing.T) {
		objs := helmTemplate(t, root, helm)
		args := managerArgs(t, objs)
		for _, want := range []string{"--metrics-secure=true", "--metrics-bind-address=:8443", "--leader-election-namespace=ticketfair-system"} {
			if !slices.Contains(args, want) {
				t.Fatalf("operator args %v lack %s", args, want)
			}
		}
		reader := find(objs, "ClusterRole", "-metrics-reader")
		if len(reader) != 1 {
			t.Fatal("no metrics-reader ClusterRole")
		}
		if r := rulesOf(t, reader[0]); len(r) != 1 || !slices.Equal(r[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(r[0].Verbs, []string{"get"}) {
			t.Fatalf("metrics-reader rules %+v", r)
		}
		auth := find(objs, "ClusterRole", "-metrics-auth")
		if len(auth) != 1 || !grants(rulesOf(t, auth[0]), "tokenreviews", "create") || !grants(rulesOf(t, auth[0]), "subjectaccessreviews", "create") {
			t.Fatal("the operator cannot review tokens and access for /metrics")
		}
	})

	t.Run("kube-linter default checks", func(t *testing.T) {
		for _, set := range [][]string{nil, {"watchNamespaces={a,b}", "replicaCount=1", "leaderElection.enabled=false"}, {"metrics.enabled=false", "crds.enabled=false"}} {
			findings, err := kubelint.Lint(helmTemplate(t, root, helm, set...))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("helm template %v: %s", set, f)
			}
		}
	})

	t.Run("NOTES", func(t *testing.T) {
		cmd := exec.Command(helm, "install", "tf", "charts/ticketfair", "--namespace", "ticketfair-system", "--dry-run=client")
		cmd.Dir = root
		cmd.Env = append(cmd.Environ(), "KUBECONFIG=/nonexistent")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm install --dry-run=client: %v\n%s", err, out)
		}
		_, notes, _ := strings.Cut(string(out), "NOTES:")
		for _, want := range []string{"crds.enabled=false", "make install", "pod-security.kubernetes.io/enforce=restricted", "--create-namespace", "metrics-reader"} {
			if !strings.Contains(notes, want) {
				t.Errorf("NOTES do not mention %q:\n%s", want, notes)
			}
		}
	})
}

// The kustomize overlay passes the same checks and serves /metrics securely.
func TestKustomizeOverlay(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	kustomize := tool(t, root, "KUSTOMIZE", "kustomize")
	objs, err := kubelint.ParseYAML([]byte(run(t, root, nil, kustomize, "build", "config/default")))
	if err != nil {
		t.Fatal(err)
	}
	findings, err := kubelint.Lint(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
	if args := managerArgs(t, find(objs, "Deployment", "")); !slices.Contains(args, "--metrics-secure=true") {
		t.Fatalf("kustomize operator args %v", args)
	}
	if len(find(objs, "ClusterRole", "metrics-reader")) != 1 || len(find(objs, "Service", "metrics-service")) != 1 {
		t.Fatal("kustomize overlay lacks the metrics-reader ClusterRole or the metrics Service")
	}
}
