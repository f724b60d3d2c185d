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

// Package accesstoken signs and verifies the access tokens that let an
// admitted customer into seat selection. Tokens are EdDSA (Ed25519) JWTs
// with a kid; the public keys are published as a JWKS so the booking service
// and any edge proxy verify them offline.
//
// Keys come from a Secret as TICKETFAIR_ACCESS_TOKEN_KEYS: a comma-separated
// list of kid:base64(32-byte Ed25519 seed). The first key signs; all keys
// verify and are published, so a rotated-out key keeps verifying the tokens
// it signed until they expire.
package accesstoken

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/internal/claimtext"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

const (
	// Issuer is the iss of every access token.
	Issuer = "ticketfair-queue"
	// Audience is the aud of every access token.
	Audience = "ticketfair-booking"
)

// ErrInvalid is returned for any token that does not verify.
var ErrInvalid = errors.New("invalid access token")

// Claims of an access token. The customer is the subject.
type Claims struct {
	jwt.RegisteredClaims
	EventID   int64  `json:"eid"`
	SessionID string `json:"sid"`
	// Phase is the sale phase the customer was admitted under; booking
	// applies its seat limit and sections. Absent in a sale without
	// phases, so tokens signed before phases existed verify unchanged.
	Phase string `json:"ph,omitempty"`
}

// Customer returns the customer id (the subject).
func (c *Claims) Customer() string { return c.Subject }

// UnmarshalJSON refuses claims with invalid UTF-8 or an unpaired surrogate
// escape anywhere: encoding/json would turn them into U+FFFD, merging
// distinct subjects or sessions. The queue signs with encoding/json, which
// never writes either.
func (c *Claims) UnmarshalJSON(b []byte) error {
	if !claimtext.Valid(b) {
		return claimtext.ErrInvalid
	}
	type plain Claims // without this method
	return json.Unmarshal(b, (*plain)(c))
}

// Key is one signing key.
type Key struct {
	ID      string
	Private ed25519.PrivateKey
}

// KeySet holds the signing key first and older keys after it.
type KeySet struct {
	keys []Key
}

// ParseKeys parses "kid:base64seed,kid2:base64seed2".
func ParseKeys(s string) (*KeySet, error) {
	keys, err := ParseSeeds(s)
	if err != nil {
		return nil, fmt.Errorf("access token keys (TICKETFAIR_ACCESS_TOKEN_KEYS): %w", err)
	}
	return &KeySet{keys: keys}, nil
}

// ParseSeeds parses a list of Ed25519 keys "kid:base64seed,..." (32-byte
// seeds, standard or URL base64), the format of every signing key Secret in
// ticketfair. At least one key is required.
func ParseSeeds(s string) ([]Key, error) {
	var keys []Key
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kid, b64, ok := strings.Cut(part, ":")
		if !ok || kid == "" {
			return nil, fmt.Errorf("key %q: want kid:base64seed", redact(part))
		}
		seed, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			if seed, err = base64.RawURLEncoding.DecodeString(b64); err != nil {
				return nil, fmt.Errorf("key %s: seed is not base64", kid)
			}
		}
		if len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("key %s: seed has %d bytes, want %d", kid, len(seed), ed25519.SeedSize)
		}
		keys = append(keys, Key{ID: kid, Private: ed25519.NewKeyFromSeed(seed)})
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys configured")
	}
	return keys, nil
}

func redact(s string) string {
	if kid, _, ok := strings.Cut(s, ":"); ok {
		return kid + ":…"
	}
	return "…"
}

// GenerateKey makes a new random key, formatted for ParseKeys.
func GenerateKey(kid string) (string, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return "", err
	}
	return kid + ":" + base64.StdEncoding.EncodeToString(seed), nil
}

// Sign issues a token for customer in event with session sid, valid for ttl,
// in a sale without phases.
func (ks *KeySet) Sign(eventID int64, customer, sid string, now time.Time, ttl time.Duration) (string, time.Time, error) {
	return ks.SignPhase(eventID, customer, sid, "", now, ttl)
}

// SignPhase is Sign for a customer admitted under phase ("": none).
func (ks *KeySet) SignPhase(eventID int64, customer, sid, phase string, now time.Time, ttl time.Duration) (string, time.Time, error) {
	k := ks.keys[0]
	exp := now.Add(ttl)
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    Issuer,
			Subject:   customer,
			Audience:  jwt.ClaimStrings{Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now.Add(-5 * time.Second)),
			ExpiresAt: jwt.NewNumericDate(exp),
			ID:        sid,
		},
		EventID:   eventID,
		SessionID: sid,
		Phase:     phase,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	t.Header["kid"] = k.ID
	s, err := t.SignedString(k.Private)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign access token: %w", err)
	}
	return s, exp, nil
}

// PublicKeys maps kid to public key.
func (ks *KeySet) PublicKeys() map[string]ed25519.PublicKey {
	m := make(map[string]ed25519.PublicKey, len(ks.keys))
	for _, k := range ks.keys {
		m[k.ID] = k.Private.Public().(ed25519.PublicKey)
	}
	return m
}

// JWK is one public key in a JWKS.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKS is the published key set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS returns the public keys as a JSON Web Key Set.
func (ks *KeySet) JWKS() JWKS {
	var out JWKS
	for _, k := range ks.keys {
		out.Keys = append(out.Keys, JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.ID, Use: "sig", Alg: "EdDSA",
			X: base64.RawURLEncoding.EncodeToString(k.Private.Public().(ed25519.PublicKey))})
	}
	return out
}

// ParseJWKS reads Ed25519 public keys from a JWKS document.
func ParseJWKS(doc []byte) (map[string]ed25519.PublicKey, error) {
	var set JWKS
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("parse JWKS: %w", err)
	}
	m := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("JWKS key %s: bad x", k.Kid)
		}
		m[k.Kid] = ed25519.PublicKey(x)
	}
	if len(m) == 0 {
		return nil, errors.New("JWKS has no Ed25519 keys")
	}
	return m, nil
}

// Verifier checks access tokens offline against public keys.
type Verifier struct {
	keys   func() map[string]ed25519.PublicKey
	parser *jwt.Parser
}

// NewVerifier verifies with the keys keys() returns at the time of each call
// (so a refreshed JWKS takes effect at once).
func NewVerifier(keys func() map[string]ed25519.PublicKey) *Verifier {
	return &Verifier{keys: keys, parser: jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithAudience(Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(5*time.Second),
	)}
}

// Verify checks signature, issuer, audience and expiry, and that the token
// is for eventID. It never says why a token failed beyond ErrInvalid's
// wrapped reason.
func (v *Verifier) Verify(token string, eventID int64) (*Claims, error) {
	var c Claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if k, ok := v.keys()[kid]; ok {
			return k, nil
		}
		return nil, fmt.Errorf("unknown kid %q", kid)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if c.EventID != eventID {
		return nil, fmt.Errorf("%w: token is for event %d, not %d", ErrInvalid, c.EventID, eventID)
	}
	if c.Subject == "" || c.SessionID == "" || !httpapi.CleanText(c.Subject) || !httpapi.CleanText(c.SessionID) {
		return nil, fmt.Errorf("%w: token has no usable subject or session", ErrInvalid)
	}
	if !httpapi.CleanText(c.Phase) {
		return nil, fmt.Errorf("%w: token has an unusable phase", ErrInvalid)
	}
	return &c, nil
}
