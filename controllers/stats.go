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

package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/workloads/queuestats"
	"github.com/ticketfair/ticketfair/workloads/ticketstats"
)

// Stats are the sale figures the queue serves at GET /events/{eventId}/stats.
type Stats = queuestats.Stats

// StatsFetcher gets the sale figures of a TicketEvent.
type StatsFetcher interface {
	FetchStats(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (Stats, error)
}

// TicketStats are the figures the tickets service serves at
// GET /events/{eventId}/stats: tickets, their mails, check-in.
type TicketStats = ticketstats.Stats

// TicketStatsFetcher gets the tickets figures of a TicketEvent.
type TicketStatsFetcher interface {
	FetchTicketStats(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (TicketStats, error)
}

// HTTPStats fetches the figures from the queue and tickets Services over
// HTTP.
type HTTPStats struct {
	// Client defaults to one client shared by every fetch, so connections to
	// the queues are kept alive between polls.
	Client *http.Client
	// BaseURL returns the queue's base URL. When nil, the queue is reached
	// at its Service's ClusterIP read from Services (QueueServiceIPURL), or
	// without Services at http://<name>-queue.<namespace>.svc:8080.
	BaseURL func(te *ticketsv1alpha1.TicketEvent) string
	// TicketsBaseURL returns the tickets service's base URL. When nil, it is
	// reached like the queue, at its Service (TicketsServiceIPURL), unless
	// BaseURL is set: a queue reached elsewhere than at its Service leaves
	// no tickets Service to ask, and no tickets figures are fetched.
	TicketsBaseURL func(te *ticketsv1alpha1.TicketEvent) string
	// Services reads the queue and tickets Services (the manager's cache).
	Services client.Reader
}

var _ TicketStatsFetcher = (*HTTPStats)(nil)

// errNoTicketsURL is FetchTicketStats of an HTTPStats that knows no
// address of the tickets service; the StatsPoller then leaves the tickets
// figures alone.
var errNoTicketsURL = errors.New("no base URL of the tickets service")

// sharedStatsClient has a 2 s timeout: a slow queue must not hold up the
// figures of the other sales.
var sharedStatsClient = &http.Client{Timeout: 2 * time.Second}

// QueueServiceURL is the in-cluster base URL of a TicketEvent's queue.
func QueueServiceURL(te *ticketsv1alpha1.TicketEvent) string { return serviceURL(te, render.Queue) }

// TicketsServiceURL is the in-cluster base URL of a TicketEvent's tickets service.
func TicketsServiceURL(te *ticketsv1alpha1.TicketEvent) string { return serviceURL(te, render.Tickets) }

func serviceURL(te *ticketsv1alpha1.TicketEvent, c render.Component) string {
	return fmt.Sprintf("http://%s.%s.svc:8080", render.Name(te, c), te.Namespace)
}

// QueueServiceIPURL is the base URL of a TicketEvent's queue at its
// Service's ClusterIP, read from the Service the operator owns, so the
// figures do not depend on a cluster DNS add-on (the operator's pod may
// have none, and it saves a lookup per fetch). Without a ClusterIP yet it
// is QueueServiceURL.
func QueueServiceIPURL(ctx context.Context, c client.Reader, te *ticketsv1alpha1.TicketEvent) string {
	return serviceIPURL(ctx, c, te, render.Queue)
}

// TicketsServiceIPURL is QueueServiceIPURL for the tickets service.
func TicketsServiceIPURL(ctx context.Context, c client.Reader, te *ticketsv1alpha1.TicketEvent) string {
	return serviceIPURL(ctx, c, te, render.Tickets)
}

func serviceIPURL(ctx context.Context, c client.Reader, te *ticketsv1alpha1.TicketEvent, comp render.Component) string {
	var svc corev1.Service
	key := client.ObjectKey{Namespace: te.Namespace, Name: render.Name(te, comp)}
	if err := c.Get(ctx, key, &svc); err != nil || len(svc.Spec.Ports) == 0 ||
		svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return serviceURL(te, comp)
	}
	return "http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
}

// FetchStats implements StatsFetcher.
func (h *HTTPStats) FetchStats(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (Stats, error) {
	var base string
	switch {
	case h.BaseURL != nil:
		base = h.BaseURL(te)
	case h.Services != nil:
		base = QueueServiceIPURL(ctx, h.Services, te)
	default:
		base = QueueServiceURL(te)
	}
	s := Stats{Held: -1, Sold: -1} // unknown unless the queue reports them
	if err := h.get(ctx, base, te, &s); err != nil {
		return Stats{}, err
	}
	return s, nil
}

// FetchTicketStats implements TicketStatsFetcher.
func (h *HTTPStats) FetchTicketStats(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (TicketStats, error) {
	var base string
	switch {
	case h.TicketsBaseURL != nil:
		base = h.TicketsBaseURL(te)
	case h.BaseURL != nil:
		return TicketStats{}, errNoTicketsURL
	case h.Services != nil:
		base = TicketsServiceIPURL(ctx, h.Services, te)
	default:
		base = TicketsServiceURL(te)
	}
	var s TicketStats
	if err := h.get(ctx, base, te, &s); err != nil {
		return TicketStats{}, err
	}
	return s, nil
}

// get decodes the JSON of base's /events/{eventId}/stats into v.
func (h *HTTPStats) get(ctx context.Context, base string, te *ticketsv1alpha1.TicketEvent, v any) error {
	c := h.Client
	if c == nil {
		c = sharedStatsClient
	}
	url := fmt.Sprintf("%s/events/%d/stats", base, te.Spec.EventID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("stats request: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: status %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", url, err)
	}
	return nil
}
