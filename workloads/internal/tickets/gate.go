package tickets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// A gate credential names one gate of one event and is an HMAC over both
// with the event's gate secret: "gate.<eventId>.<gate>.<mac>". The service
// keeps no list of devices; a lost phone is shut out by rotating the
// secret. The gate name is what the check-in report and the "already used
// at" answer show.
const credentialPrefix = "gate."

// gateName is what a gate may be called: short, printable, no dots.
var gateName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var errBadCredential = errors.New("bad gate credential")

// GateCredential mints the credential of gate at event eventID.
func GateCredential(secret string, eventID int64, gate string) (string, error) {
	if secret == "" {
		return "", errors.New("gate credential: no gate secret")
	}
	if !gateName.MatchString(gate) {
		return "", fmt.Errorf("gate credential: gate name %q must be 1-64 letters, digits, '-' or '_'", gate)
	}
	payload := strconv.FormatInt(eventID, 10) + "." + gate
	return credentialPrefix + payload + "." + gateMAC(secret, payload), nil
}

func gateMAC(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("ticketfair-gate\x00" + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// parseCredential checks a credential against secret and returns its event
// and gate.
func parseCredential(secret, cred string) (eventID int64, gate string, err error) {
	rest, ok := strings.CutPrefix(cred, credentialPrefix)
	if !ok {
		return 0, "", errBadCredential
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || !gateName.MatchString(parts[1]) {
		return 0, "", errBadCredential
	}
	eventID, err = strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return 0, "", errBadCredential
	}
	if !hmac.Equal([]byte(parts[2]), []byte(gateMAC(secret, parts[0]+"."+parts[1]))) {
		return 0, "", errBadCredential
	}
	return eventID, parts[1], nil
}

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
	if !ok || len(tok) > 512 {
		return 0, "", &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a gate credential (Authorization: Bearer gate.…) is required"}
	}
	credEvent, gate, err := parseCredential(s.gateSecret, strings.TrimSpace(tok))
	if err != nil {
		return 0, "", &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "the gate credential is not valid", Err: err}
	}
	if credEvent != eventID {
		return 0, "", httpapi.Errorf(http.StatusForbidden, "wrong_event_credential", "this gate credential is for event %d, not %d", credEvent, eventID)
	}
	return eventID, gate, nil
}
