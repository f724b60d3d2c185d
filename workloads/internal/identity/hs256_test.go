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
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// signRaw signs a claims JSON as it is, under the standard header.
func signRaw(secret, claims string) string {
	si := hs256Header + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(si))
	return si + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// The fast HS256 path decides every token exactly as golang-jwt's parser
// does, with the same options: a differential test over tokens that differ
// in one rule each.
func TestHS256FastPathAgreesWithParser(t *testing.T) {
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	at := func(d int64) string { return strconv.FormatInt(now+d, 10) }
	good := signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(60)+`}`)
	tokens := map[string]string{
		"good":                      good,
		"audience array":            signRaw("s3cret", `{"iss":"idp","aud":["x","ticketfair"],"sub":"alice","exp":`+at(60)+`}`),
		"audience array without":    signRaw("s3cret", `{"iss":"idp","aud":["x","y"],"sub":"alice","exp":`+at(60)+`}`),
		"audience missing":          signRaw("s3cret", `{"iss":"idp","sub":"alice","exp":`+at(60)+`}`),
		"audience null":             signRaw("s3cret", `{"iss":"idp","aud":null,"sub":"alice","exp":`+at(60)+`}`),
		"audience number":           signRaw("s3cret", `{"iss":"idp","aud":7,"sub":"alice","exp":`+at(60)+`}`),
		"issuer wrong":              signRaw("s3cret", `{"iss":"evil","aud":"ticketfair","sub":"alice","exp":`+at(60)+`}`),
		"issuer missing":            signRaw("s3cret", `{"aud":"ticketfair","sub":"alice","exp":`+at(60)+`}`),
		"exp missing":               signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice"}`),
		"exp a string":              signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":"`+at(60)+`"}`),
		"expired":                   signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(-3600)+`}`),
		"expired within leeway":     signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(-10)+`}`),
		"exp fractional":            signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(60)+`.5}`),
		"exp huge":                  signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":1e300}`),
		"nbf future":                signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(600)+`,"nbf":`+at(300)+`}`),
		"nbf within leeway":         signRaw("s3cret", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(600)+`,"nbf":`+at(10)+`}`),
		"claims not an object":      signRaw("s3cret", `[1,2]`),
		"claims not JSON":           signRaw("s3cret", `{"iss":`),
		"wrong secret":              signRaw("other", `{"iss":"idp","aud":"ticketfair","sub":"alice","exp":`+at(60)+`}`),
		"signature cut":             good[:len(good)-2],
		"signature padded":          good + "=",
		"signature too long":        good + strings.Repeat("A", 4000),
		"extra segment":             good + ".x",
		"two segments":              good[:strings.LastIndexByte(good, '.')],
		"claims tampered":           strings.Replace(good, ".", ".e", 1),
		"signature of other claims": good[:strings.IndexByte(good, '.')+1] + "eyJzdWIiOiJtYWxsb3J5In0" + good[strings.LastIndexByte(good, '.'):],
	}
	for name, tok := range tokens {
		id, ok, fastErr := v.hs256.verify(tok, time.Now())
		if !ok {
			t.Errorf("%s: not taken by the fast path", name)
			continue
		}
		c, slowErr := v.parse(tok)
		if (fastErr == nil) != (slowErr == nil) {
			t.Errorf("%s: fast path error %v, parser error %v", name, fastErr, slowErr)
			continue
		}
		if fastErr == nil && id != c {
			t.Errorf("%s: fast path %+v, parser %+v", name, id, c)
		}
	}
	// Both accept the good token and its audience array form, so the
	// comparison above is not only over refusals.
	for _, name := range []string{"good", "audience array", "expired within leeway", "exp fractional", "nbf within leeway"} {
		if sub, err := v.Verify(tokens[name]); err != nil || sub != "alice" {
			t.Errorf("%s: %q %v, want alice", name, sub, err)
		}
	}
}

// A token with another header (another algorithm, a kid, alg none) is not
// the fast path's: the parser decides it.
func TestHS256FastPathOnlyTakesTheStandardHeader(t *testing.T) {
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair"})
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.RegisteredClaims{Issuer: "idp", Audience: jwt.ClaimStrings{"ticketfair"}, Subject: "alice", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Minute))}
	withKid := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	withKid.Header["kid"] = "k1"
	kidTok, _ := withKid.SignedString([]byte("s3cret"))
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hs384, _ := jwt.NewWithClaims(jwt.SigningMethodHS384, claims).SignedString([]byte("s3cret"))
	for name, tok := range map[string]string{"kid": kidTok, "alg none": none, "HS384": hs384} {
		if _, ok, _ := v.hs256.verify(tok, time.Now()); ok {
			t.Errorf("%s: taken by the fast path", name)
		}
	}
	if sub, err := v.Verify(kidTok); err != nil || sub != "alice" {
		t.Errorf("HS256 with a kid: %q %v, want alice through the parser", sub, err)
	}
	for name, tok := range map[string]string{"alg none": none, "HS384": hs384} {
		if _, err := v.Verify(tok); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// BenchmarkVerifyHS256 compares the fast path with golang-jwt's parse of
// the same token (go test -bench VerifyHS256 ./workloads/internal/identity/).
func BenchmarkVerifyHS256(b *testing.B) {
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair"})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := SignHS256("s3cret", "idp", "ticketfair", "customer-123456", time.Hour)
	b.Run("fast path", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify(tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("golang-jwt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c jwt.RegisteredClaims
			if _, err := v.parser.ParseWithClaims(tok, &c, v.keyfunc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// HS256Signer's tokens are standard JWTs: golang-jwt's parser and the fast
// path both accept them with the subject as signed, whatever characters it
// has, and read the times it was given.
func TestHS256SignerTokens(t *testing.T) {
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: `i"dp`, IdentityAudience: "ticket<fair>"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewHS256Signer("s3cret", `i"dp`, "ticket<fair>")
	for _, sub := range []string{"alice", `a"b\c`, "ünïcödé", "<script>&", "cust-2000000"} {
		before := time.Now().Truncate(time.Second)
		tok := s.Sign(sub, time.Hour)
		if got, ok, err := v.hs256.verify(tok, time.Now()); !ok || err != nil || got.Subject != sub {
			t.Errorf("%q: fast path %q ok=%v %v", sub, got, ok, err)
		}
		var c jwt.RegisteredClaims
		if _, err := v.parser.ParseWithClaims(tok, &c, v.keyfunc); err != nil || c.Subject != sub {
			t.Errorf("%q: parser %q %v", sub, c.Subject, err)
			continue
		}
		if c.IssuedAt == nil || c.IssuedAt.Before(before) || c.IssuedAt.After(time.Now()) {
			t.Errorf("%q: iat %v, want now", sub, c.IssuedAt)
		}
		if c.ExpiresAt == nil || c.ExpiresAt.Sub(c.IssuedAt.Time) != time.Hour {
			t.Errorf("%q: exp %v, want iat + 1h", sub, c.ExpiresAt)
		}
		if c.Issuer != `i"dp` || len(c.Audience) != 1 || c.Audience[0] != "ticket<fair>" {
			t.Errorf("%q: iss %q aud %q", sub, c.Issuer, c.Audience)
		}
	}
	// A token signed with another secret, or already expired, is refused.
	if _, err := v.Verify(NewHS256Signer("other", `i"dp`, "ticket<fair>").Sign("alice", time.Hour)); err == nil {
		t.Error("a token of another secret accepted")
	}
	if _, err := v.Verify(s.Sign("alice", -time.Hour)); err == nil {
		t.Error("an expired token accepted")
	}
}

// BenchmarkSignHS256 compares HS256Signer with golang-jwt's signing of the
// same claims (go test -bench SignHS256 ./workloads/internal/identity/).
func BenchmarkSignHS256(b *testing.B) {
	s := NewHS256Signer("s3cret", "idp", "ticketfair")
	b.Run("signer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Sign("cust-1234567", time.Hour)
		}
	})
	b.Run("golang-jwt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			now := time.Now()
			_, _ = jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
				Issuer: "idp", Audience: jwt.ClaimStrings{"ticketfair"}, Subject: "cust-1234567",
				IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
			}).SignedString([]byte("s3cret"))
		}
	})
}
