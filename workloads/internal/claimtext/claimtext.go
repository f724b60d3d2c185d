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

// Package claimtext decodes the strings of signed token claims strictly.
// encoding/json replaces invalid UTF-8 and unpaired surrogate escapes
// ("\udc80") with U+FFFD, so two different subjects would decode to the
// same customer id; here both are refused instead. A U+FFFD the issuer
// wrote itself, raw or escaped, stays valid.
package claimtext

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// ErrInvalid is returned for a claim string that is not valid UTF-8 or
// holds an unpaired surrogate escape.
var ErrInvalid = errors.New("claim is not valid UTF-8")

// String is a JSON string claim decoded strictly.
type String string

// UnmarshalJSON refuses what encoding/json would replace with U+FFFD.
func (s *String) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if !Valid(b) {
		return ErrInvalid
	}
	return json.Unmarshal(b, (*string)(s))
}

// Valid reports whether the JSON text b (a string literal or a whole
// document) is valid UTF-8 and every \u escape in it is a character or a
// correctly paired surrogate. Outside strings JSON has no backslash, so
// the escapes are found without parsing.
func Valid(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 >= len(b) {
			return false
		}
		if b[i+1] != 'u' {
			i++ // \" \\ \/ \b \f \n \r \t: the next byte is not an escape
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return false
		}
		i += 5
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return false // a low surrogate without its high one
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(b, i+3)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
