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
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/ticketfair/ticketfair/workloads/internal/claimtext"
)

// decodeClaims reads the claims of the common identity token without
// encoding/json, which was most of the identity check on the queue's join:
// a flat object whose values are strings without escapes, integers,
// true, false or null, with iss, sub and aud as strings and exp and nbf as
// integers. Anything else (nesting, escapes, fractions, another type for
// one of the five, a key that only matches one of them case-insensitively,
// as encoding/json would take it) returns ok false, and the caller decodes
// with encoding/json. When ok, c is what encoding/json would have decoded
// (FuzzDecodeClaims checks it). The claim named tierClaim (when not "")
// must be such a string too; tier is its value, "" when absent.
func decodeClaims(raw []byte, tierClaim string) (c hsClaims, tier string, ok bool) {
	d := claimsDecoder{s: raw}
	if !d.byte('{') {
		return c, "", false
	}
	if d.byte('}') {
		return c, "", d.end()
	}
	for {
		key, ok := d.str()
		if !ok || !asciiKey(key) || !d.byte(':') {
			return c, "", false
		}
		d.space()
		switch string(key) {
		case "iss", "sub", "aud":
			v, ok := d.str()
			if !ok || !utf8.Valid(v) {
				return c, "", false
			}
			switch string(key) {
			case "iss":
				c.Issuer = string(v)
			case "sub":
				c.Subject = claimtext.String(v)
			default:
				c.Audience = audiences{string(v)}
			}
		case "exp", "nbf":
			n, ok := d.integer()
			if !ok {
				return c, "", false
			}
			t := numericDate(n)
			if string(key) == "exp" {
				c.ExpiresAt = &t
			} else {
				c.NotBefore = &t
			}
		default:
			if tierClaim != "" && string(key) == tierClaim {
				v, ok := d.str()
				if !ok || !utf8.Valid(v) {
					return c, "", false
				}
				tier = string(v)
			} else if foldsToClaim(key) || !d.scalar() {
				return c, "", false
			}
		}
		if d.byte('}') {
			return c, tier, d.end()
		}
		if !d.byte(',') {
			return c, "", false
		}
	}
}

// claimsDecoder walks a claims object; each method leaves i after what it
// read.
type claimsDecoder struct {
	s []byte
	i int
}

func (d *claimsDecoder) space() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\t' || d.s[d.i] == '\n' || d.s[d.i] == '\r') {
		d.i++
	}
}

// byte reads b after optional space.
func (d *claimsDecoder) byte(b byte) bool {
	d.space()
	if d.i < len(d.s) && d.s[d.i] == b {
		d.i++
		return true
	}
	return false
}

// end reports whether only space is left.
func (d *claimsDecoder) end() bool {
	d.space()
	return d.i == len(d.s)
}

// str reads a string without escapes or control characters.
func (d *claimsDecoder) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.s) {
		switch b := d.s[d.i]; {
		case b == '"':
			d.i++
			return d.s[start : d.i-1], true
		case b == '\\' || b < 0x20:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// integer reads -?(0|[1-9][0-9]*) of at most 15 digits, which a float64
// holds exactly, as encoding/json's parse of it does.
func (d *claimsDecoder) integer() (int64, bool) {
	start := d.i
	if d.i < len(d.s) && d.s[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || n > 15 || (n > 1 && d.s[digits] == '0') {
		return 0, false
	}
	if d.i < len(d.s) && (d.s[d.i] == '.' || d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.s[start:d.i]), 10, 64)
	return v, err == nil
}

// scalar skips a value of another claim: a plain string, an integer, true,
// false or null.
func (d *claimsDecoder) scalar() bool {
	if d.i >= len(d.s) {
		return false
	}
	switch b := d.s[d.i]; {
	case b == '"':
		v, ok := d.str()
		return ok && utf8.Valid(v)
	case b == '-' || (b >= '0' && b <= '9'):
		_, ok := d.integer()
		return ok
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(d.s[d.i:], []byte(lit)) {
			d.i += len(lit)
			return true
		}
	}
	return false
}

// asciiKey reports whether key is ASCII: encoding/json folds
// other letters too (ſ to s, K to k) when it matches keys to fields.
func asciiKey(key []byte) bool {
	for _, b := range key {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldsToClaim reports whether encoding/json would take key (not one of
// the five exactly) for one of the five claims: it matches field names
// case-insensitively.
func foldsToClaim(key []byte) bool {
	for _, k := range []string{"iss", "sub", "aud", "exp", "nbf"} {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}
