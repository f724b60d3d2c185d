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

// Package openapi holds the OpenAPI 3.1 documents of the queue, booking and
// tickets APIs. Each service serves its own at GET /openapi.json; the
// services' tests validate every request and response they make against
// them (workloads/internal/openapitest), so a document cannot drift from
// what its service does.
package openapi

import (
	_ "embed"
	"net/http"
)

// The documents, as served.
var (
	//go:embed queue.json
	Queue []byte
	//go:embed booking.json
	Booking []byte
	//go:embed tickets.json
	Tickets []byte
)

// Path is where every service serves its document.
const Path = "/openapi.json"

// Handler serves doc.
func Handler(doc []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(doc)
	})
}
