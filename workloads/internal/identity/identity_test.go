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
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

func TestHS256(t *testing.T) {
	cfg := config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "idp", IdentityAudience: "ticketfair"}
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := SignHS256("s3cret", "idp", "ticketfair", "alice", time.Minute)
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Authorization", "Bearer "+good)
	if sub, err := v.Customer(r); err != nil || sub != "alice" {
		t.Fatalf("good token: %q %v", sub, err)
	}
	wrongSecret, _ := SignHS256("other", "idp", "ticketfair", "alice", time.Minute)
	wrongAud, _ := SignHS256("s3cret", "idp", "someone-else", "alice", time.Minute)
	wrongIss, _ := SignHS256("s3cret", "evil", "ticketfair", "alice", time.Minute)
	expired, _ := SignHS256("s3cret", "idp", "ticketfair", "alice", -time.Hour)
	noSub, _ := SignHS256("s3cret", "idp", "ticketfair", "", time.Minute)
	nulSub, _ := SignHS256("s3cret", "idp", "ticketfair", "ali\x00ce", time.Minute)
	// (Invalid UTF-8 and unpaired surrogate escapes: strict_test.go.)
	controlSub, _ := SignHS256("s3cret", "idp", "ticketfair", "ali\nce", time.Minute)
	for name, h := range map[string]string{
		"missing": "", "not bearer": "Basic abc", "malformed": "Bearer x.y.z",
		"wrong secret": "Bearer " + wrongSecret, "wrong audience": "Bearer " + wrongAud,
		"wrong issuer": "Bearer " + wrongIss, "expired": "Bearer " + expired, "no subject": "Bearer " + noSub,
		"NUL in subject": "Bearer " + nulSub, "control character in subject": "Bearer " + controlSub,
	} {
		r := httptest.NewRequest("POST", "/", nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		if _, err := v.Customer(r); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: got %v, want ErrUnauthenticated", name, err)
		}
	}
}

func TestNewNeedsAKey(t *testing.T) {
	if _, err := New(context.Background(), config.Identity{IdentityIssuer: "i", IdentityAudience: "a"}); err == nil {
		t.Fatal("no key accepted")
	}
}
