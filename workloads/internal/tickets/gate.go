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
	"strconv"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/gatecred"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// GateCredential mints the credential of gate at event eventID (see
// gatecred).
func GateCredential(secret string, eventID int64, gate string) (string, error) {
	return gatecred.Mint(secret, eventID, gate)
}

// maxCredentialBytes is far above a real credential (about 110 bytes).
const maxCredentialBytes = 512

// gateOf authenticates the gate device of a request to /events/{eventId}/…:
// 401 without a valid credential, 403 for a gate of another event.
func (s *Service) gateOf(r *http.Request) (eventID int64, gate string, err error) {
	if s.gateSecret == "" {
		return 0, "", httpapi.Errorf(http.StatusNotFound, "checkin_disabled", "check-in is not configured for this event (no gate secret)")
	}
	eventID, err = strconv.ParseInt(r.PathValue("eventId"), 10, 64)
	if err != nil || eventID <= 0 {
		return 0, "", httpapi.Errorf(http.StatusBadRequest, "bad_event_id", "event id must be a positive integer")
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(tok) > maxCredentialBytes {
		return 0, "", &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a gate credential (Authorization: Bearer gate.…) is required"}
	}
	credEvent, gate, err := gatecred.Parse(s.gateSecret, strings.TrimSpace(tok))
	if err != nil {
		return 0, "", &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "the gate credential is not valid", Err: err}
	}
	if credEvent != eventID {
		return 0, "", httpapi.Errorf(http.StatusForbidden, "wrong_event_credential", "this gate credential is for event %d, not %d", credEvent, eventID)
	}
	return eventID, gate, nil
}
