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

package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ticketfair/ticketfair/workloads/internal/claimtext"
)

// hs256Header is the base64url of {"alg":"HS256","typ":"JWT"}, the header
// every HS256 identity token of the usual libraries carries (SignHS256's
// included).
const hs256Header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"

// hs256Verifier checks HS256 tokens whose header is exactly hs256Header
// without golang-jwt's generic parse (a map for the header, a decoder for
// the claims): on the queue's join and poll it was half the handler's CPU.
// It applies the same rules as the Verifier's parser: the signature over
// header.claims, exp required, exp and nbf with the leeway, the issuer,
// the audience (a string or an array), strictly valid text in the subject
// and the tier. A token with any other header is left to the parser, which
// knows every other case.
type hs256Verifier struct {
	macs                        *macPool
	issuer, audience, tierClaim string
}

func newHS256Verifier(secret []byte, issuer, audience, tierClaim string) *hs256Verifier {
	v := &hs256Verifier{issuer: issuer, audience: audience, tierClaim: tierClaim}
	v.macs = newMACPool(secret)
	return v
}

var b64 = base64.RawURLEncoding.Strict()

// macPool reuses HMAC-SHA256 hashes keyed with one secret, for the
// verifier and the signer alike: a new HMAC per token was a share of both.
type macPool struct{ p sync.Pool }

func newMACPool(secret []byte) *macPool {
	m := &macPool{}
	m.p.New = func() any { return hmac.New(sha256.New, secret) }
	return m
}

// sum returns the HMAC of data.
func (m *macPool) sum(data []byte) (out [sha256.Size]byte) {
	mac := m.p.Get().(hash.Hash)
	mac.Reset()
	mac.Write(data)
	mac.Sum(out[:0])
	m.p.Put(mac)
	return out
}

// hsClaims are the claims the identity check reads besides the tier.
type hsClaims struct {
	Issuer    string           `json:"iss"`
	Subject   claimtext.String `json:"sub"`
	Audience  audiences        `json:"aud"`
	ExpiresAt *numericDate     `json:"exp"`
	NotBefore *numericDate     `json:"nbf"`
}

// numericDate is seconds since the epoch, a JSON number or a string
// holding one, as golang-jwt reads it.
type numericDate float64

func (d *numericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	f, err := n.Float64()
	if err != nil {
		return err
	}
	*d = numericDate(f)
	return nil
}

// maxSeconds bounds exp and nbf (2^40 s, tens of thousands of years): a
// larger one is refused rather than overflow a time.
const maxSeconds = 1 << 40

// time is d as a time; ok is false beyond ±maxSeconds.
func (d numericDate) time() (t time.Time, ok bool) {
	s := float64(d)
	if s > maxSeconds || s < -maxSeconds {
		return time.Time{}, false
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// audiences is "aud": one string or an array of them (RFC 7519 4.1.3).
type audiences []string

func (a *audiences) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = audiences{s}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(a))
}

// verify returns the identity of tok at now. ok is false when tok does not
// have the standard header (or v is nil): the caller then parses it in
// full. With ok, err says why the token is refused.
func (v *hs256Verifier) verify(tok string, now time.Time) (id Identity, ok bool, err error) {
	if v == nil {
		return Identity{}, false, nil
	}
	head, rest, found := strings.Cut(tok, ".")
	if !found || head != hs256Header {
		return Identity{}, false, nil
	}
	payload, sig, found := strings.Cut(rest, ".")
	if !found || strings.IndexByte(sig, '.') >= 0 {
		return Identity{}, true, errors.New("token is malformed")
	}
	var got [sha256.Size]byte
	if len(sig) != b64.EncodedLen(sha256.Size) {
		return Identity{}, true, errors.New("signature is malformed")
	}
	if n, err := b64.Decode(got[:], []byte(sig)); err != nil || n != sha256.Size {
		return Identity{}, true, errors.New("signature is malformed")
	}
	want := v.macs.sum([]byte(tok[:len(head)+1+len(payload)]))
	if !hmac.Equal(got[:], want[:]) {
		return Identity{}, true, errors.New("signature is invalid")
	}
	raw, err := b64.DecodeString(payload)
	if err != nil {
		return Identity{}, true, errors.New("claims are malformed")
	}
	c, tier, fast := decodeClaims(raw, v.tierClaim)
	if !fast {
		// encoding/json would turn invalid UTF-8 into U+FFFD: refused here,
		// unpaired surrogate escapes by claimtext.String.
		if !utf8.Valid(raw) {
			return Identity{}, true, claimtext.ErrInvalid
		}
		c = hsClaims{}
		if err := json.Unmarshal(raw, &c); err != nil {
			return Identity{}, true, errors.New("claims are malformed")
		}
		if tier, err = readTier(raw, v.tierClaim); err != nil {
			return Identity{}, true, err
		}
	}
	if c.ExpiresAt == nil {
		return Identity{}, true, errors.New("token has no exp")
	}
	exp, valid := c.ExpiresAt.time()
	if !valid || !now.Before(exp.Add(leeway)) {
		return Identity{}, true, errors.New("token is expired")
	}
	if c.NotBefore != nil {
		if nbf, valid := c.NotBefore.time(); !valid || now.Before(nbf.Add(-leeway)) {
			return Identity{}, true, errors.New("token is not valid yet")
		}
	}
	if c.Issuer != v.issuer {
		return Identity{}, true, errors.New("token has invalid issuer")
	}
	for _, a := range c.Audience {
		if a == v.audience {
			return Identity{Subject: string(c.Subject), Tier: tier}, true, nil
		}
	}
	return Identity{}, true, errors.New("token has invalid audience")
}

// HS256Signer issues HS256 identity tokens with one secret, issuer and
// audience: the standard header, then {"iss","aud","sub","iat","exp"}. The
// local sale's crowd signs one per person, two million at full scale, and
// golang-jwt's generic signing (encoding/json of the claims and a new HMAC
// per token) was a tenth of the load generator's CPU.
type HS256Signer struct {
	macs *macPool
	// head is the header, its dot and the claims' fixed start, up to the
	// subject's value.
	head []byte
}

// NewHS256Signer returns a signer of tokens for issuer and audience.
func NewHS256Signer(secret, issuer, audience string) *HS256Signer {
	s := &HS256Signer{macs: newMACPool([]byte(secret))}
	s.head = append([]byte(`{"iss":`), jsonString(issuer)...)
	s.head = append(append(s.head, `,"aud":`...), jsonString(audience)...)
	s.head = append(s.head, `,"sub":`...)
	return s
}

// Sign returns a token for customer, valid from now for ttl.
func (s *HS256Signer) Sign(customer string, ttl time.Duration) string {
	return s.SignTier(customer, "", "", ttl)
}

// SignTier is Sign with the string claim tierClaim set to tier (none when
// tierClaim is ""): a member of a presale.
func (s *HS256Signer) SignTier(customer, tierClaim, tier string, ttl time.Duration) string {
	if tierClaim == "" {
		return s.SignWith(customer, ttl)
	}
	return s.SignWith(customer, ttl, Claim{tierClaim, tier})
}

// Claim is a string claim a token carries besides the registered ones.
type Claim struct{ Name, Value string }

// SignWith is Sign with string claims added (a tier, an email address).
func (s *HS256Signer) SignWith(customer string, ttl time.Duration, extra ...Claim) string {
	now := time.Now()
	claims := make([]byte, 0, len(s.head)+len(customer)+48)
	claims = append(append(claims, s.head...), jsonString(customer)...)
	for _, c := range extra {
		claims = append(append(append(append(claims, ','), jsonString(c.Name)...), ':'), jsonString(c.Value)...)
	}
	claims = strconv.AppendInt(append(claims, `,"iat":`...), now.Unix(), 10)
	claims = strconv.AppendInt(append(claims, `,"exp":`...), now.Add(ttl).Unix(), 10)
	claims = append(claims, '}')
	n := len(hs256Header) + 1 + b64.EncodedLen(len(claims))
	tok := make([]byte, n, n+1+b64.EncodedLen(sha256.Size))
	copy(tok, hs256Header)
	tok[len(hs256Header)] = '.'
	b64.Encode(tok[len(hs256Header)+1:], claims)
	sum := s.macs.sum(tok)
	tok = append(tok, '.')
	tok = tok[:n+1+b64.EncodedLen(sha256.Size)]
	b64.Encode(tok[n+1:], sum[:])
	return string(tok)
}

// jsonString is s as a JSON string. Marshalling a string cannot fail:
// invalid UTF-8 is replaced, as every JSON encoder of the claims would.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
