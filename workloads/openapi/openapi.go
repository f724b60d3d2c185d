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
