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

package queue

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

// FuzzQueueID: decoding never panics, accepts only what encode produced for
// the same customer and event, and round-trips.
func FuzzQueueID(f *testing.F) {
	codec, err := newQueueIDCodec(testKeys)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(codec.encode(testEvent, "alice", postOpenBase+1, 7), "alice", int64(postOpenBase+1))
	f.Add("", "", int64(0))
	f.Add("AQAAAAAAAAAqABAAAAAAAAEAAAAAAAAAAAAAAAAAAAAA", "bob", int64(7))
	f.Fuzz(func(t *testing.T, id, customer string, score int64) {
		if s, g, err := codec.decode(id, testEvent, customer); err == nil {
			if enc := codec.encode(testEvent, customer, s, g); len(enc) == len(id) && enc != id {
				t.Fatalf("accepted %q, which encode does not produce", id)
			}
		}
		if score < 0 {
			return
		}
		enc := codec.encode(testEvent, customer, score, 7)
		if s, g, err := codec.decode(enc, testEvent, customer); err != nil || s != score || g != 7 {
			t.Fatalf("round trip of %d for %q: %d %v", score, customer, s, err)
		}
		if _, _, err := codec.decode(enc, testEvent, customer+"x"); err == nil {
			t.Fatal("queueId accepted for another customer")
		}
		if _, _, err := codec.decode(enc, testEvent+1, customer); err == nil {
			t.Fatal("queueId accepted for another event")
		}
	})
}

// FuzzTokens: the identity and access-token parsers never panic and never
// accept a token they did not sign.
func FuzzTokens(f *testing.F) {
	idv, err := identity.New(f.Context(), config.Identity{IdentityHMACSecret: testSecret, IdentityIssuer: testIss, IdentityAudience: testAud})
	if err != nil {
		f.Fatal(err)
	}
	ks, err := accesstoken.ParseKeys(testKeys)
	if err != nil {
		f.Fatal(err)
	}
	pub := ks.PublicKeys()
	atv := accesstoken.NewVerifier(func() map[string]ed25519.PublicKey { return pub })
	good, _ := identity.SignHS256(testSecret, testIss, testAud, "alice", time.Hour)
	at, _, _ := ks.Sign(testEvent, "alice", "sid-1", time.Now(), time.Hour)
	f.Add(good)
	f.Add(at)
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.")
	f.Add("x.y.z")
	// Only tokens for alice are ever signed with these keys (the identity
	// secret is fixed, so seeds from earlier runs still verify). Note:
	// encoding/base64 skips CR and LF, so a signed token with line breaks
	// inserted still verifies (found by this fuzz test; seed
	// newline-in-signature): harmless, the signed claims are unchanged.
	f.Fuzz(func(t *testing.T, tok string) {
		if sub, err := idv.Verify(tok); err == nil && sub != "alice" {
			t.Fatalf("identity token %q accepted for %q", tok, sub)
		}
		if c, err := atv.Verify(tok, testEvent); err == nil && c.Subject != "alice" {
			t.Fatalf("access token %q accepted for %q", tok, c.Subject)
		}
	})
}
