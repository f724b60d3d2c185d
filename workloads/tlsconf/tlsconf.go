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

// Package tlsconf builds the TLS client configuration of ticketfair's
// connections to Redis, PostgreSQL and Kafka from PEM text, as it arrives
// from a Secret through an environment variable.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// Client returns a TLS 1.2+ client configuration that trusts the CA
// certificates in caPEM (the system's when empty), presents the client
// certificate certPEM/keyPEM when given, and checks that the server's
// certificate names serverName (the dialed host when empty).
func Client(caPEM, certPEM, keyPEM, serverName string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			return nil, errors.New("tls: the CA holds no PEM certificate")
		}
		c.RootCAs = pool
	}
	if (certPEM == "") != (keyPEM == "") {
		return nil, errors.New("tls: a client certificate needs both the certificate and its key")
	}
	if certPEM != "" {
		cert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
