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

package openapi_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ticketfair/ticketfair/workloads/internal/openapitest"
	"github.com/ticketfair/ticketfair/workloads/openapi"
)

// The lint of `make openapi-lint`: each document is OpenAPI 3.1, resolves
// and validates (examples included), and every operation has an id, a
// summary and a tag, and answers JSON errors with the Error schema.
func TestDocumentsAreValid(t *testing.T) {
	for name, doc := range map[string][]byte{"queue": openapi.Queue, "booking": openapi.Booking, "tickets": openapi.Tickets} {
		if _, err := openapitest.Load(doc); err != nil {
			t.Errorf("%s.json: %v", name, err)
			continue
		}
		d, err := openapi3.NewLoader().LoadFromData(doc)
		if err != nil {
			t.Fatal(err)
		}
		if d.Components == nil || d.Components.Schemas["Error"] == nil {
			t.Errorf("%s.json: no components.schemas.Error", name)
		}
		for path, item := range d.Paths.Map() {
			for method, op := range item.Operations() {
				where := name + ".json " + method + " " + path
				if op.OperationID == "" || op.Summary == "" || len(op.Tags) == 0 {
					t.Errorf("%s: operationId, summary and tags are required", where)
				}
				for code, resp := range op.Responses.Map() {
					if code[0] != '4' {
						continue
					}
					mt := resp.Value.Content.Get("application/json")
					if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
						t.Errorf("%s: %s must answer application/json with #/components/schemas/Error", where, code)
					}
				}
			}
		}
	}
}
