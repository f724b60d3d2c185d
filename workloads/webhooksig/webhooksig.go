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

// Package webhooksig is the signature of the payment webhook: the payment
// provider (the load generator's simulated one, the web demo's) signs the
// body it posts to booking's /payments/webhook, booking verifies it. One
// package for both sides, so the scheme cannot drift.
//
// The header is "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">"; during
// a secret rotation it may carry several v1 values.
package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header carries the payment provider's webhook signature.
const Header = "Ticketfair-Signature"

// Bounds of a signature header, so a hostile one costs nothing.
const (
	maxHeader     = 1024
	maxSignatures = 8
)

// Errors of Verify.
var (
	ErrNoSecret  = errors.New("no webhook secret is configured")
	ErrMalformed = errors.New("malformed signature header")
	ErrStale     = errors.New("the webhook timestamp is outside the accepted window")
	ErrMismatch  = errors.New("the webhook signature does not verify")
)

// Sign returns the Header value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// signature is a parsed signature header.
type signature struct {
	timestamp int64
	ts        string // as sent, since it is what was signed
	v1        [][]byte
}

// parse reads "t=<unix>,v1=<hex>[,v1=<hex>...]". Other schemes (v0,
// future v2) are skipped; exactly one t and at least one v1 of 32 bytes
// are required.
func parse(h string) (signature, error) {
	var sig signature
	if h == "" || len(h) > maxHeader {
		return sig, ErrMalformed
	}
	seenT := false
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return sig, ErrMalformed
		}
		switch k {
		case "t":
			if seenT || v == "" || len(v) > 12 || !digits(v) {
				return sig, ErrMalformed
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return sig, ErrMalformed
			}
			seenT, sig.timestamp, sig.ts = true, n, v
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size || len(sig.v1) == maxSignatures {
				return sig, ErrMalformed
			}
			sig.v1 = append(sig.v1, b)
		}
	}
	if !seenT || len(sig.v1) == 0 {
		return sig, ErrMalformed
	}
	return sig, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Verify checks header against body with any of secrets (several during
// rotation) and a timestamp within tolerance of now, either way. Its errors
// are ErrNoSecret, ErrMalformed, ErrStale and ErrMismatch.
func Verify(header string, body []byte, secrets []string, tolerance time.Duration, now time.Time) error {
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	sig, err := parse(header)
	if err != nil {
		return err
	}
	age := now.Sub(time.Unix(sig.timestamp, 0))
	if age > tolerance || age < -tolerance {
		return ErrStale
	}
	for _, secret := range secrets {
		want := mac(secret, sig.ts, body)
		for _, got := range sig.v1 {
			if hmac.Equal(want, got) {
				return nil
			}
		}
	}
	return ErrMismatch
}
