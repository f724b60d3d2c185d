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
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// HTTPStats decodes held and sold; a queue that does not report them
// (an older release) leaves them -1, unknown, rather than 0 sold.
func TestHTTPStatsInventory(t *testing.T) {
	for _, tc := range []struct {
		name, body      string
		remaining, held int64
		sold            int64
	}{
		{"reported", `{"waiting":3,"remaining":41000,"held":1200,"sold":9000,"salesOpen":true}`, 41000, 1200, 9000},
		{"unpublished", `{"waiting":3,"remaining":-1,"held":-1,"sold":-1,"salesOpen":true}`, -1, -1, -1},
		{"older queue", `{"waiting":3,"remaining":41000,"salesOpen":true}`, 41000, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/events/7/stats" {
					http.NotFound(w, r)
					return
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			h := &HTTPStats{BaseURL: func(*ticketsv1alpha1.TicketEvent) string { return srv.URL }}
			te := &ticketsv1alpha1.TicketEvent{Spec: ticketsv1alpha1.TicketEventSpec{EventID: 7}}
			s, err := h.FetchStats(context.Background(), te)
			if err != nil {
				t.Fatal(err)
			}
			if s.Waiting != 3 || s.Remaining != tc.remaining || s.Held != tc.held || s.Sold != tc.sold || !s.SalesOpen {
				t.Fatalf("stats %+v, want remaining %d held %d sold %d", s, tc.remaining, tc.held, tc.sold)
			}
		})
	}
}

// The operator reaches the queue at its Service's ClusterIP, assigned by
// the apiserver, so no cluster DNS is needed; before the Service exists it
// falls back to the Service's DNS name.
func TestQueueServiceIPURL(t *testing.T) {
	ctx := context.Background()
	_, cfg := testenv.Kube(t)
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	te := minimalEvent("default", "ipurl")
	if got, want := QueueServiceIPURL(ctx, c, te), "http://ipurl-queue.default.svc:8080"; got != want {
		t.Errorf("without the Service: %s, want %s", got, want)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: render.Name(te, render.Queue)},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}},
	}
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" {
		t.Fatal("the apiserver assigned no ClusterIP")
	}
	if got, want := QueueServiceIPURL(ctx, c, te), "http://"+svc.Spec.ClusterIP+":8080"; got != want {
		t.Errorf("with the Service: %s, want %s", got, want)
	}
}
