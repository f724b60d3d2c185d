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
	"bytes"
	"testing"

	"github.com/ticketfair/ticketfair/workloads/openapi"
)

// Booking serves its document, and its probes and metrics answer as it
// says (e.do checks every exchange against it).
func TestOpenAPIDocumentServed(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", openapi.Path, nil)
	if r.status != 200 || !bytes.Equal(r.body, openapi.Booking) {
		t.Fatalf("GET %s: %d, %d bytes; want the embedded document", openapi.Path, r.status, len(r.body))
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := e.do("GET", p, nil); r.status != 200 {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
}
