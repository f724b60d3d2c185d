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

package openapitest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const doc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/things/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "put": {
        "operationId": "putThing",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false, "required": ["name"], "properties": {"name": {"type": "string"}}}}}},
        "responses": {
          "200": {"description": "ok", "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": false, "required": ["id", "name"],
            "properties": {"id": {"type": "integer"}, "name": {"type": ["string", "null"]}}}}}},
          "400": {"description": "bad", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    }
  },
  "components": {"schemas": {"Error": {"type": "object", "additionalProperties": false, "required": ["error"],
    "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}}}}
}`

// The validator accepts what the document says and fails every kind of
// drift: an undocumented field or status, a served request the document
// rejects, a served undocumented route.
func TestCheckFailsDrift(t *testing.T) {
	v, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var status int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	if u := v.Unexercised(); len(u) != 1 || u[0] != "putThing" {
		t.Fatalf("unexercised before any request: %v", u)
	}
	tr := &transport{v: v, base: http.DefaultTransport}
	client := &http.Client{Transport: tr}
	errBody := `{"error":{"code":"bad","message":"bad"}}`
	for _, c := range []struct {
		name, method, path, req string
		status                  int
		body                    string
		drift                   string // "" = no drift
	}{
		{"documented", "PUT", "/things/1", `{"name":"a"}`, 200, `{"id":1,"name":"a"}`, ""},
		{"3.1 null type", "PUT", "/things/1", `{"name":"a"}`, 200, `{"id":1,"name":null}`, ""},
		{"extra field", "PUT", "/things/1", `{"name":"a"}`, 200, `{"id":1,"name":"a","x":1}`, "does not match"},
		{"wrong type", "PUT", "/things/1", `{"name":"a"}`, 200, `{"id":"1","name":"a"}`, "does not match"},
		{"undocumented status", "PUT", "/things/1", `{"name":"a"}`, 500, errBody, "does not match"},
		{"bad request refused", "PUT", "/things/1", `{"nom":"a"}`, 400, errBody, ""},
		{"bad request served", "PUT", "/things/1", `{"nom":"a"}`, 200, `{"id":1,"name":"a"}`, "rejects the request"},
		{"bad path parameter served", "PUT", "/things/x", `{"name":"a"}`, 200, `{"id":1,"name":"a"}`, "rejects the request"},
		{"undocumented route refused", "GET", "/nope", "", 404, errBody, ""},
		{"undocumented method refused", "GET", "/things/1", "", 405, errBody, ""},
		{"undocumented route served", "GET", "/nope", "", 200, `{}`, "not in the document"},
		{"undocumented route, bad error body", "GET", "/nope", "", 404, `{"error":"x"}`, "undocumented route"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body = c.status, c.body
			req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.req))
			if c.req != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			if c.drift == "" {
				if err != nil {
					t.Fatalf("want no drift, got %v", err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(got) != c.body || resp.StatusCode != c.status {
					t.Fatalf("the caller got %d %q, want %d %q", resp.StatusCode, got, c.status, c.body)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.drift) {
				t.Fatalf("want a drift error containing %q, got %v", c.drift, err)
			}
		})
	}
	if u := v.Unexercised(); len(u) != 0 {
		t.Fatalf("unexercised after the documented request: %v", u)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.drifts) != 7 {
		t.Fatalf("recorded %d drifts for the end of the test, want 7: %v", len(tr.drifts), tr.drifts)
	}
}

// A document that is not OpenAPI 3.1, or names servers, is refused.
func TestLoadRefuses(t *testing.T) {
	for name, d := range map[string]string{
		"3.0":     strings.Replace(doc, `"3.1.0"`, `"3.0.3"`, 1),
		"servers": strings.Replace(doc, `"paths"`, `"servers": [{"url": "http://example.invalid"}], "paths"`, 1),
		"broken":  strings.Replace(doc, `"$ref": "#/components/schemas/Error"`, `"$ref": "#/components/schemas/Nope"`, 1),
	} {
		if _, err := Load([]byte(d)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
