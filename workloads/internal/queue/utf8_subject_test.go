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

package queue

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// rawIDToken signs an identity token whose sub is the raw JSON sub, as a
// careless or hostile issuer could.
func rawIDToken(sub string) string {
	claims := `{"iss":"` + testIss + `","aud":"` + testAud + `","exp":` + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `,"sub":` + sub + `}`
	si := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write([]byte(si))
	return si + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Joining with a subject of invalid UTF-8 or an unpaired surrogate escape
// is 401 with the JSON error body: decoded, they would all be the customer
// U+FFFD, so distinct people would share one place in line.
func TestJoinRefusesInvalidUTF8Subjects(t *testing.T) {
	base := startService(t, testConfig(t, testenv.RedisURL(t)), nil)
	for name, sub := range map[string]string{"raw 0xff": "\"\xff\"", "overlong slash": "\"\xc0\xaf\"", "lone low surrogate": `"\udc80"`, "mis-paired": `"\udc80\ud800"`} {
		r := do(t, "POST", queueURL(base), rawIDToken(sub), nil)
		if r.Status != 401 || r.errorCode(t) != "unauthorized" {
			t.Errorf("join, %s: %d %s, want 401 unauthorized", name, r.Status, r.Body)
		}
	}
	// The issuer's own U+FFFD and a paired surrogate are customers, each
	// spelling of U+FFFD the same one.
	first := do(t, "POST", queueURL(base), rawIDToken(`"\ufffd"`), nil)
	again := do(t, "POST", queueURL(base), rawIDToken("\"\uFFFD\""), nil)
	emoji := do(t, "POST", queueURL(base), rawIDToken(`"\ud83c\udfab"`), nil)
	if first.Status != 201 || again.Status/100 != 2 || emoji.Status != 201 {
		t.Fatalf("valid subjects: %d %d %d", first.Status, again.Status, emoji.Status)
	}
	if first.view(t).QueueID != again.view(t).QueueID || first.view(t).QueueID == emoji.view(t).QueueID {
		t.Errorf("queue ids %s %s %s: want the U+FFFD spellings one place, the emoji another", first.view(t).QueueID, again.view(t).QueueID, emoji.view(t).QueueID)
	}
}
