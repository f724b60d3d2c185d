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

package config

// Edge configures `ticketfair edge`: the one origin a browser talks to. It
// serves the web pages and proxies the API paths to the queue, booking and
// tickets services, as an ingress or CDN does in a cluster.
type Edge struct {
	Server
	Event

	QueueURL   string `env:"TICKETFAIR_EDGE_QUEUE_URL" flag:"queue-url" default:"http://127.0.0.1:8081" usage:"base URL of the queue service"`
	BookingURL string `env:"TICKETFAIR_EDGE_BOOKING_URL" flag:"booking-url" default:"http://127.0.0.1:8082" usage:"base URL of the booking service"`
	TicketsURL string `env:"TICKETFAIR_EDGE_TICKETS_URL" flag:"tickets-url" default:"http://127.0.0.1:8083" usage:"base URL of the tickets service"`

	// The simulated identity and payment providers of the local sale. Left
	// empty (as in a real deployment) they are not served at all.
	DemoIdentitySecret string `env:"TICKETFAIR_DEMO_IDENTITY_SECRET" flag:"demo-identity-secret" secret:"true" usage:"local sale only: HS256 secret with which POST /demo/login issues identity tokens (empty: no demo login)"`
	DemoWebhookSecret  string `env:"TICKETFAIR_DEMO_WEBHOOK_SECRET" flag:"demo-webhook-secret" secret:"true" usage:"local sale only: secret with which /demo/pay signs the payment webhook (empty: no demo payment page)"`
	IdentityIssuer     string `env:"TICKETFAIR_IDENTITY_ISSUER" flag:"identity-issuer" default:"ticketfair-identity" usage:"iss of the identity tokens /demo/login issues"`
	IdentityAudience   string `env:"TICKETFAIR_IDENTITY_AUDIENCE" flag:"identity-audience" default:"ticketfair" usage:"aud of the identity tokens /demo/login issues"`
}
