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

package booking

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// TestHoldRateLimitPerIdentity: the hold past the identity's limit is 429
// with Retry-After and the JSON body, and costs no transaction; another
// customer is not refused by that counter.
func TestHoldRateLimitPerIdentity(t *testing.T) {
	e := newEnv(t, func(c *config.Booking) {
		c.RateLimits = config.RateLimits{RateLimitWindow: time.Minute, HoldPerIdentity: 3}
	})
	tok := e.token("alice")
	for i := 0; i < 3; i++ {
		r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-1-" + strconv.Itoa(i+1)}}, QueueTokenHeader, tok)
		if r.status == http.StatusTooManyRequests {
			t.Fatalf("hold %d refused under the limit: %s", i+1, r.body)
		}
	}
	orders := e.count(`SELECT count(*) FROM ticket_order`)
	r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-2-1"}}, QueueTokenHeader, tok)
	if r.status != http.StatusTooManyRequests || r.errCode() != "rate_limited" {
		t.Fatalf("4th hold: %d %s, want 429 rate_limited", r.status, r.body)
	}
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if scope := r.json(t)["error"].(map[string]any)["scope"]; scope != "identity" {
		t.Fatalf("scope %v", scope)
	}
	if n := e.count(`SELECT count(*) FROM ticket_order`); n != orders {
		t.Fatalf("the refused hold wrote an order (%d -> %d)", orders, n)
	}
	if r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-2-1"}}, QueueTokenHeader, e.token("bob")); r.status != http.StatusCreated {
		t.Fatalf("bob's hold: %d %s", r.status, r.body)
	}
	// A request without a valid token is refused by the hold itself, not
	// counted against anyone.
	if r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-2-2"}}, QueueTokenHeader, "garbage"); r.status != http.StatusUnauthorized {
		t.Fatalf("bad token: %d %s", r.status, r.body)
	}
}

// TestHoldRateLimitPerNetwork: holds from one client network share its
// limit; a client on another /24 (a loopback source address of its own)
// has its own.
func TestHoldRateLimitPerNetwork(t *testing.T) {
	e := newEnv(t, func(c *config.Booking) {
		c.RateLimits = config.RateLimits{RateLimitWindow: time.Minute, HoldPerNetwork: 3}
	})
	from := func(src string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	}
	hold := func(c *http.Client, customer, seat string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", e.base+"/events/7/holds", strings.NewReader(`{"seats":["`+seat+`"]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(QueueTokenHeader, e.token(customer))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body struct{ Error struct{ Code, Scope string } }
		_ = json.Unmarshal(b, &body)
		return resp.StatusCode, body.Error.Scope
	}
	a := from("127.0.7.1")
	defer a.CloseIdleConnections()
	for i := 1; i <= 3; i++ {
		if st, _ := hold(a, "net-a-"+strconv.Itoa(i), "A-3-"+strconv.Itoa(i)); st != http.StatusCreated {
			t.Fatalf("hold %d of the network: %d", i, st)
		}
	}
	if st, scope := hold(a, "net-a-4", "A-3-4"); st != http.StatusTooManyRequests || scope != "network" {
		t.Fatalf("4th hold of the network: %d %q, want 429 network", st, scope)
	}
	// Another address of the same /24 shares its counter.
	a2 := from("127.0.7.200")
	defer a2.CloseIdleConnections()
	if st, _ := hold(a2, "net-a-5", "A-3-5"); st != http.StatusTooManyRequests {
		t.Fatalf("another address of the /24: %d, want 429", st)
	}
	b := from("127.0.8.1")
	defer b.CloseIdleConnections()
	if st, _ := hold(b, "net-b-1", "A-4-1"); st != http.StatusCreated {
		t.Fatalf("another network: %d", st)
	}
}
