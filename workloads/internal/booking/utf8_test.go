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

package booking

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// rawAccessToken signs a claims JSON as it is with the service's access
// token key, and activates its session sid, so that only the subject can
// make the hold fail.
func (e *env) rawAccessToken(sub, sid string) string {
	e.t.Helper()
	keys, err := accesstoken.ParseSeeds(e.cfg.AccessTokenKeys)
	if err != nil {
		e.t.Fatal(err)
	}
	exp := time.Now().Add(10 * time.Minute)
	claims := `{"iss":"` + accesstoken.Issuer + `","aud":["` + accesstoken.Audience + `"],"exp":` + strconv.FormatInt(exp.Unix(), 10) +
		`,"eid":` + strconv.Itoa(testEvent) + `,"sub":` + sub + `,"sid":"` + sid + `"}`
	si := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"EdDSA","kid":"`+keys[0].ID+`","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(claims))
	if err := e.rdb.ZAdd(context.Background(), zone.ActiveKey(testEvent), redis.Z{Score: float64(exp.UnixMilli()), Member: sid}).Err(); err != nil {
		e.t.Fatal(err)
	}
	return si + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(keys[0].Private, []byte(si)))
}

// rawIdentityToken signs a claims JSON as it is with the identity secret.
func (e *env) rawIdentityToken(sub string) string {
	claims := `{"iss":"` + e.cfg.IdentityIssuer + `","aud":"` + e.cfg.IdentityAudience + `","exp":` +
		strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `,"sub":` + sub + `}`
	si := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(testIdentity))
	m.Write([]byte(si))
	return si + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// invalidSubjects are subjects encoding/json alone decodes to U+FFFD:
// distinct subjects, one customer, if they were let through.
var invalidSubjects = map[string]string{
	"raw 0xff":           "\"\xff\"",
	"overlong slash":     "\"\xc0\xaf\"",
	"lone low surrogate": `"\udc80"`,
}

// Access and identity tokens whose subject is invalid UTF-8 or an unpaired
// surrogate escape are refused with 401 and the JSON error body: no hold,
// no order read, and never two of them as one customer.
func TestInvalidUTF8SubjectsRefused(t *testing.T) {
	e := newEnv(t)
	order := e.hold("\uFFFD", "A-9-8") // the customer they would all become
	before := e.snapshot()
	i := 0
	for name, sub := range invalidSubjects {
		i++
		seat := "A-1-" + strconv.Itoa(i)
		r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{seat}}, QueueTokenHeader, e.rawAccessToken(sub, "sess-bad-"+strconv.Itoa(i)))
		if r.status != 401 || r.errCode() != "invalid_token" {
			t.Errorf("hold, %s: %d %s, want 401 invalid_token", name, r.status, r.body)
		}
		r = e.do("GET", "/orders/"+order, nil, QueueTokenHeader, e.rawAccessToken(sub, "sess-bad-"+strconv.Itoa(i)))
		if r.status != 401 || r.errCode() != "invalid_token" {
			t.Errorf("order by access token, %s: %d %s, want 401 invalid_token", name, r.status, r.body)
		}
		r = e.do("GET", "/orders/"+order, nil, "Authorization", "Bearer "+e.rawIdentityToken(sub))
		if r.status != 401 || r.errCode() != "unauthenticated" {
			t.Errorf("order by identity token, %s: %d %s, want 401 unauthenticated", name, r.status, r.body)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a token with an invalid subject changed the database")
	}
	// The issuer's own U+FFFD is a customer like any other, and a paired
	// surrogate escape is its character.
	if r := e.do("GET", "/orders/"+order, nil, "Authorization", "Bearer "+e.rawIdentityToken(`"\ufffd"`)); r.status != 200 {
		t.Errorf("order of customer U+FFFD: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/events/7/holds", map[string]any{"seats": []string{"A-2-1"}}, QueueTokenHeader, e.rawAccessToken(`"fan-\ud83c\udfab"`, "sess-emoji"))
	if r.status != 201 || e.count(`SELECT count(*) FROM ticket_order WHERE customer_id = $1`, "fan-🎫") != 1 {
		t.Errorf("hold by a paired surrogate subject: %d %s", r.status, r.body)
	}
}
