package booking

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the payment provider's webhook signature.
const SignatureHeader = "Ticketfair-Signature"

// Bounds of a signature header, so a hostile one costs nothing.
const (
	maxSignatureHeader = 1024
	maxSignatures      = 8
)

// SignWebhook returns the signature header value for body sent at t:
// "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">". The simulated payment
// provider of the load generator uses it.
func SignWebhook(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// signature is a parsed signature header.
type signature struct {
	timestamp int64
	ts        string // as sent, since it is what was signed
	v1        [][]byte
}

var errMalformedSignature = errors.New("malformed signature header")

// parseSignature reads "t=<unix>,v1=<hex>[,v1=<hex>...]". Other schemes
// (v0, future v2) are skipped; exactly one t and at least one v1 of 32
// bytes are required.
func parseSignature(h string) (signature, error) {
	var sig signature
	if h == "" || len(h) > maxSignatureHeader {
		return sig, errMalformedSignature
	}
	seenT := false
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return sig, errMalformedSignature
		}
		switch k {
		case "t":
			if seenT || v == "" || len(v) > 12 || !digits(v) {
				return sig, errMalformedSignature
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return sig, errMalformedSignature
			}
			seenT, sig.timestamp, sig.ts = true, n, v
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size || len(sig.v1) == maxSignatures {
				return sig, errMalformedSignature
			}
			sig.v1 = append(sig.v1, b)
		}
	}
	if !seenT || len(sig.v1) == 0 {
		return sig, errMalformedSignature
	}
	return sig, nil
}

// verifyWebhook checks header against body with any of secrets (several
// during rotation) and a timestamp within tolerance of now, either way.
func verifyWebhook(header string, body []byte, secrets []string, tolerance time.Duration, now time.Time) error {
	if len(secrets) == 0 {
		return errNoWebhookSecret
	}
	sig, err := parseSignature(header)
	if err != nil {
		return badRequest("bad_signature_header", "%s must be t=<unix>,v1=<hex hmac>", SignatureHeader)
	}
	age := now.Sub(time.Unix(sig.timestamp, 0))
	if age > tolerance || age < -tolerance {
		return errStaleSignature
	}
	for _, secret := range secrets {
		want := mac(secret, sig.ts, body)
		for _, got := range sig.v1 {
			if hmac.Equal(want, got) {
				return nil
			}
		}
	}
	return errBadSignature
}
