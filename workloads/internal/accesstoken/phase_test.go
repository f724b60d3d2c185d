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
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The phase travels in the short claim "ph": set when the customer was
// admitted under a phase, absent (not empty) without one, so a token
// signed before phases existed verifies with no phase. A phase of invalid
// UTF-8, an unpaired surrogate or a control character is refused.
func TestPhaseClaim(t *testing.T) {
	ks := mustKeys(t, "a")
	v := NewVerifier(ks.PublicKeys)
	tok, _, err := ks.SignPhase(1, "alice", "s-1", "presale", time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(tok, 1)
	if err != nil || c.Phase != "presale" || c.Customer() != "alice" {
		t.Fatalf("phased token: %+v %v", c, err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if !strings.Contains(string(payload), `"ph":"presale"`) {
		t.Fatalf("payload %s has no ph claim", payload)
	}

	plain, _, err := ks.Sign(1, "alice", "s-1", time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ = base64.RawURLEncoding.DecodeString(strings.Split(plain, ".")[1])
	if strings.Contains(string(payload), `"ph"`) {
		t.Fatalf("a token without a phase carries ph: %s", payload)
	}
	if c, err := v.Verify(plain, 1); err != nil || c.Phase != "" {
		t.Fatalf("token without a phase: %+v %v", c, err)
	}

	claims := func(ph string) string {
		return `{"iss":"` + Issuer + `","aud":["` + Audience + `"],"exp":` + strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10) +
			`,"eid":1,"sub":"alice","sid":"s","ph":` + ph + `}`
	}
	for name, ph := range map[string]string{
		"invalid UTF-8":  "\"pre\xffsale\"",
		"lone surrogate": `"pre\ud800"`,
		"control":        `"pre\u0000sale"`,
	} {
		if got, err := v.Verify(signRaw(ks, claims(ph)), 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %+v %v, want ErrInvalid", name, got, err)
		}
	}
}
