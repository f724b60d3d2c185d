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

package gatecred

import (
	"errors"
	"strings"
	"testing"
)

func TestMintParse(t *testing.T) {
	c, err := Mint("s3cret", 42, "north-1")
	if err != nil {
		t.Fatal(err)
	}
	ev, gate, err := Parse("s3cret", c)
	if err != nil || ev != 42 || gate != "north-1" {
		t.Fatalf("Parse(Mint) = %d %q %v", ev, gate, err)
	}
	for name, bad := range map[string]string{
		"other secret":   mustMint(t, "other", 42, "north-1"),
		"renamed gate":   strings.Replace(c, ".north-1.", ".south-1.", 1),
		"other event":    strings.Replace(c, "gate.42.", "gate.43.", 1),
		"no prefix":      strings.TrimPrefix(c, "gate."),
		"truncated mac":  c[:len(c)-2],
		"extra part":     c + ".x",
		"empty":          "",
		"negative event": "gate.-1.north-1." + mac("s3cret", "-1.north-1"),
	} {
		if _, _, err := Parse("s3cret", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	for _, g := range []string{"", "a.b", strings.Repeat("x", 65), "gate one"} {
		if _, err := Mint("s3cret", 42, g); err == nil {
			t.Errorf("Mint with gate %q: no error", g)
		}
	}
	if _, err := Mint("", 42, "g"); err == nil {
		t.Error("Mint without a secret: no error")
	}
}

func mustMint(t *testing.T, secret string, ev int64, gate string) string {
	t.Helper()
	c, err := Mint(secret, ev, gate)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
