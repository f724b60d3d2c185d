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
	"bytes"
	"testing"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/openapi"
)

// The queue serves its document, and its probes and metrics answer as it
// says (do checks every exchange against it).
func TestOpenAPIDocumentServed(t *testing.T) {
	base := startService(t, testConfig(t, testenv.RedisURL(t)), nil)
	r := do(t, "GET", base+openapi.Path, "", nil)
	if r.Status != 200 || !bytes.Equal(r.Body, openapi.Queue) {
		t.Fatalf("GET %s: %d, %d bytes; want the embedded document", openapi.Path, r.Status, len(r.Body))
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := do(t, "GET", base+p, "", nil); r.Status != 200 {
			t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
		}
	}
	if r := do(t, "PUT", base+openapi.Path, "", nil); r.Status != 405 && r.Status != 404 {
		t.Errorf("PUT %s: %d", openapi.Path, r.Status)
	}
}
