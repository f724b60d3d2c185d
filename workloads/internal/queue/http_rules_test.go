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

package queue

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
)

// The rules every service shares, on the running queue: hostile bytes on
// every route (with a valid identity token and a real queueId in the other
// wildcards) never answer 5xx and always the JSON error body; a wrong
// method is 405 with Allow; /metrics passes the Prometheus linter.
func TestHTTPEdgeRules(t *testing.T) {
	redisURL, _ := testenv.RedisDB(t)
	base := startService(t, testConfig(t, redisURL), nil)
	alice, bob := idToken(t, "alice"), idToken(t, "bob")
	r := do(t, "POST", queueURL(base), bob, nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	// Bob's place fills the queueId wildcard, alice's token the header: a
	// request valid apart from a hostile header (a DELETE) must not touch it.
	place := r.view(t).QueueID
	if r := do(t, "GET", queueURL(base)+"/"+place, bob, nil); r.Status != http.StatusOK {
		t.Fatalf("poll: %d %s", r.Status, r.Body)
	}
	patterns := (&service{m: newMetrics()}).routes().Patterns()
	samples := map[string]string{"eventId": strconv.Itoa(testEvent), "queueId": place}

	t.Run("hostile bytes", func(t *testing.T) {
		httpapitest.CheckBadBytes(t, base, patterns, samples, http.Header{"Authorization": {"Bearer " + alice}})
	})
	t.Run("wrong methods", func(t *testing.T) {
		httpapitest.CheckWrongMethods(t, base, patterns, samples)
	})
	t.Run("metrics lint", func(t *testing.T) {
		httpapitest.LintMetrics(t, base+"/metrics")
	})
	// Nothing was lost: bob keeps his place.
	if r := do(t, "POST", queueURL(base), bob, nil); r.Status != http.StatusOK || r.view(t).QueueID != place {
		t.Fatalf("bob's place changed: %d %s", r.Status, r.Body)
	}
}
