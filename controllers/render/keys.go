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

package render

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Keys of the generated Secret (see KeysSecretName).
const (
	KeyAccessTokenKeys = "access-token-keys"
	KeyServiceToken    = "service-token"
	KeyTicketKeys      = "ticket-keys"
	// KeyGateSecret is the gate secret the gate devices' credentials are
	// derived from, used unless spec.gates.gateSecretRef names another.
	KeyGateSecret = "gate-secret"
)

// KeysSecretName is the Secret the operator generates with the access-token
// keys, the internal service token and the ticket signing keys.
func KeysSecretName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-keys" }

// GenerateKey returns a new Ed25519 key as "kid:base64(32-byte seed)", the
// format of TICKETFAIR_ACCESS_TOKEN_KEYS and TICKETFAIR_TICKET_KEYS.
func GenerateKey(kid string) (string, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return kid + ":" + base64.StdEncoding.EncodeToString(seed), nil
}

// GenerateKeys returns the data of a sale's keys Secret: an access-token
// key, a ticket signing key, the internal service token, the proof of
// work's and the access codes' HMAC keys and the gate secret (generated
// even while spec.gates.gateSecretRef names another, so that clearing it falls
// back to a secret that is already there). The reconciler
// writes it once and never rotates it, so tokens and tickets stay valid.
func GenerateKeys() (map[string][]byte, error) {
	id := make([]byte, 4)
	token := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("generate key id: %w", err)
	}
	if _, err := rand.Read(token); err != nil {
		return nil, fmt.Errorf("generate service token: %w", err)
	}
	// The proof of work's HMAC key: 32 bytes, the form TICKETFAIR_POW_KEYS reads.
	pow := make([]byte, 32)
	if _, err := rand.Read(pow); err != nil {
		return nil, fmt.Errorf("generate proof-of-work key: %w", err)
	}
	// The access codes' HMAC key: 32 bytes, the form TICKETFAIR_ACCESS_CODE_KEY reads.
	codes := make([]byte, 32)
	if _, err := rand.Read(codes); err != nil {
		return nil, fmt.Errorf("generate access code key: %w", err)
	}
	// The gate secret: 32 bytes, the HMAC key of gatecred.
	gate := make([]byte, 32)
	if _, err := rand.Read(gate); err != nil {
		return nil, fmt.Errorf("generate gate secret: %w", err)
	}
	kid := hex.EncodeToString(id)
	access, err := GenerateKey("a" + kid)
	if err != nil {
		return nil, err
	}
	ticket, err := GenerateKey("t" + kid)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		KeyAccessTokenKeys: []byte(access),
		KeyTicketKeys:      []byte(ticket),
		KeyServiceToken:    []byte(base64.RawURLEncoding.EncodeToString(token)),
		KeyPowKeys:         []byte(base64.StdEncoding.EncodeToString(pow)),
		KeyAccessCodeKey:   []byte(base64.StdEncoding.EncodeToString(codes)),
		KeyGateSecret:      []byte(base64.RawURLEncoding.EncodeToString(gate)),
	}, nil
}
