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

package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// api speaks to the queue, booking and tickets services, recording every
// request. All shapes of the services' JSON live here.
type api struct {
	http       *http.Client
	queueURL   string
	stateURL   string // the queue's public state, through the cache when there is one
	bookingURL string
	ticketsURL string
	eventID    int64
	rec        *recorder
	observe    func(endpoint string, status int, start time.Time)
	nets       []*http.Client // one per client network (bots.go)
	refusals   *refusals      // 403, 409 and 429 answers by reason (bots.go)
}

type sectionView struct {
	Name      string `json:"name"`
	Price     string `json:"price"`
	Available int    `json:"available"`
}

// seatMap is the booking service's compact GET /events/{id}/seats?format=rows:
// per-section counts and one status string per row ('A' available), which
// seats expands (seat ids are "<section>-<row>-<seat>").
type seatMap struct {
	AsOf     time.Time     `json:"asOf"`
	Sections []sectionView `json:"sections"`
	Rows     []struct {
		Section string `json:"section"`
		Row     int    `json:"row"`
		First   int    `json:"first"`
		Seats   string `json:"seats"`
	} `json:"rows"`
}

// available returns the ids of the seats of section that the map shows
// available, in map order, named as p names them (nil: by the row's
// number). p's wheelchair and companion seats are left for those who need
// them until nothing else is left: then they are sold to all, as venues
// release them late, or the sale would never sell out.
func (m seatMap) available(section string, p *places) []string {
	var ids, spare []string
	for _, row := range m.Rows {
		if row.Section != section || row.Row == 0 { // row 0: a standing area's places
			continue
		}
		for i := 0; i < len(row.Seats); i++ {
			if row.Seats[i] == 'A' {
				id := p.seatID(section, row.Row, row.First+i)
				if p != nil && p.accessible[id] {
					spare = append(spare, id)
				} else {
					ids = append(ids, id)
				}
			}
		}
	}
	if len(ids) == 0 {
		return spare
	}
	return ids
}

type holdResponse struct {
	OrderID   string   `json:"orderId"`
	Seats     []string `json:"seats"`
	Amount    string   `json:"amount"`
	ExpiresAt string   `json:"expiresAt"`
}

// refusal is the error of a hold booking refused: its code and the
// fields a crowd acts on.
type refusal struct {
	Code        string   `json:"code"`
	Unavailable []string `json:"unavailable"` // seats_unavailable
	Available   *int     `json:"available"`   // not_enough_places: the places left
	Split       []string `json:"split"`       // no_seats_together: the best seats apart
}

type conflictResponse struct {
	Error refusal `json:"error"`
}

type ticketsResponse struct {
	Tickets []json.RawMessage `json:"tickets"`
}

// result is a finished request: status 0 is a transport error.
type result struct {
	status     int
	body       []byte
	retryAfter time.Duration
	etag       string
}

func (a *api) do(ctx context.Context, name, method, url string, body []byte, hdr map[string]string) result {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return result{}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := a.client(ctx).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			// The crowd gave the request up (its stop or deadline): not the
			// service's failure, and not a request the service answered.
			return result{}
		}
		a.rec.record(name, 0, time.Since(start), err)
		if a.observe != nil {
			a.observe(name, 0, start)
		}
		return result{}
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	resp.Body.Close()
	a.rec.record(name, resp.StatusCode, time.Since(start), nil)
	a.refusals.note(name, resp.StatusCode, b)
	if a.observe != nil {
		a.observe(name, resp.StatusCode, start)
	}
	r := result{status: resp.StatusCode, body: b, etag: resp.Header.Get("ETag")}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			r.retryAfter = time.Duration(n) * time.Second
		}
	}
	return r
}

func (a *api) eventPath(base string) string { return fmt.Sprintf("%s/events/%d", base, a.eventID) }

func (a *api) join(ctx context.Context, idToken string) (queueapi.Place, result) {
	r := a.do(ctx, "join", http.MethodPost, a.eventPath(a.queueURL)+"/queue", []byte("{}"), bearer(idToken))
	var j queueapi.Place
	if r.status == http.StatusOK || r.status == http.StatusCreated {
		_ = json.Unmarshal(r.body, &j)
	}
	return j, r
}

func (a *api) poll(ctx context.Context, idToken, queueID string) (queueapi.Place, result) {
	r := a.do(ctx, "poll", http.MethodGet, a.eventPath(a.queueURL)+"/queue/"+queueID, nil, bearer(idToken))
	var p queueapi.Place
	if r.status == http.StatusOK {
		_ = json.Unmarshal(r.body, &p)
	}
	return p, r
}

// state fetches the public state, revalidating etag as a browser's cache
// does: a 304 has no body and means the caller's copy is current.
func (a *api) state(ctx context.Context, etag string) result {
	var hdr map[string]string
	if etag != "" {
		hdr = map[string]string{"If-None-Match": etag}
	}
	return a.do(ctx, "state", http.MethodGet, a.eventPath(a.stateURL)+"/queue/state", nil, hdr)
}

func (a *api) leave(ctx context.Context, idToken, queueID string) result {
	return a.do(ctx, "leave", http.MethodDelete, a.eventPath(a.queueURL)+"/queue/"+queueID, nil, bearer(idToken))
}

func (a *api) stats(ctx context.Context) (map[string]any, bool) {
	r := a.do(ctx, "stats", http.MethodGet, a.eventPath(a.queueURL)+"/stats", nil, nil)
	var m map[string]any
	if r.status != http.StatusOK || json.Unmarshal(r.body, &m) != nil {
		return nil, false
	}
	return m, true
}

func (a *api) seats(ctx context.Context, section string) (seatMap, bool) {
	url := a.eventPath(a.bookingURL) + "/seats?format=rows"
	if section != "" {
		url += "&section=" + section
	}
	r := a.do(ctx, "seats", http.MethodGet, url, nil, nil)
	var m seatMap
	if r.status != http.StatusOK || json.Unmarshal(r.body, &m) != nil {
		return m, false
	}
	return m, true
}

// hold holds seats; idToken ("" for none) lets booking keep the buyer's
// address with the order.
func (a *api) hold(ctx context.Context, accessToken, idToken string, seats []string) (holdResponse, refusal, result) {
	body, _ := json.Marshal(map[string]any{"seats": seats})
	return a.postHold(ctx, "hold", accessToken, idToken, body)
}

// bestRequest is a hold by quantity: Quantity places of Category, or of
// the standing area or seated section Section.
type bestRequest struct {
	Quantity   int    `json:"quantity"`
	Category   string `json:"category,omitempty"`
	Section    string `json:"section,omitempty"`
	Together   *bool  `json:"together,omitempty"` // booking's default: true
	Wheelchair int    `json:"wheelchair,omitempty"`
}

// holdBest holds the best places of req, recorded as the endpoint
// "hold best" ("hold standing" for a standing area's).
func (a *api) holdBest(ctx context.Context, name, accessToken, idToken string, req bestRequest) (holdResponse, refusal, result) {
	body, _ := json.Marshal(req)
	return a.postHold(ctx, name, accessToken, idToken, body)
}

func (a *api) postHold(ctx context.Context, name, accessToken, idToken string, body []byte) (holdResponse, refusal, result) {
	headers := map[string]string{"X-Queue-Token": accessToken}
	if idToken != "" {
		headers["Authorization"] = "Bearer " + idToken
	}
	r := a.do(ctx, name, http.MethodPost, a.eventPath(a.bookingURL)+"/holds", body, headers)
	var h holdResponse
	var c conflictResponse
	switch r.status {
	case http.StatusCreated, http.StatusOK:
		_ = json.Unmarshal(r.body, &h)
	case http.StatusConflict:
		_ = json.Unmarshal(r.body, &c)
	}
	return h, c.Error, r
}

func (a *api) webhook(ctx context.Context, body []byte, signature string) result {
	return a.do(ctx, "webhook", http.MethodPost, a.bookingURL+"/payments/webhook", body, map[string]string{webhooksig.Header: signature})
}

func (a *api) tickets(ctx context.Context, idToken, orderID string) (int, result) {
	r := a.do(ctx, "tickets", http.MethodGet, a.ticketsURL+"/orders/"+orderID+"/tickets", nil, bearer(idToken))
	var t ticketsResponse
	if r.status == http.StatusOK {
		_ = json.Unmarshal(r.body, &t)
	}
	return len(t.Tickets), r
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
