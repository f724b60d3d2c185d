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
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"
)

// signRaw signs a claims JSON as it is with ks's signing key.
func signRaw(ks *KeySet, claims string) string {
	k := ks.keys[0]
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"EdDSA","kid":"` + k.ID + `","typ":"JWT"}`))
	si := head + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	return si + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(k.Private, []byte(si)))
}

// A subject or session of invalid UTF-8 or with an unpaired surrogate
// escape is refused: encoding/json would decode them all to U+FFFD, one
// customer for many subjects. A paired surrogate and U+FFFD itself pass.
func TestVerifyRefusesInvalidUTF8(t *testing.T) {
	ks := mustKeys(t, "a")
	v := NewVerifier(ks.PublicKeys)
	claims := func(sub, sid string) string {
		return `{"iss":"` + Issuer + `","aud":["` + Audience + `"],"exp":` + strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10) +
			`,"eid":1,"sub":` + sub + `,"sid":` + sid + `}`
	}
	for name, c := range map[string]string{
		"raw 0xff subject":       claims("\"cust-\xff\"", `"s"`),
		"overlong subject":       claims("\"cust-\xc0\xaf\"", `"s"`),
		"lone surrogate subject": claims(`"cust-\udc80"`, `"s"`),
		"mis-paired subject":     claims(`"cust-\udc80\ud800"`, `"s"`),
		"lone surrogate session": claims(`"alice"`, `"s-\ud800"`),
		"invalid UTF-8 session":  claims(`"alice"`, "\"s-\xff\""),
	} {
		if got, err := v.Verify(signRaw(ks, c), 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %+v %v, want ErrInvalid", name, got, err)
		}
	}
	for sub, want := range map[string]string{`"cust-\ud83c\udfab"`: "cust-🎫", `"cust-\ufffd"`: "cust-\uFFFD", "\"cust-\uFFFD\"": "cust-\uFFFD"} {
		if c, err := v.Verify(signRaw(ks, claims(sub, `"s"`)), 1); err != nil || c.Customer() != want {
			t.Errorf("subject %s: %v %v, want %q", sub, c, err, want)
		}
	}
}
