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

// Package identitytoken signs the identity tokens the services verify
// (HS256, as the shared-secret identity provider issues them), for the
// clients that live outside the workloads' module tree: the operator's
// tests and tools speak to the services as a customer would. It is the
// services' own signer, not a second implementation of the token format.
package identitytoken

import (
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

// Sign returns a token for customer from the issuer to the audience,
// signed with secret and valid from now for ttl.
func Sign(secret, issuer, audience, customer string, ttl time.Duration) string {
	return identity.NewHS256Signer(secret, issuer, audience).Sign(customer, ttl)
}
