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

package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestManager runs the operator's entry point against an API server from
// outside a cluster: leader election with --leader-election-namespace, and
// /metrics over HTTPS for callers the API server authenticates and
// authorizes (the metrics-reader ClusterRole), refused to everyone else.
func TestManager(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}); err != nil {
		t.Fatal(err)
	}

	metricsAddr := freeAddr(t)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"--leader-elect", "--leader-election-namespace=ops", "--metrics-bind-address=" + metricsAddr,
			"--health-probe-bind-address=" + freeAddr(t), "--workload-image=ticketfair:test"}, cfg)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	t.Run("leader election in the given namespace", func(t *testing.T) {
		testenv.WaitFor(t, 30*time.Second, "the operator's Lease in ops", func() bool {
			var l coordinationv1.Lease
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: leaderElectionID}, &l); err != nil {
				select {
				case err := <-done:
					t.Fatalf("run stopped: %v", err)
				default:
				}
				return false
			}
			return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
		})
	})

	t.Run("metrics need an authorized token", func(t *testing.T) {
		root, err := testenv.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "metrics_reader_role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var reader rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(b, &reader); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &reader); err != nil {
			t.Fatal(err)
		}
		token := func(sa string) string {
			t.Helper()
			if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: "ops"}}); err != nil {
				t.Fatal(err)
			}
			tr, err := cs.CoreV1().ServiceAccounts("ops").CreateToken(ctx, sa, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return tr.Status.Token
		}
		scraper, other := token("scraper"), token("other")
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: "ops"}},
		}); err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			// The scaffold's self-signed certificate.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		}}
		get := func(scheme, token string) (int, string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, scheme+"://"+metricsAddr+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		var code int
		var body string
		testenv.WaitFor(t, 30*time.Second, "metrics served to the scraper", func() bool {
			code, body = get("https", scraper)
			return code == http.StatusOK
		})
		for _, m := range []string{"ticketfair_operator_stats_fetch_errors_total", "controller_runtime_reconcile_total"} {
			if !strings.Contains(body, m) {
				t.Fatalf("metrics lack %s", m)
			}
		}
		if code, body = get("https", ""); code != http.StatusUnauthorized {
			t.Fatalf("no token: %d %s, want 401", code, body)
		}
		if code, body = get("https", other); code != http.StatusForbidden {
			t.Fatalf("token without metrics-reader: %d %s, want 403", code, body)
		}
		if code, body = get("http", scraper); code == http.StatusOK {
			t.Fatalf("plain HTTP served the metrics: %d", code)
		}
	})
}
