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
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Email reads the configured claim of a verified token: a plain address
// only, none when email_verified is false, and an error only for a token
// that does not verify.
func TestEmail(t *testing.T) {
	cfg := config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair", EmailClaim: "mail"}
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := NewHS256Signer("s3cret", "idp", "ticketfair")
	for name, c := range map[string]struct {
		tok, want string
	}{
		"address":         {s.SignWith("alice", time.Minute, Claim{"mail", "alice@example.com"}), "alice@example.com"},
		"another claim":   {s.SignWith("alice", time.Minute, Claim{"email", "alice@example.com"}), ""},
		"with a name":     {s.SignWith("alice", time.Minute, Claim{"mail", "Alice <alice@example.com>"}), ""},
		"not an address":  {s.SignWith("alice", time.Minute, Claim{"mail", "alice"}), ""},
		"too long":        {s.SignWith("alice", time.Minute, Claim{"mail", strings.Repeat("a", 250) + "@example.com"}), ""},
		"verified false":  {signWithVerified(t, false), ""},
		"verified true":   {signWithVerified(t, true), "bob@example.com"},
		"with a tier too": {s.SignWith("alice", time.Minute, Claim{"tier", "member"}, Claim{"mail", "a@example.com"}), "a@example.com"},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Authorization", "Bearer "+c.tok)
		id, got, err := v.Email(r)
		if err != nil || got != c.want || id.Subject == "" {
			t.Errorf("%s: %q %q %v, want %q", name, id.Subject, got, err, c.want)
		}
	}
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Authorization", "Bearer "+NewHS256Signer("other", "idp", "ticketfair").SignWith("alice", time.Minute, Claim{"mail", "a@example.com"}))
	if _, got, err := v.Email(r); err == nil || got != "" {
		t.Errorf("token of another secret: %q %v, want an error", got, err)
	}
}

// signWithVerified signs a token whose email_verified is a JSON boolean
// (the signer writes strings), through the library path.
func signWithVerified(t *testing.T, verified bool) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "idp", "aud": "ticketfair", "sub": "bob",
		"exp": time.Now().Add(time.Minute).Unix(), "mail": "bob@example.com", "email_verified": verified}).SignedString([]byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
