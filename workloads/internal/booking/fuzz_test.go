package booking

import (
	"testing"
	"time"
)

// The signature parser never panics, bounds its work, and whatever it
// accepts has a timestamp and 32-byte signatures; a header made by
// SignWebhook always verifies.
func FuzzParseSignature(f *testing.F) {
	f.Add("t=1700000000,v1=" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	f.Add("t=1,v1=ab,v1=cd")
	f.Add("v0=x,t=5,v1=")
	f.Add("t=,v1=")
	f.Add("")
	f.Add(",,,,")
	f.Fuzz(func(t *testing.T, h string) {
		sig, err := parseSignature(h)
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
		_ = verifyWebhook(h, []byte(h), []string{"s"}, 5*time.Minute, time.Unix(sig.timestamp, 0))
	})
}

func FuzzSignVerify(f *testing.F) {
	f.Add("secret", []byte(`{"orderId":"x"}`), int64(1700000000))
	f.Fuzz(func(t *testing.T, secret string, body []byte, ts int64) {
		if ts < 0 || ts > 1<<40 {
			return
		}
		at := time.Unix(ts, 0)
		h := SignWebhook(secret, at, body)
		if err := verifyWebhook(h, body, []string{"other", secret}, time.Minute, at); err != nil {
			t.Fatalf("own signature %q rejected: %v", h, err)
		}
		if err := verifyWebhook(h, append(body, 'x'), []string{secret}, time.Minute, at); err == nil {
			t.Fatal("tampered body accepted")
		}
	})
}
