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
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText reports whether s may be used as an id, key or token subject:
// valid UTF-8 without control characters. PostgreSQL refuses NUL and
// invalid UTF-8 in text (SQLSTATE 22021), and control characters have no
// place in ids or in the logs that print them.
func CleanText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Errors of the shared routing rules.
var (
	ErrBadPath = &Error{Status: http.StatusBadRequest, Code: "bad_path",
		Message: "the path or query contains invalid UTF-8 or control characters"}
	ErrMethodNotAllowed = &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed"}
)

// probeMethods are the methods tried to build a 405's Allow header.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// Mux is the router of every service: net/http's method+path patterns plus
// the rules they all share. A path or query that is not clean text (see
// CleanText) is 400 before any handler sees it; a known path asked with
// another method is 405 with Allow; an unknown path is 404; all with the
// JSON error body.
type Mux struct {
	mux      http.ServeMux
	patterns []string
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{} }

// Handle registers h for pattern ("METHOD /path/{wildcard}").
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.mux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// HandleFunc registers f for pattern.
func (m *Mux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Patterns returns the registered patterns, in registration order.
func (m *Mux) Patterns() []string { return slices.Clone(m.patterns) }

func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !cleanURL(r.URL) {
		WriteError(w, r, ErrBadPath)
		return
	}
	if _, pattern := m.mux.Handler(r); pattern != "" {
		m.mux.ServeHTTP(w, r)
		return
	}
	if allow := m.allowed(r); len(allow) > 0 {
		a := strings.Join(allow, ", ")
		w.Header().Set("Allow", a)
		e := *ErrMethodNotAllowed
		e.Message = "use " + a
		WriteError(w, r, &e)
		return
	}
	WriteError(w, r, ErrNotFound)
}

// allowed lists the methods some pattern accepts for r's path.
func (m *Mux) allowed(r *http.Request) []string {
	var allow []string
	for _, method := range probeMethods {
		if method == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = method
		if _, pattern := m.mux.Handler(probe); pattern != "" {
			allow = append(allow, method)
		}
	}
	return allow
}

func cleanURL(u *url.URL) bool {
	if !CleanText(u.Path) {
		return false
	}
	if u.RawQuery == "" {
		return true
	}
	q, _ := url.ParseQuery(u.RawQuery) // malformed pairs are dropped, as r.URL.Query() does
	for k, vs := range q {
		if !CleanText(k) {
			return false
		}
		for _, v := range vs {
			if !CleanText(v) {
				return false
			}
		}
	}
	return true
}
