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

package identitytoken_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/identitytoken"
)

// The token is a standard HS256 JWT a third-party library verifies, with
// the claims asked for.
func TestSign(t *testing.T) {
	tok := identitytoken.Sign("s3cret", "ticketfair-identity", "ticketfair", "cust-1", time.Hour)
	var c jwt.RegisteredClaims
	parsed, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return []byte("s3cret"), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("ticketfair-identity"), jwt.WithAudience("ticketfair"), jwt.WithExpirationRequired())
	if err != nil || !parsed.Valid {
		t.Fatalf("token %q does not verify: %v", tok, err)
	}
	if left := time.Until(c.ExpiresAt.Time); c.Subject != "cust-1" || left > time.Hour || left < 59*time.Minute {
		t.Fatalf("claims %+v", c)
	}
	if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte("other"), nil }); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("a wrong secret verified: %v", err)
	}
}
