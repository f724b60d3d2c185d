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
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// signKid signs claims under a header with a kid: a token the fast path
// leaves to golang-jwt's parser.
func signKid(secret, claims string) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"k1","typ":"JWT"}`))
	si := head + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(si))
	return si + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// tokenKinds sign claims as each path of the verifier reads them.
var tokenKinds = map[string]func(secret, claims string) string{"fast path": signRaw, "golang-jwt": signKid}

func newTierVerifier(t *testing.T, tierClaim string) *Verifier {
	t.Helper()
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair", TierClaim: tierClaim})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// claimsWith is a valid claims object with the given raw JSON members.
func claimsWith(members string) string {
	return `{"iss":"idp","aud":"ticketfair","exp":` + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `,` + members + `}`
}

// A subject of invalid UTF-8 (raw or overlong) or with an unpaired
// surrogate escape is refused by both paths: encoding/json would have
// turned them all into U+FFFD, one customer for many subjects.
func TestSubjectMustBeValidUTF8(t *testing.T) {
	v := newTierVerifier(t, "tier")
	bad := map[string]string{
		"raw 0xff":                 "\"cust-\xff\"",
		"overlong slash":           "\"cust-\xc0\xaf\"",
		"UTF-8 surrogate":          "\"cust-\xed\xb2\x80\"",
		"lone low surrogate":       `"cust-\udc80"`,
		"lone high surrogate":      `"cust-\ud800"`,
		"high then letter":         `"cust-\ud800\u0041"`,
		"mis-paired":               `"cust-\udc80\ud800"`,
		"second of two subjects":   `"alice","sub":"\udc80"`,
		"invalid in another claim": "\"alice\",\"name\":\"\xff\"",
	}
	for kind, sign := range tokenKinds {
		for name, sub := range bad {
			if id, err := v.VerifyIdentity(sign("s3cret", claimsWith(`"sub":`+sub))); !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("%s, %s: %+v %v, want ErrUnauthenticated", kind, name, id, err)
			}
		}
		good := map[string]string{
			`"cust-\ud83c\udfab"`: "cust-🎫",
			`"cust-\ufffd"`:       "cust-\uFFFD",
			"\"cust-\uFFFD\"":     "cust-\uFFFD",
			`"cust-\u00e9"`:       "cust-é",
			`"a\\udc80"`:          `a\udc80`,
		}
		for sub, want := range good {
			if got, err := v.Verify(sign("s3cret", claimsWith(`"sub":`+sub))); err != nil || got != want {
				t.Errorf("%s, sub %s: %q %v, want %q", kind, sub, got, err, want)
			}
		}
	}
}

// Distinct subjects are distinct customers: the invalid ones, which
// encoding/json alone decodes to the same U+FFFD, are all refused, and
// the issuer's own U+FFFD is one customer however it is spelled.
func TestDistinctSubjectsStayDistinct(t *testing.T) {
	v := newTierVerifier(t, "tier")
	for kind, sign := range tokenKinds {
		for _, sub := range []string{"\"\xff\"", "\"\xfe\"", "\"\xc0\xaf\"", "\"\xc1\xbf\"", `"\udc80"`, `"\udfff"`, `"\ud800"`} {
			if got, err := v.Verify(sign("s3cret", claimsWith(`"sub":`+sub))); err == nil {
				t.Errorf("%s: subject %s accepted as customer %q", kind, sub, got)
			}
		}
		customers := map[string]bool{}
		for _, sub := range []string{`"\ufffd"`, "\"\uFFFD\"", "\"\uFFFD\uFFFD\"", `"\ufffd\ufffd"`, `"\ud83c\udfab"`} {
			got, err := v.Verify(sign("s3cret", claimsWith(`"sub":`+sub)))
			if err != nil {
				t.Errorf("%s: subject %s refused: %v", kind, sub, err)
			}
			customers[got] = true
		}
		if len(customers) != 3 {
			t.Errorf("%s: %d customers %v, want 3", kind, len(customers), customers)
		}
	}
}

// The tier is the configured claim's string value, read the same by both
// paths; absent or null is no tier; any other value is refused.
func TestTier(t *testing.T) {
	v := newTierVerifier(t, "tier")
	for kind, sign := range tokenKinds {
		for members, want := range map[string]string{
			`"sub":"alice"`:                                          "",
			`"sub":"alice","tier":"member"`:                          "member",
			`"tier":"member","sub":"alice"`:                          "member",
			`"sub":"alice","tier":null`:                              "",
			`"sub":"alice","tier":""`:                                "",
			`"sub":"alice","tier":"m\u0065mber"`:                     "member",
			`"sub":"alice","tier":"vip-\ud83c\udfab"`:                "vip-🎫",
			`"sub":"alice","Tier":"x","tier":"fan"`:                  "fan",
			`"sub":"alice","tier":"` + strings.Repeat("t", 64) + `"`: strings.Repeat("t", 64),
		} {
			id, err := v.VerifyIdentity(sign("s3cret", claimsWith(members)))
			if err != nil || id != (Identity{Subject: "alice", Tier: want}) {
				t.Errorf("%s, %s: %+v %v, want tier %q", kind, members, id, err, want)
			}
		}
		for _, members := range []string{
			`"sub":"alice","tier":5`,
			`"sub":"alice","tier":true`,
			`"sub":"alice","tier":["member"]`,
			`"sub":"alice","tier":{"name":"member"}`,
			`"sub":"alice","tier":"` + strings.Repeat("t", 65) + `"`,
			`"sub":"alice","tier":"mem\nber"`,
			`"sub":"alice","tier":"mem\u0000ber"`,
			`"sub":"alice","tier":"mem\udc80"`,
			"\"sub\":\"alice\",\"tier\":\"mem\xff\"",
			"\"sub\":\"alice\",\"tier\":\"mem\xc0\xaf\"",
		} {
			if id, err := v.VerifyIdentity(sign("s3cret", claimsWith(members))); !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("%s, %s: %+v %v, want ErrUnauthenticated", kind, members, id, err)
			}
		}
	}
	// Another claim name; the old one is then just another claim.
	plan := newTierVerifier(t, "plan")
	for kind, sign := range tokenKinds {
		id, err := plan.VerifyIdentity(sign("s3cret", claimsWith(`"sub":"alice","tier":5,"plan":"member"`)))
		if err != nil || id.Tier != "member" {
			t.Errorf("%s, claim plan: %+v %v", kind, id, err)
		}
	}
	// A namespaced claim name, as some providers require, written plainly
	// or with its slashes escaped.
	ns := newTierVerifier(t, "https://ticketfair.io/tier")
	for kind, sign := range tokenKinds {
		for _, members := range []string{`"sub":"alice","https://ticketfair.io/tier":"member"`, `"sub":"alice","https:\/\/ticketfair.io\/tier":"member"`} {
			if id, err := ns.VerifyIdentity(sign("s3cret", claimsWith(members))); err != nil || id.Tier != "member" {
				t.Errorf("%s, %s: %+v %v", kind, members, id, err)
			}
		}
	}
	// Identify reads the bearer token; Customer keeps returning the subject.
	tok := signRaw("s3cret", claimsWith(`"sub":"alice","tier":"member"`))
	r := httptestRequest(tok)
	if id, err := v.Identify(r); err != nil || id != (Identity{Subject: "alice", Tier: "member"}) {
		t.Errorf("Identify: %+v %v", id, err)
	}
	if sub, err := v.Customer(r); err != nil || sub != "alice" {
		t.Errorf("Customer: %q %v", sub, err)
	}
}

func TestTierClaimIsNotARegisteredClaim(t *testing.T) {
	for _, name := range []string{"sub", "iss", "exp"} {
		if _, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s", IdentityIssuer: "i", IdentityAudience: "a", TierClaim: name}); err == nil {
			t.Errorf("tier claim %q accepted", name)
		}
	}
}

// BenchmarkVerifyHS256Tier: the fast path on a token with a tier claim
// (go test -bench VerifyHS256 ./workloads/internal/identity/).
func BenchmarkVerifyHS256Tier(b *testing.B) {
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair", TierClaim: "tier"})
	if err != nil {
		b.Fatal(err)
	}
	tok := signRaw("s3cret", claimsWith(`"sub":"customer-123456","tier":"member"`))
	b.ReportAllocs()
	for b.Loop() {
		if id, err := v.VerifyIdentity(tok); err != nil || id.Tier != "member" {
			b.Fatal(id, err)
		}
	}
}

func httptestRequest(tok string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// Both paths decide any claims alike: the subject and tier they read, or
// that they refuse (the fast path's fallback to encoding/json included).
func FuzzPathsAgree(f *testing.F) {
	exp := strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	for _, m := range []string{`"sub":"alice"`, `"sub":"alice","tier":"member"`, `"sub":"\udc80"`, "\"sub\":\"\xff\"", `"sub":"a","tier":null`,
		`"sub":"a","tier":5`, `"sub":"\ud83c\udfab","tier":"m\u0065"`, `"sub":"a","TIER":"x","tier":"y"`, `"sub":"a","tier":"x","tier":"\udc80"`} {
		f.Add([]byte(`{"iss":"idp","aud":"ticketfair","exp":` + exp + `,` + m + `}`))
	}
	v, err := New(context.Background(), config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair", TierClaim: "tier"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, claims []byte) {
		fast, fastErr := v.VerifyIdentity(signRaw("s3cret", string(claims)))
		slow, slowErr := v.VerifyIdentity(signKid("s3cret", string(claims)))
		if (fastErr == nil) != (slowErr == nil) || fast != slow {
			t.Fatalf("claims %q: fast path %+v %v, parser %+v %v", claims, fast, fastErr, slow, slowErr)
		}
	})
}
