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

package loadtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestNetworksAreDistinct: every network's address is a /24 of its own,
// and the bots' is none of the people's.
func TestNetworksAreDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := 0; i < 62720; i++ {
		ip := networkAddr(i).To4()
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte(ip)), 24).Masked().String()
		if j, ok := seen[p]; ok {
			t.Fatalf("networks %d and %d share %s", j, i, p)
		}
		seen[p] = i
	}
	bot := netip.PrefixFrom(netip.AddrFrom4([4]byte(networkAddr(botNetwork).To4())), 24).Masked().String()
	if _, ok := seen[bot]; ok {
		t.Fatalf("the bots' network %s is a person's", bot)
	}
}

// TestClientsComeFromTheirNetworks: requests of each network reach the
// server from that network's address (the peer address a service sees).
func TestClientsComeFromTheirNetworks(t *testing.T) {
	peers := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		peers <- host
	}))
	defer srv.Close()
	cfg := Config{Networks: 3, Bots: Bots{Count: 1}, Profile: DefaultProfile()}
	clients, closeAll := networkClients(cfg, SourceDialer(&net.Dialer{Timeout: 5 * time.Second}))
	defer closeAll()
	a := &api{http: srv.Client(), nets: clients}
	for _, tc := range []struct {
		network int
		want    string
	}{{0, "127.10.0.1"}, {2, "127.10.2.1"}, {4, "127.10.1.1"}, {botNetwork, "127.255.0.1"}} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL, nil)
		resp, err := a.client(a.onNetwork(context.Background(), tc.network)).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-peers; got != tc.want {
			t.Errorf("network %d came from %s, want %s", tc.network, got, tc.want)
		}
	}
}

func TestRefusalsByReason(t *testing.T) {
	r := newRefusals()
	r.note("join", 429, []byte(`{"error":{"code":"rate_limited","scope":"network"}}`))
	r.note("bot join", 429, []byte(`{"error":{"code":"rate_limited","scope":"identity"}}`))
	r.note("bot join", 429, []byte(`{"error":{"code":"rate_limited","scope":"identity"}}`))
	r.note("bot join", 403, []byte(`{"error":{"code":"pow_required"}}`))
	r.note("bot poll", 200, []byte(`{}`))
	got := r.list()
	want := []Refusal{
		{"people", "join", 429, "rate_limited (network)", 1},
		{"bots", "join", 403, "pow_required", 1},
		{"bots", "join", 429, "rate_limited (identity)", 2},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
