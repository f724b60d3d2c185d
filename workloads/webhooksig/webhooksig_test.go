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

package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

// The signature parser never panics, bounds its work, and whatever it
// accepts has a timestamp and 32-byte signatures; a header made by
// Sign always verifies.
func FuzzParseSignature(f *testing.F) {
	f.Add("t=1700000000,v1=" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	f.Add("t=1,v1=ab,v1=cd")
	f.Add("v0=x,t=5,v1=")
	f.Add("t=,v1=")
	f.Add("")
	f.Add(",,,,")
	f.Fuzz(func(t *testing.T, h string) {
		sig, err := parse(h)
		if err != nil {
			return
		}
		if sig.ts == "" || len(sig.v1) == 0 || len(sig.v1) > maxSignatures {
			t.Fatalf("accepted %q as %+v", h, sig)
		}
		for _, v := range sig.v1 {
			if len(v) != 32 {
				t.Fatalf("accepted a %d-byte signature from %q", len(v), h)
			}
		}
		// Verification of anything parsed is well-defined too.
		_ = Verify(h, []byte(h), []string{"s"}, 5*time.Minute, time.Unix(sig.timestamp, 0))
	})
}

func FuzzSignVerify(f *testing.F) {
	f.Add("secret", []byte(`{"orderId":"x"}`), int64(1700000000))
	f.Fuzz(func(t *testing.T, secret string, body []byte, ts int64) {
		if ts < 0 || ts > 1<<40 {
			return
		}
		at := time.Unix(ts, 0)
		h := Sign(secret, at, body)
		if err := Verify(h, body, []string{"other", secret}, time.Minute, at); err != nil {
			t.Fatalf("own signature %q rejected: %v", h, err)
		}
		if err := Verify(h, append(body, 'x'), []string{secret}, time.Minute, at); err == nil {
			t.Fatal("tampered body accepted")
		}
	})
}

func TestSignFormat(t *testing.T) {
	got := Sign("whsec", time.Unix(1700000000, 0), []byte(`{"a":1}`))
	// HMAC-SHA256("whsec", `1700000000.{"a":1}`), computed independently with openssl.
	want := "t=1700000000,v1=" + expectedHMAC
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

const expectedHMAC = "8ad37ba156048ae0e0a5533c75cdf26fee88b07f93cb57ee4c80adb053012032"

func TestSign(t *testing.T) {
	body := []byte(`{"orderId":"o1"}`)
	at := time.Unix(1767000000, 0)
	mac := hmac.New(sha256.New, []byte("whsec"))
	mac.Write([]byte("1767000000." + string(body)))
	want := "t=1767000000,v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := Sign("whsec", at, body); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if Sign("other", at, body) == want || Sign("whsec", at.Add(time.Second), body) == want {
		t.Fatal("signature ignores the secret or the time")
	}
}
