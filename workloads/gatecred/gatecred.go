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

// Package gatecred mints and checks the credentials of gate devices. A
// credential names one gate of one event and is an HMAC over both with the
// event's gate secret: "gate.<eventId>.<gate>.<mac>". The tickets service
// keeps no list of devices; a lost phone is shut out by rotating the
// secret. The gate name is what the check-in report and the "already used
// at" answer show. The operator's plugin mints them from the Secret.
package gatecred

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

const prefix = "gate."

// name is what a gate may be called: short, printable, no dots.
var name = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ErrInvalid is a credential that is malformed or not signed by the secret.
var ErrInvalid = errors.New("invalid gate credential")

// Mint returns the credential of gate at event eventID.
func Mint(secret string, eventID int64, gate string) (string, error) {
	if secret == "" {
		return "", errors.New("gate credential: no gate secret")
	}
	if eventID <= 0 {
		return "", fmt.Errorf("gate credential: event id %d must be positive", eventID)
	}
	if !name.MatchString(gate) {
		return "", fmt.Errorf("gate credential: gate name %q must be 1-64 letters, digits, '-' or '_'", gate)
	}
	payload := strconv.FormatInt(eventID, 10) + "." + gate
	return prefix + payload + "." + mac(secret, payload), nil
}

func mac(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("ticketfair-gate\x00" + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Parse checks cred against secret and returns its event and gate.
func Parse(secret, cred string) (eventID int64, gate string, err error) {
	rest, ok := strings.CutPrefix(cred, prefix)
	if !ok || secret == "" {
		return 0, "", ErrInvalid
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || !name.MatchString(parts[1]) {
		return 0, "", ErrInvalid
	}
	eventID, err = strconv.ParseInt(parts[0], 10, 64)
	if err != nil || eventID <= 0 {
		return 0, "", ErrInvalid
	}
	if !hmac.Equal([]byte(parts[2]), []byte(mac(secret, parts[0]+"."+parts[1]))) {
		return 0, "", ErrInvalid
	}
	return eventID, parts[1], nil
}
