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
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// tool finds a command-line tool: $env, then bin/<name>, then PATH. A
// missing tool fails the test in CI and skips it elsewhere.
func tool(t *testing.T, root, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p := filepath.Join(root, "bin", name); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	testenv.Unavailable(t, name, errors.New("not found (make tools)"))
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func run(t *testing.T, dir string, stdin []byte, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// TestDeliveryManifests checks that what users install is accepted by a
// real apiserver: the sample, the Helm chart (several value sets) and the
// kustomize overlay, each applied with --dry-run=server.
func TestDeliveryManifests(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := tool(t, root, "KUBECTL", "kubectl")
	helm := tool(t, root, "HELM", "helm")
	kustomize := tool(t, root, "KUSTOMIZE", "kustomize")
	env, cfg := testenv.Kube(t)

	kubeconfig := adminKubeconfig(t, env)
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	// The operator's namespace, and the watched namespaces of the
	// "namespaced" values, where the chart puts the operator's Roles.
	for _, ns := range []string{"ticketfair-system", "sales", "presales"} {
		if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	dryRun := func(t *testing.T, manifests []byte, extra ...string) string {
		args := append([]string{"--kubeconfig", kubeconfig, "apply", "--dry-run=server"}, extra...)
		return run(t, root, manifests, kubectl, append(args, "-f", "-")...)
	}

	t.Run("sample", func(t *testing.T) {
		out := run(t, root, nil, kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-n", "default", "-f", "config/samples/")
		if !strings.Contains(out, "ticketevent.tickets.ticketfair.io/summer-stadium created (server dry run)") {
			t.Fatalf("unexpected output: %s", out)
		}
	})

	valueSets := map[string][]string{
		"defaults":       nil,
		"no crds":        {"--set", "crds.enabled=false"},
		"namespaced":     {"--set", "watchNamespaces={sales,presales}", "--set", "metrics.enabled=false", "--set", "leaderElection.enabled=false", "--set", "replicaCount=1"},
		"workload image": {"--set", "workloadImage=ticketfair:1.2.3", "--set", "crds.keep=false", "--set", "redisCleanup=true"},
	}
	for name, set := range valueSets {
		t.Run("helm template "+name, func(t *testing.T) {
			args := append([]string{"template", "tf", "charts/ticketfair", "--namespace", "ticketfair-system"}, set...)
			manifests := run(t, root, nil, helm, args...)
			out := dryRun(t, []byte(manifests))
			if !strings.Contains(out, "deployment.apps/tf-ticketfair") || !strings.Contains(out, "(server dry run)") {
				t.Fatalf("unexpected output: %s", out)
			}
			if hasCRD := strings.Contains(out, "customresourcedefinition"); hasCRD == strings.Contains(name, "no crds") {
				t.Fatalf("crds.enabled not honoured: %s", out)
			}
		})
	}

	t.Run("kustomize default", func(t *testing.T) {
		manifests := run(t, root, nil, kustomize, "build", "config/default")
		out := dryRun(t, []byte(manifests), "--server-side")
		if !strings.Contains(out, "deployment.apps/ticketfair-controller-manager serverside-applied (server dry run)") {
			t.Fatalf("unexpected output: %s", out)
		}
	})

	t.Run("helm lint", func(t *testing.T) {
		out := run(t, root, nil, helm, "lint", "--strict", "charts/ticketfair")
		if !strings.Contains(out, "0 chart(s) failed") {
			t.Fatalf("helm lint: %s", out)
		}
	})

	t.Run("chart in sync with config", func(t *testing.T) {
		run(t, root, nil, filepath.Join(root, "hack", "sync-chart.sh"), "--check")
	})
}
