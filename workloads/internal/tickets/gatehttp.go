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

package tickets

import (
	"net/http"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// maxSyncScans bounds one offline sync: a gate with more sends batches.
const maxSyncScans = 100

// maxCodeBytes is far above a real code (about 400 bytes) and far below
// what would cost anything to refuse.
const maxCodeBytes = 2048

// offlineSkew is how far ahead of the server's clock an offline scan's
// time may be; later ones are refused as a wrong clock, not recorded.
const offlineSkew = 5 * time.Minute

// answerStatus maps each result to the status a gate device reads: 200 for
// admitted, a distinct 4xx for each refusal.
var answerStatus = map[string]int{
	Admitted:    http.StatusOK,
	AlreadyUsed: http.StatusConflict,
	Conflict:    http.StatusConflict,
	Revoked:     http.StatusGone,
	WrongEvent:  http.StatusUnprocessableEntity,
	Invalid:     http.StatusUnprocessableEntity,
}

type checkinRequest struct {
	Code string `json:"code"`
}

// checkin is POST /events/{eventId}/checkins: one online scan.
func (s *Service) checkin(w http.ResponseWriter, r *http.Request) error {
	eventID, gate, err := s.gateOf(r)
	if err != nil {
		return err
	}
	var req checkinRequest
	if err := httpapi.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Code == "" || len(req.Code) > maxCodeBytes {
		return httpapi.Errorf(http.StatusBadRequest, "bad_code", "code must be 1-%d bytes of scanned text", maxCodeBytes)
	}
	start := time.Now()
	a, err := CheckIn(r.Context(), s.pool, s.public, eventID, gate, Scan{Code: req.Code, ScannedAt: start.UTC().Truncate(time.Microsecond)})
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	s.m.checkins.WithLabelValues(gate, a.Result).Inc()
	s.m.checkinLatency.Observe(time.Since(start).Seconds())
	if a.Result == Admitted {
		httpapi.WriteJSON(w, http.StatusOK, a)
		return nil
	}
	return refusal(a)
}

// refusal is a non-admitting answer in the services' error shape, with the
// answer's fields beside code and message.
func refusal(a Answer) *httpapi.Error {
	extra := map[string]any{"result": a.Result}
	if a.TicketID != "" {
		extra["ticketId"] = a.TicketID
	}
	if a.FirstGate != "" {
		extra["firstGate"], extra["firstAt"] = a.FirstGate, a.FirstAt
	}
	return &httpapi.Error{Status: answerStatus[a.Result], Code: a.Result, Message: a.Message, Extra: extra}
}

type syncRequest struct {
	Scans []Scan `json:"scans"`
}

// sync is POST /events/{eventId}/checkins/sync: the scans an offline gate
// queued, each answered; conflicts are recorded for the report.
func (s *Service) sync(w http.ResponseWriter, r *http.Request) error {
	eventID, gate, err := s.gateOf(r)
	if err != nil {
		return err
	}
	var req syncRequest
	if err := httpapi.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if len(req.Scans) == 0 || len(req.Scans) > maxSyncScans {
		return httpapi.Errorf(http.StatusBadRequest, "bad_scans", "scans must hold 1-%d scans", maxSyncScans)
	}
	now := time.Now()
	for i, sc := range req.Scans {
		switch {
		case sc.Code == "" || len(sc.Code) > maxCodeBytes:
			return httpapi.Errorf(http.StatusBadRequest, "bad_code", "scans[%d].code must be 1-%d bytes of scanned text", i, maxCodeBytes)
		case sc.ScannedAt.IsZero() || sc.ScannedAt.After(now.Add(offlineSkew)):
			return httpapi.Errorf(http.StatusBadRequest, "bad_scanned_at", "scans[%d].scannedAt must be the time of the scan (RFC 3339, not in the future)", i)
		}
	}
	out := make([]Answer, 0, len(req.Scans))
	for _, sc := range req.Scans {
		sc.ScannedAt = sc.ScannedAt.UTC().Truncate(time.Microsecond)
		a, err := CheckIn(r.Context(), s.pool, s.public, eventID, gate, sc)
		if err != nil {
			return httpapi.DatabaseError(err)
		}
		s.m.checkins.WithLabelValues(gate, a.Result).Inc()
		out = append(out, a)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"results": out})
	return nil
}

// gateList is GET /events/{eventId}/gate/list.
func (s *Service) gateList(w http.ResponseWriter, r *http.Request) error {
	eventID, _, err := s.gateOf(r)
	if err != nil {
		return err
	}
	l, err := ListForGate(r.Context(), s.pool, eventID)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, l)
	return nil
}

// checkinReport is GET /events/{eventId}/checkins/report.
func (s *Service) checkinReport(w http.ResponseWriter, r *http.Request) error {
	eventID, _, err := s.gateOf(r)
	if err != nil {
		return err
	}
	rep, err := CheckInReport(r.Context(), s.pool, eventID)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
	return nil
}
