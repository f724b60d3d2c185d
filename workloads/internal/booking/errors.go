package booking

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// The booking service's errors, each with its HTTP status, in one place.
var (
	errMissingToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "missing_token", Message: "X-Queue-Token header is required"}
	errInvalidToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Message: "the access token is invalid, expired or for another event"}
	errSessionInactive = &httpapi.Error{Status: http.StatusForbidden, Code: "session_inactive", Message: "your seat-selection session has ended; rejoin the queue"}
	errUnauthenticated = &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: "an identity token (Authorization: Bearer) or X-Queue-Token is required"}
	errServiceToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid service token is required"}
	errUnknownEvent    = &httpapi.Error{Status: http.StatusNotFound, Code: "unknown_event", Message: "this service does not sell that event"}
	errOrderNotFound   = &httpapi.Error{Status: http.StatusNotFound, Code: "order_not_found", Message: "no such order"}
	errNoSeats         = &httpapi.Error{Status: http.StatusBadRequest, Code: "no_seats", Message: "choose at least one seat"}
	errDuplicateSeat   = &httpapi.Error{Status: http.StatusBadRequest, Code: "duplicate_seat", Message: "a seat is listed twice"}
	errMissingIdemKey  = &httpapi.Error{Status: http.StatusBadRequest, Code: "missing_idempotency_key", Message: "Idempotency-Key header is required"}
	errIdemKeyReused   = &httpapi.Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Message: "this idempotency key was used for another order or payload"}
	errOrderSettled    = &httpapi.Error{Status: http.StatusConflict, Code: "order_settled", Message: "the order was already settled by another payment"}
	errOrderNotPending = &httpapi.Error{Status: http.StatusConflict, Code: "order_not_pending", Message: "the order is no longer pending"}
	errBadSignature    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "bad_signature", Message: "the webhook signature does not verify"}
	errStaleSignature  = &httpapi.Error{Status: http.StatusUnauthorized, Code: "stale_signature", Message: "the webhook timestamp is outside the accepted window"}
	errNoWebhookSecret = &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "webhook_not_configured", Message: "no webhook secret is configured"}
)

func badRequest(code, format string, args ...any) *httpapi.Error {
	return httpapi.Errorf(http.StatusBadRequest, code, format, args...)
}

func errTooManySeats(limit int) *httpapi.Error {
	return badRequest("too_many_seats", "at most %d seats per customer", limit)
}

func errSeatLimit(limit int, already int64) *httpapi.Error {
	return &httpapi.Error{Status: http.StatusConflict, Code: "seat_limit",
		Message: fmt.Sprintf("you already hold or bought %d seats; the limit is %d", already, limit),
		Extra:   map[string]any{"limit": limit, "alreadyHeld": already}}
}

func errUnavailableSeats(seats []string) *httpapi.Error {
	return &httpapi.Error{Status: http.StatusConflict, Code: "seats_unavailable",
		Message: "some seats are no longer available; nothing was held",
		Extra:   map[string]any{"unavailable": seats}}
}

func errUnknownSeats(seats []string) *httpapi.Error {
	return &httpapi.Error{Status: http.StatusBadRequest, Code: "unknown_seats",
		Message: "some seats do not exist", Extra: map[string]any{"unknown": seats}}
}

// retryable reports database errors a transaction is simply run again for:
// serialization failures, deadlocks and (for confirm) a racing unique key.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01", "23505":
		return true
	}
	return false
}

// dbError turns a database error into the service's answer (see
// httpapi.DatabaseError).
func dbError(err error) error { return httpapi.DatabaseError(err) }
