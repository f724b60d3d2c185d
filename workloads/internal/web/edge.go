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

package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// EdgeConfig configures NewEdge.
type EdgeConfig struct {
	// Base URLs of the services the API paths are proxied to.
	QueueURL, BookingURL, TicketsURL string
	// EventID, when set, makes "/" redirect to that event's waiting room.
	EventID int64

	// IdentitySecret enables POST /demo/login, the local sale's simulated
	// identity provider: HS256 tokens with IdentityIssuer/IdentityAudience,
	// valid for IdentityTTL (default 12h).
	IdentitySecret, IdentityIssuer, IdentityAudience string
	IdentityTTL                                      time.Duration
	// WebhookSecret enables /demo/pay/{orderId}, the simulated payment
	// provider, which signs its webhook to BookingURL with it.
	WebhookSecret string

	// Client sends the demo webhook (default: 10 s timeout).
	Client *http.Client
	// Registry receives the edge's metrics and is served on /metrics
	// (default: a new registry).
	Registry *prometheus.Registry
	Logger   *slog.Logger
}

type edge struct {
	cfg  EdgeConfig
	site *site
	log  *slog.Logger
}

// NewEdge returns the handler of the browser's single origin: pages, hashed
// assets, the proxied service APIs and, when their secrets are set, the
// simulated identity and payment providers of the local sale. A service URL
// that does not parse makes its routes answer 502 (Run checks the URLs
// before serving).
func NewEdge(cfg EdgeConfig) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.IdentityTTL <= 0 {
		cfg.IdentityTTL = 12 * time.Hour
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	e := &edge{cfg: cfg, site: mustSite(), log: cfg.Logger}

	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketfair_edge_requests_total", Help: "Requests through the edge by route and status code.",
	}, []string{"route", "code"})
	cfg.Registry.MustRegister(requests)

	mux := httpapi.NewMux()
	handle := func(pattern string, h http.Handler) {
		mux.Handle(pattern, promhttp.InstrumentHandlerCounter(requests.MustCurryWith(prometheus.Labels{"route": pattern}), h))
	}

	queue := e.proxy("queue", cfg.QueueURL)
	booking := e.proxy("booking", cfg.BookingURL)
	tickets := e.proxy("tickets", cfg.TicketsURL)

	// The service APIs. Paths not listed here (such as booking's internal
	// POST /orders/{id}/confirm) are not reachable through the edge.
	handle("/events/{eventId}/queue", queue)
	handle("/events/{eventId}/queue/{queueId}", queue)
	handle("GET /events/{eventId}/stats", queue)
	handle("GET /.well-known/jwks.json", queue)
	handle("GET /events/{eventId}/seats", booking)
	handle("GET /events/{eventId}/venue", booking)
	handle("/events/{eventId}/holds", booking)
	handle("/events/{eventId}/holds/{orderId}", booking)
	handle("GET /orders/{orderId}", booking)
	handle("POST /payments/webhook", booking)
	handle("GET /orders/{orderId}/tickets", tickets)
	// The gate page's: the ticket keys and gate list it verifies with
	// offline, and check-ins (the service checks the gate credential).
	handle("GET /.well-known/ticket-keys.json", tickets)
	handle("POST /events/{eventId}/checkins", tickets)
	handle("POST /events/{eventId}/checkins/sync", tickets)
	handle("GET /events/{eventId}/gate/list", tickets)

	// The pages and their assets.
	handle("GET /assets/{name}", http.HandlerFunc(e.site.serveAsset))
	handle("GET /sale/{eventId}/{$}", e.page("wait"))
	handle("GET /sale/{eventId}/seats", e.page("seats"))
	handle("GET /sale/{eventId}/orders/{orderId}", e.page("order"))
	handle("GET /gate/{eventId}/{$}", e.page("gate"))
	handle("GET /{$}", http.HandlerFunc(e.root))

	// The local sale's simulated providers.
	if cfg.IdentitySecret != "" {
		handle("POST /demo/login", httpapi.HandlerFunc(e.login))
	}
	if cfg.WebhookSecret != "" {
		// Paying is a form POST: refuse it from other sites.
		cop := http.NewCrossOriginProtection()
		handle("GET /demo/pay/{orderId}", http.HandlerFunc(e.payPage))
		handle("POST /demo/pay/{orderId}", cop.Handler(http.HandlerFunc(e.pay)))
	}

	httpapi.Probes(mux)
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	return mux
}

var errUpstream = &httpapi.Error{Status: http.StatusBadGateway, Code: "upstream_unavailable",
	RetryAfter: 2 * time.Second}

// proxy forwards to the service at raw, keeping the request path.
func (e *edge) proxy(name, raw string) http.Handler {
	target, err := parseServiceURL(raw)
	if err != nil {
		e.log.Error("edge: bad service URL; its routes answer 502", "service", name, "err", err)
		return httpapi.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			u := *errUpstream
			u.Message = "the " + name + " service is not configured"
			return &u
		})
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			u := *errUpstream
			u.Message = "the " + name + " service is unreachable, try again shortly"
			u.Err = err
			if errors.Is(err, context.Canceled) {
				return // the browser went away
			}
			httpapi.WriteError(w, r, &u)
		},
	}
}

func parseServiceURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want http(s)://host[:port]", raw)
	}
	return u, nil
}

func validEventID(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

func (e *edge) page(name string) http.Handler {
	serve := e.site.servePage(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !validEventID(r.PathValue("eventId")) {
			httpapi.WriteError(w, r, httpapi.ErrNotFound)
			return
		}
		serve(w, r)
	})
}

func (e *edge) root(w http.ResponseWriter, r *http.Request) {
	if e.cfg.EventID <= 0 {
		httpapi.WriteError(w, r, httpapi.ErrNotFound)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/sale/%d/", e.cfg.EventID), http.StatusFound)
}

// Run serves the edge on cfg.HTTPAddr until ctx is cancelled.
func Run(ctx context.Context, cfg config.Edge, ready func(net.Addr)) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	h := NewEdge(EdgeConfig{
		QueueURL: cfg.QueueURL, BookingURL: cfg.BookingURL, TicketsURL: cfg.TicketsURL,
		EventID:        cfg.EventID,
		IdentitySecret: cfg.DemoIdentitySecret, IdentityIssuer: cfg.IdentityIssuer, IdentityAudience: cfg.IdentityAudience,
		WebhookSecret: cfg.DemoWebhookSecret,
	})
	if cfg.DemoIdentitySecret != "" || cfg.DemoWebhookSecret != "" {
		slog.Warn("edge: serving the simulated identity and/or payment provider; for the local sale only")
	}
	return httpapi.Run(ctx, httpapi.Server{Addr: cfg.HTTPAddr, Handler: h,
		Drain: cfg.DrainDelay, Grace: cfg.ShutdownGrace, Ready: ready})
}
