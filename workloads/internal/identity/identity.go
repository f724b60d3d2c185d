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

// Package identity verifies customers' identity tokens: a JWT in
// "Authorization: Bearer", whose sub is the customer id and whose tier
// claim (configurable, e.g. "member") may say which presale phases the
// customer belongs to. The verification
// key is an HS256 shared secret or public keys from the identity provider's
// JWKS; issuer and audience are always checked. The customer id is never
// taken from anything the client sends besides a verified token.
package identity

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/claimtext"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// ErrUnauthenticated is returned for a missing or invalid identity token.
var ErrUnauthenticated = errors.New("unauthenticated")

// Verifier checks identity tokens.
type Verifier struct {
	keyfunc jwt.Keyfunc
	parser  *jwt.Parser
	// hs256, with an HMAC secret: the short path for tokens with the
	// standard header (hs256Verifier.verify); others go through parser.
	hs256 *hs256Verifier
	// tierClaim names the claim read as Identity.Tier.
	tierClaim string
	// emailClaim names the claim Email reads.
	emailClaim string
}

// Identity is what a verified identity token says about its customer.
type Identity struct {
	// Subject is the customer id: sub, valid UTF-8 without control
	// characters, at most 256 bytes.
	Subject string
	// Tier is the tier claim's string value ("" when the claim is absent
	// or null), valid UTF-8 without control characters, at most 64 bytes.
	Tier string
}

// maxTierBytes bounds a tier: it names a presale group, not data.
const maxTierBytes = 64

// New builds a verifier from the configuration: the HMAC secret when set,
// else the JWKS URL (fetched in the background and refreshed; ctx bounds it).
func New(ctx context.Context, cfg config.Identity) (*Verifier, error) {
	var kf jwt.Keyfunc
	var methods []string
	switch {
	case cfg.IdentityHMACSecret != "":
		secret := []byte(cfg.IdentityHMACSecret)
		kf = func(*jwt.Token) (any, error) { return secret, nil }
		methods = []string{jwt.SigningMethodHS256.Alg()}
	case cfg.IdentityJWKSURL != "":
		k, err := keyfunc.NewDefaultCtx(ctx, []string{cfg.IdentityJWKSURL})
		if err != nil {
			return nil, fmt.Errorf("identity JWKS %s: %w", cfg.IdentityJWKSURL, err)
		}
		kf = k.Keyfunc
		methods = []string{"RS256", "ES256", "EdDSA", "PS256"}
	default:
		return nil, errors.New("identity: set TICKETFAIR_IDENTITY_HMAC_SECRET or TICKETFAIR_IDENTITY_JWKS_URL")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	v := &Verifier{keyfunc: kf, tierClaim: cfg.TierClaim, emailClaim: cfg.EmailClaim, parser: jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithIssuer(cfg.IdentityIssuer),
		jwt.WithAudience(cfg.IdentityAudience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(leeway),
	)}
	if cfg.IdentityHMACSecret != "" {
		v.hs256 = newHS256Verifier([]byte(cfg.IdentityHMACSecret), cfg.IdentityIssuer, cfg.IdentityAudience, cfg.TierClaim)
	}
	return v, nil
}

// leeway is the clock skew allowed on exp and nbf.
const leeway = 30 * time.Second

// MaxTokenBytes bounds the token accepted from a header.
const MaxTokenBytes = 8 << 10

// Customer verifies the bearer token of r and returns the customer id.
func (v *Verifier) Customer(r *http.Request) (string, error) {
	id, err := v.Identify(r)
	return id.Subject, err
}

// Identify verifies the bearer token of r and returns its identity.
func (v *Verifier) Identify(r *http.Request) (Identity, error) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return Identity{}, fmt.Errorf("%w: missing bearer token", ErrUnauthenticated)
	}
	return v.VerifyIdentity(strings.TrimSpace(tok))
}

// maxEmailBytes is the longest address SMTP carries (RFC 5321's path limit).
const maxEmailBytes = 254

// Email verifies the bearer token of r and returns its identity and the
// address in its email claim: "" when the claim is absent, not a single
// plain address, or email_verified says false. Only the hold reads it, so
// the joins' short path stays as it is.
func (v *Verifier) Email(r *http.Request) (Identity, string, error) {
	id, err := v.Identify(r)
	if err != nil || v.emailClaim == "" {
		return id, "", err
	}
	tok := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return id, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return id, "", nil
	}
	var claims map[string]json.RawMessage
	if json.Unmarshal(raw, &claims) != nil {
		return id, "", nil
	}
	var verified *bool
	if lit, ok := claims["email_verified"]; ok && json.Unmarshal(lit, &verified) == nil && verified != nil && !*verified {
		return id, "", nil
	}
	var email string
	if lit, ok := claims[v.emailClaim]; !ok || json.Unmarshal(lit, &email) != nil {
		return id, "", nil
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email || len(email) > maxEmailBytes || !httpapi.CleanText(email) {
		return id, "", nil
	}
	return id, email, nil
}

// Verify checks a raw token and returns its subject.
func (v *Verifier) Verify(tok string) (string, error) {
	id, err := v.VerifyIdentity(tok)
	return id.Subject, err
}

// VerifyIdentity checks a raw token and returns its identity.
func (v *Verifier) VerifyIdentity(tok string) (Identity, error) {
	if len(tok) > MaxTokenBytes {
		return Identity{}, fmt.Errorf("%w: token too long", ErrUnauthenticated)
	}
	id, ok, err := v.hs256.verify(tok, time.Now())
	if !ok {
		id, err = v.parse(tok)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	// The subject becomes a key in Redis and PostgreSQL and a field in
	// logs: NUL, invalid UTF-8 or control characters make it unusable.
	if id.Subject == "" || len(id.Subject) > 256 || !httpapi.CleanText(id.Subject) {
		return Identity{}, fmt.Errorf("%w: token has no usable subject", ErrUnauthenticated)
	}
	if len(id.Tier) > maxTierBytes || !httpapi.CleanText(id.Tier) {
		return Identity{}, fmt.Errorf("%w: token has no usable %s claim", ErrUnauthenticated, v.tierClaim)
	}
	return id, nil
}

// parse verifies tok with golang-jwt: every token the HS256 fast path
// does not take.
func (v *Verifier) parse(tok string) (Identity, error) {
	c := parsedClaims{tierClaim: v.tierClaim}
	if _, err := v.parser.ParseWithClaims(tok, &c, v.keyfunc); err != nil {
		return Identity{}, err
	}
	return Identity{Subject: string(c.Subject), Tier: c.tier}, nil
}

// parsedClaims are the claims golang-jwt decodes: its registered claims,
// with the subject decoded strictly (the field hides the embedded one for
// encoding/json), and the tier.
type parsedClaims struct {
	jwt.RegisteredClaims
	Subject   claimtext.String `json:"sub"`
	tierClaim string
	tier      string
}

// UnmarshalJSON refuses claims that are not valid UTF-8 and reads the tier.
func (c *parsedClaims) UnmarshalJSON(b []byte) error {
	if !utf8.Valid(b) {
		return claimtext.ErrInvalid
	}
	type plain parsedClaims // without this method
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	var err error
	c.tier, err = readTier(b, c.tierClaim)
	return err
}

// readTier returns the string value of the claim named tierClaim in the
// claims object raw: "" when it is absent or null; an error when it is
// another type or not strictly valid text.
func readTier(raw []byte, tierClaim string) (string, error) {
	if tierClaim == "" {
		return "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	var tier claimtext.String
	if lit, ok := m[tierClaim]; ok {
		if err := json.Unmarshal(lit, &tier); err != nil {
			return "", fmt.Errorf("%s claim: %w", tierClaim, err)
		}
	}
	return string(tier), nil
}

// SignHS256 issues an identity token, as a simple identity provider would:
// for the local sale, the load generator and tests. A caller signing many
// tokens with one secret keeps an HS256Signer instead.
func SignHS256(secret, issuer, audience, customer string, ttl time.Duration) (string, error) {
	return NewHS256Signer(secret, issuer, audience).Sign(customer, ttl), nil
}
