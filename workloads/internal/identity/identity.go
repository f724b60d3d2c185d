// Package identity verifies customers' identity tokens: a JWT in
// "Authorization: Bearer", whose sub is the customer id. The verification
// key is an HS256 shared secret or public keys from the identity provider's
// JWKS; issuer and audience are always checked. The customer id is never
// taken from anything the client sends besides a verified token.
package identity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// ErrUnauthenticated is returned for a missing or invalid identity token.
var ErrUnauthenticated = errors.New("unauthenticated")

// Verifier checks identity tokens.
type Verifier struct {
	keyfunc jwt.Keyfunc
	parser  *jwt.Parser
	// hs256, with an HMAC secret: the short path for tokens with the
	// standard header (hs256Verifier.verify); others go through parser.
	hs256 *hs256Verifier
}

// New builds a verifier from the configuration: the HMAC secret when set,
// else the JWKS URL (fetched in the background and refreshed; ctx bounds it).
func New(ctx context.Context, cfg config.Identity) (*Verifier, error) {
	var kf jwt.Keyfunc
	var methods []string
	switch {
	case cfg.IdentityHMACSecret != "":
		secret := []byte(cfg.IdentityHMACSecret)
		kf = func(*jwt.Token) (any, error) { return secret, nil }
		methods = []string{jwt.SigningMethodHS256.Alg()}
	case cfg.IdentityJWKSURL != "":
		k, err := keyfunc.NewDefaultCtx(ctx, []string{cfg.IdentityJWKSURL})
		if err != nil {
			return nil, fmt.Errorf("identity JWKS %s: %w", cfg.IdentityJWKSURL, err)
		}
		kf = k.Keyfunc
		methods = []string{"RS256", "ES256", "EdDSA", "PS256"}
	default:
		return nil, errors.New("identity: set TICKETFAIR_IDENTITY_HMAC_SECRET or TICKETFAIR_IDENTITY_JWKS_URL")
	}
	if cfg.IdentityIssuer == "" || cfg.IdentityAudience == "" {
		return nil, errors.New("identity: issuer and audience are required")
	}
	v := &Verifier{keyfunc: kf, parser: jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithIssuer(cfg.IdentityIssuer),
		jwt.WithAudience(cfg.IdentityAudience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(leeway),
	)}
	if cfg.IdentityHMACSecret != "" {
		v.hs256 = newHS256Verifier([]byte(cfg.IdentityHMACSecret), cfg.IdentityIssuer, cfg.IdentityAudience)
	}
	return v, nil
}

// leeway is the clock skew allowed on exp and nbf.
const leeway = 30 * time.Second

// MaxTokenBytes bounds the token accepted from a header.
const MaxTokenBytes = 8 << 10

// Customer verifies the bearer token of r and returns the customer id.
func (v *Verifier) Customer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return "", fmt.Errorf("%w: missing bearer token", ErrUnauthenticated)
	}
	return v.Verify(strings.TrimSpace(tok))
}

// Verify checks a raw token and returns its subject.
func (v *Verifier) Verify(tok string) (string, error) {
	if len(tok) > MaxTokenBytes {
		return "", fmt.Errorf("%w: token too long", ErrUnauthenticated)
	}
	var sub string
	if c, ok, err := v.hs256.verify(tok, time.Now()); ok {
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnauthenticated, err)
		}
		sub = c
	} else {
		var c jwt.RegisteredClaims
		if _, err := v.parser.ParseWithClaims(tok, &c, v.keyfunc); err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnauthenticated, err)
		}
		sub = c.Subject
	}
	// The subject becomes a key in Redis and PostgreSQL and a field in
	// logs: NUL, invalid UTF-8 or control characters make it unusable.
	if sub == "" || len(sub) > 256 || !httpapi.CleanText(sub) {
		return "", fmt.Errorf("%w: token has no usable subject", ErrUnauthenticated)
	}
	return sub, nil
}

// SignHS256 issues an identity token, as a simple identity provider would:
// for the local sale, the load generator and tests. A caller signing many
// tokens with one secret keeps an HS256Signer instead.
func SignHS256(secret, issuer, audience, customer string, ttl time.Duration) (string, error) {
	return NewHS256Signer(secret, issuer, audience).Sign(customer, ttl), nil
}
