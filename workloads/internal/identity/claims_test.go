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
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// claimsSeeds are claims objects of both kinds: those decodeClaims reads
// and those it leaves to encoding/json.
var claimsSeeds = []string{
	`{"iss":"idp","aud":"ticketfair","sub":"alice","exp":1900000000}`,
	` { "iss" : "idp" , "aud":"ticketfair","sub":"ünï","iat":1800000000,"exp":1900000000,"nbf":-5,"jti":"x","admin":true,"x":null,"y":false} `,
	`{"sub":"a","sub":"b","exp":1,"exp":2}`,
	`{}`,
	`{"sub":"alice","exp":-0}`,
	`{"aud":["x","ticketfair"],"sub":"alice","exp":1900000000}`,
	`{"ISS":"idp","sub":"alice","exp":1900000000}`,
	`{"iſs":"idp","sub":"alice","exp":1900000000}`,
	`{"sub":"a\"b","exp":1900000000}`,
	`{"sub":"alice","exp":1900000000.5}`,
	`{"sub":"alice","exp":"1900000000"}`,
	`{"sub":"alice","exp":1e9}`,
	`{"sub":"alice","exp":01}`,
	`{"sub":"alice","exp":1234567890123456}`,
	`{"sub":null,"exp":1}`,
	`{"sub":"alice","nested":{"a":1},"exp":1}`,
	`{"sub":"alice","exp":1}x`,
	`{"sub":"alice",}`,
	`{"sub":"\xff","exp":1}`,
	`[1,2]`,
	`{"sub":"alice","n":-}`,
	`{"sub":"alice","t":tru}`,
}

// Whenever decodeClaims reads claims, encoding/json reads the same.
func FuzzDecodeClaims(f *testing.F) {
	for _, s := range claimsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, _, ok := decodeClaims(raw, "")
		if !ok {
			return
		}
		var want hsClaims
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("decodeClaims read %q, encoding/json refuses it: %v", raw, err)
		}
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("claims %q: decodeClaims %+v, encoding/json %+v", raw, c, want)
		}
	})
}

// The tokens identity providers issue take the short decode: SignHS256's,
// and the usual claims with whitespace, other scalar claims and repeats.
// The others are left to encoding/json, which decides them as before.
func TestDecodeClaimsTakesTheCommonTokens(t *testing.T) {
	tok, _ := SignHS256("s3cret", "idp", "ticketfair", "cust-42", time.Hour)
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	for _, raw := range append([]string{string(payload)}, claimsSeeds[:5]...) {
		c, _, ok := decodeClaims([]byte(raw), "")
		if !ok {
			t.Errorf("%s: left to encoding/json", raw)
			continue
		}
		var want hsClaims
		if err := json.Unmarshal([]byte(raw), &want); err != nil || !reflect.DeepEqual(c, want) {
			t.Errorf("%s: %+v, encoding/json %+v (%v)", raw, c, want, err)
		}
	}
	if c, _, _ := decodeClaims(payload, "tier"); c.Subject != "cust-42" || c.ExpiresAt == nil || c.Issuer != "idp" || len(c.Audience) != 1 {
		t.Errorf("SignHS256's claims read as %+v", c)
	}
	for _, raw := range claimsSeeds[5:] {
		if _, _, ok := decodeClaims([]byte(raw), ""); ok {
			t.Errorf("%s: read by the short decode, want encoding/json", raw)
		}
	}
}
