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

// Package accesscode issues and checks the access codes of a sale's
// phases. A code reads "<eventId>.<phase>.<serial>.<mac>", mac being the
// first 80 bits of HMAC-SHA256 under the event's codes key over the rest,
// in base32: so a mistyped or forged code is refused without Redis, and
// issuing needs the key alone. That a code is used only once, by one
// identity, is the queue's join script's part (it records SHA-256 of the
// code, never the code).
package accesscode

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var (
	// ErrInvalid: the code is malformed or its MAC is wrong.
	ErrInvalid = errors.New("access code is not valid")
	// ErrOtherEvent: the code is well-formed but names another event.
	ErrOtherEvent = errors.New("access code belongs to another event")
)

// macChars is the length of a code's MAC: 16 base32 characters, 80 bits.
const macChars = 16

// MinKeyBytes is the shortest codes key accepted.
const MinKeyBytes = 16

var mac32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// Code is a checked access code.
type Code struct {
	EventID int64
	Phase   string
	Serial  int64
	// Text is the code in its canonical spelling (what Hash hashes).
	Text string
}

// ParseKey decodes a codes key (standard or URL base64).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if k, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("access code key: not base64")
		}
	}
	if len(k) < MinKeyBytes {
		return nil, fmt.Errorf("access code key: %d bytes, want at least %d", len(k), MinKeyBytes)
	}
	return k, nil
}

func sign(key []byte, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("ticketfair/access-code/v1\x00"))
	m.Write([]byte(body))
	return mac32.EncodeToString(m.Sum(nil)[:10])
}

// Issue returns the code of serial in phase of eventID.
func Issue(key []byte, eventID int64, phase string, serial int64) string {
	body := strconv.FormatInt(eventID, 10) + "." + phase + "." + strconv.FormatInt(serial, 10)
	return body + "." + sign(key, body)
}

// Check verifies text as a code of eventID: ErrInvalid when it is
// malformed or its MAC is wrong, ErrOtherEvent when it names another
// event (whose key this one is not). Case and surrounding spaces do not
// matter.
func Check(key []byte, eventID int64, text string) (Code, error) {
	text = strings.TrimSpace(text)
	if len(text) > 128 {
		return Code{}, ErrInvalid
	}
	parts := strings.Split(text, ".")
	if len(parts) != 4 {
		return Code{}, ErrInvalid
	}
	ev, err1 := strconv.ParseInt(parts[0], 10, 64)
	serial, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || ev <= 0 || serial < 0 || parts[1] == "" || len(parts[3]) != macChars {
		return Code{}, ErrInvalid
	}
	if ev != eventID {
		return Code{}, ErrOtherEvent
	}
	phase := strings.ToLower(parts[1])
	body := strconv.FormatInt(ev, 10) + "." + phase + "." + strconv.FormatInt(serial, 10)
	want := sign(key, body)
	if !hmac.Equal([]byte(want), []byte(strings.ToUpper(parts[3]))) {
		return Code{}, ErrInvalid
	}
	return Code{EventID: ev, Phase: phase, Serial: serial, Text: body + "." + want}, nil
}

// Hash is what the queue stores of a code: hex SHA-256 of its canonical
// text.
func Hash(c Code) string {
	h := sha256.Sum256([]byte(c.Text))
	return hex.EncodeToString(h[:])
}

// WriteCSV writes count codes of phase of eventID, serials from first on,
// as CSV with a header: code, event, phase, serial.
func WriteCSV(w io.Writer, key []byte, eventID int64, phase string, first, count int64) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"code", "event", "phase", "serial"}); err != nil {
		return err
	}
	ev := strconv.FormatInt(eventID, 10)
	for s := first; s < first+count; s++ {
		if err := cw.Write([]string{Issue(key, eventID, phase, s), ev, phase, strconv.FormatInt(s, 10)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
