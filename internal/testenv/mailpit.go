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

package testenv

import (
	"context"
	"testing"

	"github.com/ticketfair/ticketfair/internal/localsvc"
)

// Mailpit starts a Mailpit server (SMTP and its REST API) for this test,
// closed when the test ends. The test may Stop and Start it to take the
// mail server away and bring it back.
func Mailpit(t testing.TB) *localsvc.Mailpit {
	t.Helper()
	m, err := localsvc.StartMailpit(context.Background())
	if err != nil {
		Unavailable(t, "mailpit", err)
		return nil
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// MailpitTLS is Mailpit whose SMTP server requires STARTTLS, or TLS from
// the first byte with implicit, with a certificate for 127.0.0.1 signed by
// the returned CA.
func MailpitTLS(t testing.TB, implicit bool) (*localsvc.Mailpit, Certs) {
	t.Helper()
	certs := NewCerts(t)
	m, err := localsvc.StartMailpitWith(context.Background(), localsvc.MailpitConfig{
		TLSCertFile: certs.ServerCertFile, TLSKeyFile: certs.ServerKeyFile, ImplicitTLS: implicit,
	})
	if err != nil {
		Unavailable(t, "mailpit", err)
		return nil, certs
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, certs
}
