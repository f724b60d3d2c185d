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

package tickets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// rawToken signs an identity token whose sub is the raw JSON sub.
func rawToken(sub string) string {
	claims := `{"iss":"` + issuer + `","aud":"` + aud + `","exp":` + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `,"sub":` + sub + `}`
	si := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(si))
	return si + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// The tickets of customer U+FFFD are not served to subjects that only
// decode to U+FFFD (invalid UTF-8, an unpaired surrogate escape): those
// get 401 with the JSON error body; U+FFFD itself gets its tickets.
func TestTicketsRefuseInvalidUTF8Subjects(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	o := order(1, 2)
	o.CustomerID = "\uFFFD"
	produce(t, brokers, 1, o)
	s := startRun(t, testConfig(t, url, brokers))
	path := s.base + "/orders/" + o.OrderID + "/tickets"
	deadline := time.Now().Add(20 * time.Second)
	for countTickets(t, pool) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("tickets not issued in 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, sub := range map[string]string{"raw 0xff": "\"\xff\"", "overlong slash": "\"\xc0\xaf\"", "lone low surrogate": `"\udc80"`} {
		status, body := call(t, path, rawToken(sub))
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); status != http.StatusUnauthorized || err != nil || e.Error.Code != "unauthorized" {
			t.Errorf("%s: %d %s, want 401 unauthorized", name, status, body)
		}
	}
	if status, body := call(t, path, rawToken(`"\ufffd"`)); status != http.StatusOK {
		t.Errorf("customer U+FFFD: %d %s", status, body)
	}
}
