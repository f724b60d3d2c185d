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
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// requestCounter counts the operator's API requests by verb and resource.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int // "PATCH deployments"
	next   http.RoundTripper
}

func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	verb := req.Method
	if req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	c.mu.Lock()
	c.counts[verb+" "+resourceOf(req.URL.Path)]++
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

// resourceOf is the resource (and subresource) of an API path:
// /apis/apps/v1/namespaces/ns/deployments/name -> deployments.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "discovery"
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "?"
	case 3:
		return parts[0] + "/" + parts[2]
	default:
		return parts[0]
	}
}

// reset returns the counts so far and starts again from zero.
func (c *requestCounter) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = map[string]int{}
	return out
}

func isWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	switch verb {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// TestIdleSaleAPIRequests measures the operator's API requests for one
// idle TicketEvent (Ready, its queue ready and reporting unchanged
// figures): at steady state the operator only watches; it writes nothing.
// TICKETFAIR_IDLE_WINDOW (default 10s) sets the measured window.
func TestIdleSaleAPIRequests(t *testing.T) {
	window := 10 * time.Second
	if v := os.Getenv("TICKETFAIR_IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		window = d
	}
	_, cfg := testenv.Kube(t)
	counter := &requestCounter{counts: map[string]int{}}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		counter.next = rt
		return counter
	}))
	q := &fakeQueue{}
	srv := httptest.NewServer(q)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	skip := true
	mgr, err := ctrl.NewManager(counted, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: &skip}, Logger: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	r := &TicketEventReconciler{
		Client:    mgr.GetClient(),
		Scheme:    scheme,
		Options:   render.Options{Image: testImage},
		Recorder:  mgr.GetEventRecorder("ticketfair-operator"),
		Stats:     &HTTPStats{BaseURL: func(*ticketsv1alpha1.TicketEvent) string { return srv.URL }},
		APIReader: mgr.GetAPIReader(),
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	ns := "idle"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createSecrets(t, c, ns, provisionableSecrets)
	q.set(Stats{Waiting: 10, Active: 5, AdmittedTotal: 20, Remaining: 100, Held: 3, Sold: 7, SalesOpen: true,
		UpdatedAt: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}, false)
	te := provisionable(ns, "idle")
	te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	if err := c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(te)
	eventually(t, "migration Job", func() error {
		got := getTE(t, c, key)
		if got.Status.Migration.JobName == "" {
			return fmt.Errorf("no Job yet")
		}
		return nil
	})
	completeJob(t, c, client.ObjectKey{Namespace: ns, Name: getTE(t, c, key).Status.Migration.JobName})
	for _, comp := range render.Components {
		deploymentOf(t, c, te, comp)
		markAvailable(t, c, client.ObjectKey{Namespace: ns, Name: render.Name(te, comp)})
	}
	waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable)
	waitCondition(t, c, key, ticketsv1alpha1.ConditionSalesOpen, metav1.ConditionTrue, reasonStatsReported)

	// Let the last writes of provisioning settle, then measure.
	time.Sleep(3 * time.Second)
	counter.reset()
	time.Sleep(window)
	counts := counter.reset()

	var keys []string
	reads, writes := 0, 0
	for k, n := range counts {
		keys = append(keys, fmt.Sprintf("%s=%d", k, n))
		if isWrite(k) {
			writes += n
		} else {
			reads += n
		}
	}
	sort.Strings(keys)
	perMinute := func(n int) float64 { return float64(n) * float64(time.Minute) / float64(window) }
	t.Logf("idle TicketEvent over %s: %d reads (%.0f/min), %d writes (%.0f/min): %s",
		window, reads, perMinute(reads), writes, perMinute(writes), strings.Join(keys, " "))
	// The stats poller fetches unchanged figures and writes nothing; the
	// reconciler runs only on a watch event, and there is none.
	if writes > 0 {
		t.Errorf("%d writes at steady state, want none: %s", writes, strings.Join(keys, " "))
	}
	// Some headroom for a watch that is re-established during the window.
	if reads > 10 {
		t.Errorf("%d reads at steady state, want at most 10: %s", reads, strings.Join(keys, " "))
	}
}
