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
