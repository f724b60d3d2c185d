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
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
)

// CodeIssuer is the iss of every ticket code.
const CodeIssuer = "ticketfair-tickets"

// ErrInvalidCode is returned for a ticket code that does not verify.
var ErrInvalidCode = errors.New("invalid ticket code")

// Claims are what a ticket code proves. A gate verifies the signature
// offline against the published keys and checks the event; the ticket id
// lets it refuse a second entry.
type Claims struct {
	jwt.RegisteredClaims        // iss, sub = ticket id, iat = payment time
	EventID              int64  `json:"eid"`
	OrderID              string `json:"oid"`
	SeatID               string `json:"seat"`
	Section              string `json:"sec,omitempty"`
	// Generation counts the ticket's transfers: each hands it on with a
	// new code one generation up, and the gate refuses older ones.
	Generation int `json:"gen,omitempty"`
}

// TicketID is derived from the order and seat, so a ticket re-issued from a
// replayed message has the same id and the same code.
func TicketID(orderID, seatID string) string {
	sum := sha256.Sum256([]byte(orderID + "\x00" + seatID))
	return "tkt_" + hex.EncodeToString(sum[:12])
}

// Keys signs ticket codes: the first key signs, all are published so codes
// signed by a rotated-out key keep verifying.
type Keys struct {
	keys []accesstoken.Key
}

// ParseKeys parses "kid:base64seed,kid2:base64seed2" (32-byte Ed25519
// seeds), the format of the access token keys.
func ParseKeys(s string) (*Keys, error) {
	keys, err := accesstoken.ParseSeeds(s)
	if err != nil {
		return nil, fmt.Errorf("ticket keys (TICKETFAIR_TICKET_KEYS): %w", err)
	}
	return &Keys{keys: keys}, nil
}

// Sign makes the code of one ticket. Ed25519 is deterministic, so the same
// ticket always gets the same code.
func (ks *Keys) Sign(ticketID string, eventID int64, orderID, seatID, section string, generation int, paidAt time.Time) (string, error) {
	k := ks.keys[0]
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:   CodeIssuer,
			Subject:  ticketID,
			IssuedAt: jwt.NewNumericDate(paidAt),
		},
		EventID: eventID, OrderID: orderID, SeatID: seatID, Section: section, Generation: generation,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	t.Header["kid"] = k.ID
	s, err := t.SignedString(k.Private)
	if err != nil {
		return "", fmt.Errorf("sign ticket code: %w", err)
	}
	return s, nil
}

// PublicKeys maps kid to public key.
func (ks *Keys) PublicKeys() map[string]ed25519.PublicKey {
	m := make(map[string]ed25519.PublicKey, len(ks.keys))
	for _, k := range ks.keys {
		m[k.ID] = k.Private.Public().(ed25519.PublicKey)
	}
	return m
}

// JWKS is the published verification key set (same document format as the
// access token keys; read it back with accesstoken.ParseJWKS).
func (ks *Keys) JWKS() accesstoken.JWKS {
	out := accesstoken.JWKS{Keys: []accesstoken.JWK{}}
	for _, k := range ks.keys {
		out.Keys = append(out.Keys, accesstoken.JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.ID, Use: "sig", Alg: "EdDSA",
			X: base64.RawURLEncoding.EncodeToString(k.Private.Public().(ed25519.PublicKey))})
	}
	return out
}

var codeParser = jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(CodeIssuer))

// VerifyCode checks a ticket code offline against public keys (as a gate
// does with the published JWKS) and that it is for eventID.
func VerifyCode(code string, keys map[string]ed25519.PublicKey, eventID int64) (*Claims, error) {
	c, err := verifySignature(code, keys)
	if err != nil {
		return nil, err
	}
	if c.EventID != eventID {
		return nil, fmt.Errorf("%w: ticket is for event %d, not %d", ErrWrongEvent, c.EventID, eventID)
	}
	return c, nil
}

// ErrWrongEvent is a genuine code of another event.
var ErrWrongEvent = fmt.Errorf("%w: wrong event", ErrInvalidCode)

// verifySignature checks the signature and shape of a code, for any event.
func verifySignature(code string, keys map[string]ed25519.PublicKey) (*Claims, error) {
	var c Claims
	_, err := codeParser.ParseWithClaims(code, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if k, ok := keys[kid]; ok {
			return k, nil
		}
		return nil, fmt.Errorf("unknown kid %q", kid)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidCode, err)
	}
	if c.Subject != TicketID(c.OrderID, c.SeatID) {
		return nil, fmt.Errorf("%w: ticket id does not match its seat", ErrInvalidCode)
	}
	if c.Generation < 0 {
		return nil, fmt.Errorf("%w: negative generation", ErrInvalidCode)
	}
	return &c, nil
}
