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

package pow

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testKeys = func() *Keys {
	k, err := ParseKeys(GenerateKey())
	if err != nil {
		panic(err)
	}
	return k
}()

func solve(t testing.TB, c Challenge) string {
	t.Helper()
	nonce, _, err := Solve(context.Background(), c.Token, c.Difficulty, 0)
	if err != nil {
		t.Fatal(err)
	}
	return nonce
}

func TestIssueSolveVerify(t *testing.T) {
	now := time.Now()
	for _, d := range []int{0, 1, 4, 8, 12} {
		c, err := testKeys.Issue(7, "alice", d, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.ID) != 32 || c.Difficulty != d || c.ExpiresAt.Sub(now) > time.Minute || c.ExpiresAt.Sub(now) < time.Minute-time.Millisecond {
			t.Fatalf("issued %+v", c)
		}
		nonce := solve(t, c)
		if got := LeadingZeroBits(c.Token, nonce); got < d {
			t.Fatalf("difficulty %d: solution has %d zero bits", d, got)
		}
		v, err := testKeys.Verify(c.Token, nonce, 7, "alice", now.Add(time.Second))
		if err != nil {
			t.Fatalf("difficulty %d: verify: %v", d, err)
		}
		if v.ID != c.ID || v.Difficulty != d || !v.ExpiresAt.Equal(c.ExpiresAt) {
			t.Fatalf("verified %+v, issued %+v", v, c)
		}
	}
}

// TestVerifyRefuses is the table of what Verify must refuse, each for its
// own reason.
func TestVerifyRefuses(t *testing.T) {
	now := time.Now()
	c, err := testKeys.Issue(7, "alice", 10, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	nonce := solve(t, c)
	// A nonce that does not solve it: the first counter with fewer bits.
	bad := ""
	for i := 0; ; i++ {
		if s := strconv.Itoa(i); LeadingZeroBits(c.Token, s) < 10 {
			bad = s
			break
		}
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c.Token)
	tamper := func(i int, fn func(byte) byte) string {
		b := append([]byte(nil), raw...)
		b[i] = fn(b[i])
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other, _ := ParseKeys(GenerateKey())
	foreign, _ := other.Issue(7, "alice", 10, now, time.Minute)
	for _, tc := range []struct {
		name, token, nonce, subject string
		event                       int64
		at                          time.Time
		want                        error
	}{
		{"wrong subject", c.Token, nonce, "bob", 7, now, ErrSignature},
		{"subject differs by case", c.Token, nonce, "Alice", 7, now, ErrSignature},
		{"wrong event", c.Token, nonce, "alice", 8, now, ErrSignature},
		{"expired", c.Token, nonce, "alice", 7, c.ExpiresAt, ErrExpired},
		{"long expired", c.Token, nonce, "alice", 7, now.Add(time.Hour), ErrExpired},
		{"insufficient", c.Token, bad, "alice", 7, now, ErrInsufficient},
		{"empty nonce", c.Token, "", "alice", 7, now, ErrBadNonce},
		{"nonce too long", c.Token, strings.Repeat("1", MaxNonceLen+1), "alice", 7, now, ErrBadNonce},
		{"nonce with space", c.Token, "1 2", "alice", 7, now, ErrBadNonce},
		{"nonce not ascii", c.Token, "1é", "alice", 7, now, ErrBadNonce},
		{"difficulty lowered", tamper(len(raw)-macLen-1, func(byte) byte { return 0 }), "0", "alice", 7, now, ErrSignature},
		{"expiry extended", tamper(1+idLen+8, func(b byte) byte { return b + 1 }), nonce, "alice", 7, now, ErrSignature},
		{"id changed", tamper(1, func(b byte) byte { return b ^ 1 }), nonce, "alice", 7, now, ErrSignature},
		{"mac changed", tamper(len(raw)-1, func(b byte) byte { return b ^ 0x80 }), nonce, "alice", 7, now, ErrSignature},
		{"other version", tamper(0, func(byte) byte { return 2 }), nonce, "alice", 7, now, ErrMalformed},
		{"other key", foreign.Token, nonce, "alice", 7, now, ErrSignature},
		{"empty", "", nonce, "alice", 7, now, ErrMalformed},
		{"truncated", c.Token[:len(c.Token)-1], nonce, "alice", 7, now, ErrMalformed},
		{"one more char", c.Token + "A", nonce, "alice", 7, now, ErrMalformed},
		{"not base64", "!" + c.Token[1:], nonce, "alice", 7, now, ErrMalformed},
		{"padded", c.Token + "=", nonce, "alice", 7, now, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testKeys.Verify(tc.token, tc.nonce, tc.event, tc.subject, tc.at)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
	// The unaltered challenge still verifies: the refusals above are the
	// alterations', not the challenge's.
	if _, err := testKeys.Verify(c.Token, nonce, 7, "alice", now); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyRandomBytes feeds Verify tokens of random and flipped bytes:
// none may verify or panic.
func TestVerifyRandomBytes(t *testing.T) {
	now := time.Now()
	c, _ := testKeys.Issue(7, "alice", 0, now, time.Minute)
	raw, _ := base64.RawURLEncoding.DecodeString(c.Token)
	for i := range raw {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), raw...)
			b[i] ^= 1 << bit
			if _, err := testKeys.Verify(base64.RawURLEncoding.EncodeToString(b), "0", 7, "alice", now); err == nil {
				t.Fatalf("byte %d bit %d flipped: verified", i, bit)
			}
		}
	}
	seed := sha256.Sum256([]byte("seed"))
	for i := 0; i < 2000; i++ {
		seed = sha256.Sum256(seed[:])
		n := int(seed[0]) % 80
		buf := make([]byte, 0, n)
		for len(buf) < n {
			seed = sha256.Sum256(seed[:])
			buf = append(buf, seed[:]...)
		}
		tok := base64.RawURLEncoding.EncodeToString(buf[:n])
		if _, err := testKeys.Verify(tok, "0", 7, "alice", now); err == nil {
			t.Fatalf("random token %q verified", tok)
		}
	}
}

func TestKeyRotation(t *testing.T) {
	oldKey, newKey := GenerateKey(), GenerateKey()
	before, err := ParseKeys(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseKeys(newKey + "," + oldKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c, _ := before.Issue(1, "s", 0, now, time.Minute)
	if _, err := after.Verify(c.Token, "x", 1, "s", now); err != nil {
		t.Fatalf("a challenge of the old key after rotation: %v", err)
	}
	n, _ := after.Issue(1, "s", 0, now, time.Minute)
	if _, err := before.Verify(n.Token, "x", 1, "s", now); !errors.Is(err, ErrSignature) {
		t.Fatalf("a new key's challenge verified by the old set alone: %v", err)
	}
}

func TestParseKeys(t *testing.T) {
	for _, s := range []string{"", " , ", "not base64!", base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := ParseKeys(s); err == nil {
			t.Errorf("ParseKeys(%q) accepted", s)
		}
	}
	k := make([]byte, 16)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if _, err := ParseKeys(enc.EncodeToString(k)); err != nil {
			t.Errorf("ParseKeys: %v", err)
		}
	}
}

func TestIssueRefusesDifficulty(t *testing.T) {
	for _, d := range []int{-1, MaxDifficulty + 1} {
		if _, err := testKeys.Issue(1, "s", d, time.Now(), time.Minute); err == nil {
			t.Errorf("difficulty %d issued", d)
		}
	}
}

func TestIDsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		c, _ := testKeys.Issue(1, "s", 0, time.Now(), time.Minute)
		if seen[c.ID] {
			t.Fatalf("challenge id %s issued twice", c.ID)
		}
		seen[c.ID] = true
	}
}

func TestZeroBits(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want int
	}{
		{[]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, 0},
		{[]byte{0x01, 0, 0, 0, 0, 0, 0, 0}, 7},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}, 65},
		{make([]byte, 32), 256},
	} {
		if got := zeroBits(tc.b); got != tc.want {
			t.Errorf("zeroBits(%x) = %d, want %d", tc.b, got, tc.want)
		}
	}
}

func TestAdaptive(t *testing.T) {
	for _, tc := range []struct {
		rate int64
		want int
	}{
		{0, 10}, {999, 10}, {1000, 12}, {1999, 12}, {2000, 14}, {4000, 16}, {8000, 18}, {1 << 30, 20},
	} {
		if got := Adaptive(10, 2, 20, 1000, tc.rate); got != tc.want {
			t.Errorf("Adaptive(rate %d) = %d, want %d", tc.rate, got, tc.want)
		}
	}
	if got := Adaptive(10, 2, 20, 0, 1<<40); got != 10 {
		t.Errorf("no threshold: %d, want the base", got)
	}
}

func TestSolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, _ := testKeys.Issue(1, "s", MaxDifficulty, time.Now(), time.Minute)
	if _, _, err := Solve(ctx, c.Token, c.Difficulty, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Solve = %v, want canceled", err)
	}
}

// BenchmarkVerify is the gate's cost per join: a solved challenge checked
// (HMAC, expiry, subject, SHA-256 of the solution).
func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	c, _ := testKeys.Issue(7, "customer-000123", 16, now, time.Minute)
	nonce := solve(b, c)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := testKeys.Verify(c.Token, nonce, 7, "customer-000123", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue is the challenge endpoint's signing cost.
func BenchmarkIssue(b *testing.B) {
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := testKeys.Issue(7, "customer-000123", 16, now, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolveNative is a bot's cost per challenge on one core at each
// difficulty (expected 2^d hashes; ns/op is the mean over fresh
// challenges).
func BenchmarkSolveNative(b *testing.B) {
	for _, d := range []int{8, 12, 16, 18} {
		b.Run("bits="+strconv.Itoa(d), func(b *testing.B) {
			var hashes uint64
			for b.Loop() {
				c, _ := testKeys.Issue(7, "bot", d, time.Now(), time.Minute)
				_, n, err := Solve(context.Background(), c.Token, d, 1)
				if err != nil {
					b.Fatal(err)
				}
				hashes += n
			}
			b.ReportMetric(float64(hashes)/float64(b.N), "hashes/op")
		})
	}
}
