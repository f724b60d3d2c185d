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

package tickets

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
)

// The rules every service shares, on the running tickets service: hostile
// bytes on every route never reach PostgreSQL (which answered 500, SQLSTATE
// 22021, for GET /orders/%00/tickets), a wrong method is 405 with Allow,
// and /metrics passes the Prometheus linter.
func TestHTTPEdgeRules(t *testing.T) {
	url, _ := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	produce(t, brokers, 1, order(1, 2))
	cfg := testConfig(t, url, brokers)
	s := startRun(t, cfg)
	testenv.WaitFor(t, 30*time.Second, "the order's tickets", func() bool { return results(t, s.base)["issued"] == 1 })

	// A second Service only for its route table; its own group keeps it
	// out of the running consumer's way.
	routesOnly := cfg
	routesOnly.ConsumerGroup = "routes-only"
	svc, err := New(context.Background(), routesOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	patterns := svc.Handler().Patterns()
	_ = svc.Close()
	owner := http.Header{"Authorization": {"Bearer " + token(t, order(1, 2).CustomerID)}}

	t.Run("hostile bytes", func(t *testing.T) {
		for _, id := range []string{"%00", "%FF", "%C0%80"} {
			r := httpapitest.Do(t, "GET", s.base+"/orders/"+id+"/tickets", "", owner)
			if r.Status != http.StatusBadRequest || httpapitest.ErrorCode(r.Body) != "bad_path" {
				t.Errorf("GET /orders/%s/tickets: %d %s, want 400 bad_path", id, r.Status, r.Body)
			}
		}
		httpapitest.CheckBadBytes(t, s.base, patterns, nil, owner)
		nulSub := http.Header{"Authorization": {"Bearer " + token(t, "cust-\x000001")}}
		if r := httpapitest.Do(t, "GET", s.base+"/orders/ord-0001/tickets", "", nulSub); r.Status != http.StatusUnauthorized {
			t.Errorf("identity token with NUL in sub: %d %s, want 401", r.Status, r.Body)
		}
	})
	t.Run("wrong methods", func(t *testing.T) {
		httpapitest.CheckWrongMethods(t, s.base, patterns, nil)
		if r := httpapitest.Do(t, "DELETE", s.base+"/orders/x/tickets", "", nil); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("DELETE /orders/x/tickets: %d Allow=%q", r.Status, r.Header.Get("Allow"))
		}
	})
	t.Run("metrics lint", func(t *testing.T) {
		httpapitest.LintMetrics(t, s.base+"/metrics")
	})
}
