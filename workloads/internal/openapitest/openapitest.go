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

// Package openapitest checks a service's HTTP exchanges against its OpenAPI
// document. The services' tests send their requests through Client (or
// Transport), so every request and response of the existing API tests is
// validated without rewriting them:
//
//   - a request the document accepts must get a response the document
//     describes: a documented status, content type, headers and body;
//   - a request the document rejects (the bad-input tests send many) must be
//     refused with a documented 4xx, never served or answered with a 5xx;
//   - a path or method the document does not have must be answered 404 or
//     405 with the error body.
//
// A drift is returned as the request's error and reported again when the
// test ends, so a test that ignores request errors still fails.
package openapitest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

const clientTimeout = 30 * time.Second

// Validator checks exchanges against one document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options

	mu      sync.Mutex
	clients map[testing.TB]*http.Client
	seen    map[string]bool // "operationId status" exercised
}

// Load parses and validates doc (OpenAPI 3.1).
func Load(doc []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if !t.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("document is OpenAPI %s, want 3.1", t.OpenAPI)
	}
	if err := t.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if len(t.Servers) > 0 {
		return nil, errors.New("the document must not name servers: a test's server listens on a random port")
	}
	r, err := legacy.NewRouter(t)
	if err != nil {
		return nil, err
	}
	return &Validator{doc: t, router: r, clients: map[testing.TB]*http.Client{}, seen: map[string]bool{},
		opts: &openapi3filter.Options{
			// The services check tokens themselves; the tests send bad ones on purpose.
			AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus:             true,
			RejectWhenRequestBodyNotSpecified: true,
			MultiError:                        true,
		}}, nil
}

// MustLoad is Load for package-level variables of tests.
func MustLoad(doc []byte) *Validator {
	v, err := Load(doc)
	if err != nil {
		panic("openapitest: " + err.Error())
	}
	return v
}

// Check validates one exchange: the request with its body as sent, the
// response with its body as received.
func (v *Validator) Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) error {
	ctx := context.Background()
	what := req.Method + " " + req.URL.Path
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	vreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }

	route, params, err := v.router.FindRoute(vreq)
	if err != nil {
		// Not in the document: the service must not serve it either.
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s is not in the document (%v) but was answered %d", what, err, resp.StatusCode)
		}
		if err := v.checkErrorBody(resp, respBody); err != nil {
			return fmt.Errorf("%s: undocumented route answered %d: %w", what, resp.StatusCode, err)
		}
		return nil
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: v.opts}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if reqErr != nil && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
		return fmt.Errorf("%s: the document rejects the request (%v) but the service answered %d", what, reqErr, resp.StatusCode)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: v.opts}
	// The document describes the representation; a gzip content coding the
	// client asked for is checked after decoding it.
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(respBody))
		if err != nil {
			return fmt.Errorf("%s: Content-Encoding gzip but the body is not: %v", what, err)
		}
		if respBody, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("%s: Content-Encoding gzip but the body is not: %v", what, err)
		}
	}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("%s: response %d does not match the document: %v\nbody: %.500s", what, resp.StatusCode, err, respBody)
	}
	v.mu.Lock()
	v.seen[fmt.Sprintf("%s %d", route.Operation.OperationID, resp.StatusCode)] = true
	v.mu.Unlock()
	return nil
}

// checkErrorBody checks an error answer against components.schemas.Error.
func (v *Validator) checkErrorBody(resp *http.Response, body []byte) error {
	ref := v.doc.Components.Schemas["Error"]
	if ref == nil {
		return errors.New("the document has no components.schemas.Error")
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("content type %q, want application/json", ct)
	}
	val, err := decodeJSON(body)
	if err != nil {
		return err
	}
	return ref.Value.VisitJSON(val, openapi3.EnableJSONSchema2020())
}

// Transport wraps base (nil: http.DefaultTransport) so that every exchange
// is checked; a drift fails the request and, at the end, t.
func (v *Validator) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	tr := &transport{v: v, base: base}
	t.Cleanup(func() {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, err := range tr.drifts {
			t.Errorf("openapi: %v", err)
		}
	})
	return tr
}

// Client returns t's checked client (one per test, sharing the default
// transport's connections). Benchmarks get an unchecked one: they measure
// the service, not the validator.
func (v *Validator) Client(t testing.TB) *http.Client {
	if _, ok := t.(*testing.B); ok {
		return &http.Client{Timeout: clientTimeout}
	}
	v.mu.Lock()
	c, ok := v.clients[t]
	v.mu.Unlock()
	if ok {
		return c
	}
	c = &http.Client{Transport: v.Transport(t, nil), Timeout: clientTimeout}
	v.mu.Lock()
	v.clients[t] = c
	v.mu.Unlock()
	t.Cleanup(func() {
		v.mu.Lock()
		delete(v.clients, t)
		v.mu.Unlock()
	})
	return c
}

// Exercised lists the "operationId status" pairs checked so far, sorted.
func (v *Validator) Exercised() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]string, 0, len(v.seen))
	for k := range v.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Unexercised lists the document's operations that no checked exchange
// reached, sorted.
func (v *Validator) Unexercised() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	hit := map[string]bool{}
	for k := range v.seen {
		hit[strings.Fields(k)[0]] = true
	}
	var out []string
	for _, item := range v.doc.Paths.Map() {
		for _, op := range item.Operations() {
			if !hit[op.OperationID] {
				out = append(out, op.OperationID)
			}
		}
	}
	sort.Strings(out)
	return out
}

// AfterTests is a hook for testenv.Main: when every test of the package ran
// (no -run) and passed, an operation of the document that no test exercised
// fails the package, since nothing then keeps it true.
func (v *Validator) AfterTests(code int) int {
	if code != 0 || testing.Short() {
		return code
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return code
	}
	if u := v.Unexercised(); len(u) > 0 {
		fmt.Fprintf(os.Stderr, "openapi: no test exercises these operations of the document: %s\n", strings.Join(u, ", "))
		return 1
	}
	return code
}

type transport struct {
	v      *Validator
	base   http.RoundTripper
	mu     sync.Mutex
	drifts []error
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
	}
	send := req.Clone(req.Context())
	send.Body = io.NopCloser(bytes.NewReader(reqBody))
	if reqBody == nil {
		send.Body = http.NoBody
	}
	resp, err := tr.base.RoundTrip(send)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err := tr.v.Check(req, reqBody, resp, respBody); err != nil {
		tr.mu.Lock()
		tr.drifts = append(tr.drifts, err)
		tr.mu.Unlock()
		return nil, err
	}
	return resp, nil
}

func decodeJSON(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	return v, nil
}
