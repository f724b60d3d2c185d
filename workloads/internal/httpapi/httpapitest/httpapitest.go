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

// Package httpapitest checks, against a running service, the rules every
// ticketfair HTTP service shares: no 5xx and a JSON error body for hostile
// bytes on any route, 405 with Allow for a wrong method, and metric names
// that pass the Prometheus linter.
package httpapitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// BadValues are path or query values, as sent on the wire, that must never
// reach a database or answer 5xx: NUL, a lone 0xFF, an overlong NUL
// (C0 80), a newline and DEL.
var BadValues = []string{"%00", "%FF", "%C0%80", "a%00b", "%0A", "%7F"}

// BadHeaderValue is a header value of invalid UTF-8 (the HTTP client
// refuses to send control characters in headers, servers take these).
const BadHeaderValue = "\xff\xfe\xc0\x80"

// headersWithIDs are the headers whose values the services use as ids or
// tokens; each is also sent with BadHeaderValue.
var headersWithIDs = []string{"Authorization", "X-Queue-Token", "Idempotency-Key", "Ticketfair-Signature"}

var wildcard = regexp.MustCompile(`\{([^}]*)\}`)

// Route is a registered pattern split into method (possibly "") and path.
type Route struct{ Method, Path string }

// Routes splits patterns such as "GET /orders/{orderId}".
func Routes(patterns []string) []Route {
	var rs []Route
	for _, p := range patterns {
		m, path, ok := strings.Cut(p, " ")
		if !ok {
			m, path = "", p
		}
		rs = append(rs, Route{Method: m, Path: path})
	}
	return rs
}

// fill replaces the wildcards of path: bad for the one named target (""
// for none), the sample value (default "1") for the others.
func fill(path string, samples map[string]string, target, bad string) string {
	return wildcard.ReplaceAllStringFunc(path, func(w string) string {
		name := strings.TrimSuffix(strings.Trim(w, "{}"), "...")
		switch {
		case name == "$":
			return ""
		case name == target:
			return bad
		case samples[name] != "":
			return samples[name]
		}
		return "1"
	})
}

func wildcards(path string) []string {
	var ws []string
	for _, m := range wildcard.FindAllStringSubmatch(path, -1) {
		if name := strings.TrimSuffix(m[1], "..."); name != "$" {
			ws = append(ws, name)
		}
	}
	return ws
}

// Response is what a check got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends one request with headers and returns the answer.
func Do(t testing.TB, method, url string, body string, headers http.Header) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("%s %q: %v", method, url, err)
	}
	for k, vs := range headers {
		req.Header[k] = vs
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %q: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// ErrorCode returns error.code of a JSON error body, or "" when the body is
// not one ({"error":{"code":"...","message":"..."}} with both set).
func ErrorCode(body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return ""
	}
	return e.Error.Code
}

// CheckBadBytes sends BadValues in every wildcard of every route, in a
// query parameter of every route, and BadHeaderValue in every id-carrying
// header, once with each of headerSets (valid credentials, so the bytes
// get as deep as they can), and fails on any 5xx or any error without the
// JSON error body. samples are valid values for the other wildcards.
func CheckBadBytes(t *testing.T, base string, patterns []string, samples map[string]string, headerSets ...http.Header) {
	t.Helper()
	if len(headerSets) == 0 {
		headerSets = []http.Header{{}}
	}
	check := func(method, path, body string, h http.Header) {
		t.Helper()
		r := Do(t, method, base+path, body, h)
		if r.Status >= 500 {
			t.Errorf("%s %s: %d %s", method, path, r.Status, r.Body)
		} else if r.Status >= 400 && ErrorCode(r.Body) == "" {
			t.Errorf("%s %s: %d without a JSON error body: %q", method, path, r.Status, r.Body)
		}
	}
	for _, rt := range Routes(patterns) {
		method := rt.Method
		if method == "" {
			method = http.MethodGet
		}
		body := ""
		if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
			body = "{}"
		}
		for _, h := range headerSets {
			for _, w := range wildcards(rt.Path) {
				for _, bad := range BadValues {
					check(method, fill(rt.Path, samples, w, bad), body, h)
				}
			}
			for _, bad := range BadValues {
				check(method, fill(rt.Path, samples, "", "")+"?id="+bad, body, h)
			}
			for _, name := range headersWithIDs {
				bh := h.Clone()
				if bh == nil {
					bh = http.Header{}
				}
				bh.Set(name, BadHeaderValue)
				if name == "Authorization" {
					bh.Set(name, "Bearer "+BadHeaderValue)
				}
				check(method, fill(rt.Path, samples, "", ""), body, bh)
			}
		}
	}
}

// CheckWrongMethods asks every route that names a method with every other
// common method and wants 405, an Allow header naming the route's method,
// and the JSON error body; paths served for some method must never 404.
func CheckWrongMethods(t *testing.T, base string, patterns []string, samples map[string]string) {
	t.Helper()
	// The services' router, net/http's ServeMux, with the same patterns
	// tells which methods some route serves a path with: a wildcard route
	// may serve a literal one too (DELETE /q/{id} serves /q/state beside
	// GET /q/state).
	router := http.NewServeMux()
	for _, p := range patterns {
		router.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
	}
	for _, rt := range Routes(patterns) {
		if rt.Method == "" {
			continue
		}
		path := fill(rt.Path, samples, "", "")
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if _, served := router.Handler(httptest.NewRequest(m, path, nil)); served != "" {
				continue
			}
			r := Do(t, m, base+path, "", nil)
			allow := strings.Split(r.Header.Get("Allow"), ", ")
			if r.Status != http.StatusMethodNotAllowed || !slices.Contains(allow, rt.Method) || ErrorCode(r.Body) != "method_not_allowed" {
				t.Errorf("%s %s (route %s %s): %d Allow=%q %s, want 405 method_not_allowed with Allow naming %s",
					m, path, rt.Method, rt.Path, r.Status, r.Header.Get("Allow"), r.Body, rt.Method)
			}
		}
	}
}

// MetricValue is the value of the sample named by series (name with its
// labels as exposed) in a /metrics body.
func MetricValue(t testing.TB, body []byte, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in the metrics:\n%s", series, body)
	return 0
}

// LintMetrics scrapes url (a /metrics endpoint) and fails on every problem
// the Prometheus linter finds, and on an empty scrape.
func LintMetrics(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "# TYPE ") {
		t.Fatalf("GET %s: no metrics in %q", url, body)
	}
	problems, err := promlint.New(strings.NewReader(string(body))).Lint()
	if err != nil {
		t.Fatalf("lint %s: %v", url, err)
	}
	for _, p := range problems {
		t.Errorf("%s: metric %s: %s", url, p.Metric, p.Text)
	}
}
