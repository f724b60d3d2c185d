package booking

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// The booking domain's errors: what the Store decides, in its own terms.
// httpError maps them, and every other error, to the API's answers.
var (
	ErrOrderNotFound        = errors.New("no such order")
	ErrOrderNotPending      = errors.New("the order is no longer pending")
	ErrOrderSettled         = errors.New("the order was already settled by another payment")
	ErrIdempotencyKeyReused = errors.New("this idempotency key was used for another order or payload")
	ErrNoSeats              = errors.New("choose at least one seat")
	ErrDuplicateSeat        = errors.New("a seat is listed twice")
)

// SeatsUnavailableError: some seats are taken; nothing was held.
type SeatsUnavailableError struct{ Seats []string }

func (e *SeatsUnavailableError) Error() string {
	return fmt.Sprintf("seats unavailable: %s", strings.Join(e.Seats, ", "))
}

// UnknownSeatsError: some seats do not exist.
type UnknownSeatsError struct{ Seats []string }

func (e *UnknownSeatsError) Error() string {
	return fmt.Sprintf("unknown seats: %s", strings.Join(e.Seats, ", "))
}

// BadSeatIDError: a seat id is not of the form <section>-<row>-<seat>.
type BadSeatIDError struct{ Seat string }

func (e *BadSeatIDError) Error() string { return fmt.Sprintf("bad seat id %q", e.Seat) }

// TooManySeatsError: one request asks for more seats than a customer may have.
type TooManySeatsError struct{ Limit int }

func (e *TooManySeatsError) Error() string {
	return fmt.Sprintf("at most %d seats per customer", e.Limit)
}

// SeatLimitError: the customer already holds or bought Already seats, and
// the request would take them past Limit.
type SeatLimitError struct {
	Limit   int
	Already int64
}

func (e *SeatLimitError) Error() string {
	return fmt.Sprintf("customer holds or bought %d seats; the limit is %d", e.Already, e.Limit)
}

// The booking API's own request errors, each with its HTTP status.
var (
	errMissingToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "missing_token", Message: "X-Queue-Token header is required"}
	errInvalidToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Message: "the access token is invalid, expired or for another event"}
	errSessionInactive = &httpapi.Error{Status: http.StatusForbidden, Code: "session_inactive", Message: "your seat-selection session has ended; rejoin the queue"}
	errUnauthenticated = &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: "an identity token (Authorization: Bearer) or X-Queue-Token is required"}
	errServiceToken    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid service token is required"}
	errUnknownEvent    = &httpapi.Error{Status: http.StatusNotFound, Code: "unknown_event", Message: "this service does not sell that event"}
	errMissingIdemKey  = &httpapi.Error{Status: http.StatusBadRequest, Code: "missing_idempotency_key", Message: "Idempotency-Key header is required"}
	errBadSignature    = &httpapi.Error{Status: http.StatusUnauthorized, Code: "bad_signature", Message: "the webhook signature does not verify"}
	errStaleSignature  = &httpapi.Error{Status: http.StatusUnauthorized, Code: "stale_signature", Message: "the webhook timestamp is outside the accepted window"}
	errNoWebhookSecret = &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "webhook_not_configured", Message: "no webhook secret is configured"}
)

func badRequest(code, format string, args ...any) *httpapi.Error {
	return httpapi.Errorf(http.StatusBadRequest, code, format, args...)
}

// httpError is the one place the domain's errors become HTTP answers;
// database failures become 503 or 500 (httpapi.DatabaseError), and
// *httpapi.Error passes through.
func httpError(err error) error {
	var (
		unavailable *SeatsUnavailableError
		unknown     *UnknownSeatsError
		badID       *BadSeatIDError
		tooMany     *TooManySeatsError
		limit       *SeatLimitError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrOrderNotFound):
		return &httpapi.Error{Status: http.StatusNotFound, Code: "order_not_found", Message: "no such order"}
	case errors.Is(err, ErrOrderNotPending):
		return &httpapi.Error{Status: http.StatusConflict, Code: "order_not_pending", Message: "the order is no longer pending"}
	case errors.Is(err, ErrOrderSettled):
		return &httpapi.Error{Status: http.StatusConflict, Code: "order_settled", Message: "the order was already settled by another payment"}
	case errors.Is(err, ErrIdempotencyKeyReused):
		return &httpapi.Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Message: "this idempotency key was used for another order or payload"}
	case errors.Is(err, ErrNoSeats):
		return badRequest("no_seats", "choose at least one seat")
	case errors.Is(err, ErrDuplicateSeat):
		return badRequest("duplicate_seat", "a seat is listed twice")
	case errors.As(err, &badID):
		return badRequest("bad_seat_id", "seat id %q is not of the form <section>-<row>-<seat>", truncate(badID.Seat, 40))
	case errors.As(err, &tooMany):
		return badRequest("too_many_seats", "at most %d seats per customer", tooMany.Limit)
	case errors.As(err, &unknown):
		return &httpapi.Error{Status: http.StatusBadRequest, Code: "unknown_seats",
			Message: "some seats do not exist", Extra: map[string]any{"unknown": unknown.Seats}}
	case errors.As(err, &limit):
		return &httpapi.Error{Status: http.StatusConflict, Code: "seat_limit",
			Message: fmt.Sprintf("you already hold or bought %d seats; the limit is %d", limit.Already, limit.Limit),
			Extra:   map[string]any{"limit": limit.Limit, "alreadyHeld": limit.Already}}
	case errors.As(err, &unavailable):
		return &httpapi.Error{Status: http.StatusConflict, Code: "seats_unavailable",
			Message: "some seats are no longer available; nothing was held",
			Extra:   map[string]any{"unavailable": unavailable.Seats}}
	}
	return httpapi.DatabaseError(err)
}

// rejected reports whether err refuses the request (a 4xx), as opposed to
// a failure of the service or its dependencies.
func rejected(err error) bool {
	var he *httpapi.Error
	return errors.As(httpError(err), &he) && he.Status < 500
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
