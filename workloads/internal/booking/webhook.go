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
	"errors"
	"time"

	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// SignatureHeader carries the payment provider's webhook signature.
const SignatureHeader = webhooksig.Header

// verifyWebhook checks header against body with any of secrets (several
// during rotation) and a timestamp within tolerance of now, either way,
// and answers as the webhook endpoint does.
func verifyWebhook(header string, body []byte, secrets []string, tolerance time.Duration, now time.Time) error {
	switch err := webhooksig.Verify(header, body, secrets, tolerance, now); {
	case err == nil:
		return nil
	case errors.Is(err, webhooksig.ErrNoSecret):
		return errNoWebhookSecret
	case errors.Is(err, webhooksig.ErrMalformed):
		return badRequest("bad_signature_header", "%s must be t=<unix>,v1=<hex hmac>", SignatureHeader)
	case errors.Is(err, webhooksig.ErrStale):
		return errStaleSignature
	default:
		return errBadSignature
	}
}
