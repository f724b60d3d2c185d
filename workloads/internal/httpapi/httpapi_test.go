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

package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not JSON: %q", rec.Body.String())
	}
	return body.Error
}

func TestWriteErrorMapsStatusInOnePlace(t *testing.T) {
	cases := []struct {
		err        error
		status     int
		code       string
		retryAfter string
	}{
		{Errorf(http.StatusConflict, "seats_unavailable", "taken"), 409, "seats_unavailable", ""},
		{fmt.Errorf("wrapped: %w", ErrNotFound), 404, "not_found", ""},
		{Unavailable("redis", errors.New("dial")), 503, "unavailable", "2"},
		{context.DeadlineExceeded, 503, "unavailable", "2"},
		{errors.New("boom"), 500, "internal", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		WriteError(rec, httptest.NewRequest("GET", "/", nil), c.err)
		if rec.Code != c.status {
			t.Errorf("%v: status %d, want %d", c.err, rec.Code, c.status)
		}
		if got := decodeError(t, rec)["code"]; got != c.code {
			t.Errorf("%v: code %v, want %s", c.err, got, c.code)
		}
		if got := rec.Header().Get("Retry-After"); got != c.retryAfter {
			t.Errorf("%v: Retry-After %q, want %q", c.err, got, c.retryAfter)
		}
	}
	// The cause of a 500 is not shown.
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("GET", "/", nil), errors.New("secret detail"))
	if strings.Contains(rec.Body.String(), "secret detail") {
		t.Fatal("internal error leaked its cause")
	}
}

func TestDecodeJSON(t *testing.T) {
	type req struct {
		Seats []string `json:"seats"`
	}
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"seats":["A-1-1"]}`, 0},
		{`{"seats":`, 400},
		{`{"seat":["A"]}`, 400},
		{`{"seats":[]} {}`, 400},
		{`{"seats":["` + strings.Repeat("x", MaxBodyBytes) + `"]}`, 413},
	} {
		rec := httptest.NewRecorder()
		var dst req
		err := DecodeJSON(rec, httptest.NewRequest("POST", "/", strings.NewReader(c.body)), &dst)
		var he *Error
		switch {
		case c.status == 0 && err != nil:
			t.Errorf("%.20q: %v", c.body, err)
		case c.status != 0 && (!errors.As(err, &he) || he.Status != c.status):
			t.Errorf("%.20q: got %v, want status %d", c.body, err, c.status)
		}
	}
}

func TestCleanText(t *testing.T) {
	for s, want := range map[string]bool{
		"customer-42": true, "Zoë ünïcode": true, "": true,
		"a\x00b": false, "\xff": false, "\xc0\x80": false, "line\nbreak": false, "del\x7f": false, "c1\u0085": false,
	} {
		if got := CleanText(s); got != want {
			t.Errorf("CleanText(%q) = %v, want %v", s, got, want)
		}
	}
}

// The shared router: bad bytes in the path or query are 400 before any
// handler runs, a known path with another method is 405 with Allow, an
// unknown path 404, all with the JSON error body.
func TestMux(t *testing.T) {
	m := NewMux()
	reached := false
	ok := HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		reached = true
		WriteJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id")})
		return nil
	})
	m.Handle("GET /things/{id}", ok)
	m.Handle("DELETE /things/{id}", ok)
	m.Handle("POST /things", ok)
	for _, c := range []struct {
		method, target string
		status         int
		code, allow    string
		reached        bool
	}{
		{"GET", "/things/x", 200, "", "", true},
		{"HEAD", "/things/x", 200, "", "", true},
		{"PATCH", "/things/x", 405, "method_not_allowed", "GET, HEAD, DELETE", false},
		{"GET", "/things", 405, "method_not_allowed", "POST", false},
		{"GET", "/nothing", 404, "not_found", "", false},
		{"GET", "/things/%00", 400, "bad_path", "", false},
		{"GET", "/things/%FF", 400, "bad_path", "", false},
		{"GET", "/things/%C0%80", 400, "bad_path", "", false},
		{"GET", "/things/x?q=%00", 400, "bad_path", "", false},
		{"GET", "/things/x?%FF=1", 400, "bad_path", "", false},
		{"GET", "/things/x?q=%zz", 200, "", "", true},
	} {
		reached = false
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(c.method, c.target, nil))
		if rec.Code != c.status || rec.Header().Get("Allow") != c.allow || reached != c.reached {
			t.Errorf("%s %s: %d Allow=%q reached=%v, want %d %q %v", c.method, c.target, rec.Code, rec.Header().Get("Allow"), reached, c.status, c.allow, c.reached)
		}
		if c.code != "" {
			if got := decodeError(t, rec); got["code"] != c.code || got["message"] == "" {
				t.Errorf("%s %s: error %v, want code %s", c.method, c.target, got, c.code)
			}
		}
	}
	if p := m.Patterns(); len(p) != 3 || p[0] != "GET /things/{id}" {
		t.Errorf("Patterns() = %q", p)
	}
}

// TestServeDrain: after the stop signal the server keeps answering for
// the drain, on a kept-alive connection and on a new one, and tells each
// client to close its connection; only then does it stop listening.
func TestServeDrain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	go func() {
		errc <- ServeDrain(ctx, "127.0.0.1:0", ok, time.Second, time.Second, func(a net.Addr) { addrc <- a })
	}()
	url := "http://" + (<-addrc).String() + "/"
	keepAlive := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	resp, err := keepAlive.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Close {
		t.Fatal("before the stop, the response closes the connection")
	}
	cancel()
	time.Sleep(100 * time.Millisecond)
	stopped := time.Now()
	for name, c := range map[string]*http.Client{"kept-alive": keepAlive, "new": {Transport: &http.Transport{}}} {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("%s connection during the drain: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || !resp.Close {
			t.Errorf("%s connection during the drain: status %d, Connection: close %v", name, resp.StatusCode, resp.Close)
		}
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server still running 5s after a 1s drain")
	}
	if d := time.Since(stopped); d < 700*time.Millisecond {
		t.Errorf("stopped %v after the signal, before the 1s drain ended", d)
	}
}

// TestRun: a background loop's error stops the server and is returned;
// cancelling ctx stops every loop and (after the drain) the server, and Run
// waits for them all.
func TestRun(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	boom := errors.New("boom")
	err := Run(context.Background(), Server{Addr: "127.0.0.1:0", Handler: ok, Drain: 0, Grace: time.Second},
		func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		func(ctx context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Run with a failing loop = %v, want %v", err, boom)
	}

	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	var stopped atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, Server{Addr: "127.0.0.1:0", Handler: ok, Drain: 300 * time.Millisecond, Grace: time.Second, Ready: func(a net.Addr) { addrc <- a }},
			func(ctx context.Context) error {
				<-ctx.Done()
				time.Sleep(100 * time.Millisecond)
				stopped.Store(true)
				return ctx.Err()
			})
	}()
	resp, err := http.Get("http://" + (<-addrc).String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run after cancel = %v, want nil", err)
	}
	if !stopped.Load() {
		t.Fatal("Run returned before its loop did")
	}
}

// TestProbes: both probes answer JSON; /readyz names its failing checks
// and takes the first one's code.
func TestProbes(t *testing.T) {
	var fail error
	m := NewMux()
	Probes(m, Check{Name: "database", Fn: func(context.Context) error { return fail }},
		Check{Name: "keys", Fn: func(context.Context) error { return nil }})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if rec := get(p); rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	fail = errors.New("dial")
	rec := get("/readyz")
	if e := decodeError(t, rec); rec.Code != 503 || e["code"] != "unavailable" || !strings.Contains(e["message"].(string), "database") {
		t.Errorf("failing readyz: %d %s", rec.Code, rec.Body)
	}
	fail = &Error{Status: 503, Code: "migrations_pending", Message: "2 migrations are not applied"}
	if rec := get("/readyz"); rec.Code != 503 || decodeError(t, rec)["code"] != "migrations_pending" {
		t.Errorf("failing readyz: %d %s", rec.Code, rec.Body)
	}
}
