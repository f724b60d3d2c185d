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

package claimtext

import (
	"encoding/json"
	"testing"
)

func TestValid(t *testing.T) {
	for lit, want := range map[string]bool{
		`"alice"`:              true,
		`"ünï"`:                true,
		`"\ud83c\udfab"`:       true, // a correctly paired surrogate: 🎫
		`"\u00e9\n\"\\"`:       true,
		"\"\uFFFD\"":           true, // U+FFFD written by the issuer
		`"\ufffd"`:             true,
		`"\\udc80"`:            true, // an escaped backslash, then text
		`"\\\ud83c\udfab"`:     true,
		`{"a":"\ud83c\udfab"}`: true,
		`"\udc80"`:             false,
		`"\ud800"`:             false,
		`"\ud800x"`:            false,
		`"\ud800\u0041"`:       false,
		`"\udc80\ud800"`:       false,
		`"\ud800\ud800"`:       false,
		`"\\\udc80"`:           false,
		`"\u12"`:               false,
		`"\uzzzz"`:             false,
		"\"\xff\"":             false,
		"\"\xc0\xaf\"":         false, // overlong "/"
		"\"\xed\xb2\x80\"":     false, // a surrogate encoded in UTF-8
		`{"sub":"\udc80"}`:     false,
		`"a\`:                  false,
	} {
		if got := Valid([]byte(lit)); got != want {
			t.Errorf("Valid(%s) = %v, want %v", lit, got, want)
		}
	}
}

// String refuses exactly what encoding/json would have replaced, and
// otherwise decodes as a string does.
func TestString(t *testing.T) {
	for _, lit := range []string{`"alice"`, `"\ud83c\udfab"`, `"\ufffd"`, `null`, `"a\"b"`} {
		var s String
		var want string
		if err := json.Unmarshal([]byte(lit), &s); err != nil {
			t.Errorf("%s: %v", lit, err)
		}
		_ = json.Unmarshal([]byte(lit), &want)
		if string(s) != want {
			t.Errorf("%s: %q, want %q", lit, s, want)
		}
	}
	for _, lit := range []string{`"\udc80"`, "\"\xff\"", "\"\xc0\xaf\"", `5`, `{}`, `["a"]`} {
		var s String
		if err := json.Unmarshal([]byte(lit), &s); err == nil {
			t.Errorf("%s: decoded as %q", lit, s)
		}
	}
	// Two distinct invalid subjects that encoding/json decodes alike.
	var a, b string
	_ = json.Unmarshal([]byte(`"\udc80"`), &a)
	_ = json.Unmarshal([]byte("\"\xff\""), &b)
	if a != b {
		t.Fatalf("encoding/json no longer merges them (%q, %q): the premise of this package changed", a, b)
	}
}
