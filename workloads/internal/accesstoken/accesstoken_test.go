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

package accesstoken

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func mustKeys(t *testing.T, kids ...string) *KeySet {
	t.Helper()
	var spec string
	for i, kid := range kids {
		k, err := GenerateKey(kid)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			spec += ","
		}
		spec += k
	}
	ks, err := ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestSignVerifyThroughJWKS(t *testing.T) {
	ks := mustKeys(t, "k2", "k1")
	tok, exp, err := ks.Sign(7, "alice", "sess-1", time.Now(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(exp) < 9*time.Minute {
		t.Fatalf("expiry too early: %v", exp)
	}
	doc, _ := json.Marshal(ks.JWKS())
	pub, err := ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 2 {
		t.Fatalf("JWKS has %d keys, want 2", len(pub))
	}
	v := NewVerifier(func() ed25519PublicKeys { return pub })
	c, err := v.Verify(tok, 7)
	if err != nil {
		t.Fatal(err)
	}
	if c.Customer() != "alice" || c.SessionID != "sess-1" || c.EventID != 7 {
		t.Fatalf("claims: %+v", c)
	}
	if _, err := v.Verify(tok, 8); !errors.Is(err, ErrInvalid) {
		t.Fatalf("other event: got %v", err)
	}
}

func TestVerifyRejects(t *testing.T) {
	ks := mustKeys(t, "a")
	other := mustKeys(t, "a")
	v := NewVerifier(ks.PublicKeys)
	expired, _, _ := ks.Sign(1, "bob", "s", time.Now().Add(-time.Hour), time.Minute)
	forged, _, _ := other.Sign(1, "bob", "s", time.Now(), time.Minute)
	nulSubject, _, _ := ks.Sign(1, "b\x00ob", "s", time.Now(), time.Minute)
	badSession, _, _ := ks.Sign(1, "bob", "s\u0085", time.Now(), time.Minute)
	for name, tok := range map[string]string{"expired": expired, "forged": forged, "garbage": "abc.def.ghi", "empty": "",
		"NUL in subject": nulSubject, "control character in session": badSession} {
		if _, err := v.Verify(tok, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}

func TestRotationKeepsOldTokensValid(t *testing.T) {
	old := mustKeys(t, "old")
	tok, _, _ := old.Sign(1, "carol", "s", time.Now(), time.Minute)
	newKey, _ := GenerateKey("new")
	oldSpec := "old:" + encodeSeed(old.keys[0])
	rotated, err := ParseKeys(newKey + "," + oldSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewVerifier(rotated.PublicKeys).Verify(tok, 1); err != nil {
		t.Fatalf("token of the rotated-out key: %v", err)
	}
	fresh, _, _ := rotated.Sign(1, "carol", "s2", time.Now(), time.Minute)
	if _, err := NewVerifier(old.PublicKeys).Verify(fresh, 1); err == nil {
		t.Fatal("old key set verified a token signed by the new key")
	}
}

func TestParseKeysErrors(t *testing.T) {
	for _, s := range []string{"", "nokid", "k:!!!", "k:AAAA"} {
		if _, err := ParseKeys(s); err == nil {
			t.Errorf("ParseKeys(%q) succeeded", s)
		}
	}
}
