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
	// A request by quantity (BestRequest) that cannot be asked.
	ErrSeatsAndQuantity = errors.New("ask for seats or for a quantity, not both")
	ErrBadQuantity      = errors.New("quantity must be at least 1")
	ErrNoCategory       = errors.New("a quantity needs a category or a section")
	ErrBadWheelchair    = errors.New("wheelchair places need as many companion seats in the quantity")
)

// UnknownCategoryError: the venue has no such price category.
type UnknownCategoryError struct{ Category string }

func (e *UnknownCategoryError) Error() string { return fmt.Sprintf("unknown category %q", e.Category) }

// UnknownSectionError: the venue has no such section.
type UnknownSectionError struct{ Section string }

func (e *UnknownSectionError) Error() string { return fmt.Sprintf("unknown section %q", e.Section) }

// NotEnoughPlacesError: fewer places than asked for are free (Available
// of them); nothing was held.
type NotEnoughPlacesError struct{ Available int }

func (e *NotEnoughPlacesError) Error() string {
	return fmt.Sprintf("only %d places are left", e.Available)
}

// NoBlockError: no block of the quantity asked for is free together;
// Split is the best the buyer may hold instead, seat by seat.
type NoBlockError struct{ Split []string }

func (e *NoBlockError) Error() string {
	return fmt.Sprintf("no seats together; the best split is %s", strings.Join(e.Split, ", "))
}

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

// TooManySeatsError: one request asks for more seats than a customer may
// have (in Phase, when the limit is the phase's).
type TooManySeatsError struct {
	Limit int
	Phase string
}

func (e *TooManySeatsError) Error() string {
	return fmt.Sprintf("at most %d seats per customer%s", e.Limit, inPhase(e.Phase))
}

// SeatLimitError: the customer already holds or bought Already seats, and
// the request would take them past Limit (Phase's, when set).
type SeatLimitError struct {
	Limit   int
	Already int64
	Phase   string
}

func (e *SeatLimitError) Error() string {
	return fmt.Sprintf("customer holds or bought %d seats; the limit is %d%s", e.Already, e.Limit, inPhase(e.Phase))
}

// UnknownPhaseError: the access token names a phase this sale does not have.
type UnknownPhaseError struct{ Phase string }

func (e *UnknownPhaseError) Error() string { return fmt.Sprintf("unknown phase %q", e.Phase) }

// SectionNotInPhaseError: Seats are in sections Phase does not sell; it
// sells Sections.
type SectionNotInPhaseError struct {
	Phase    string
	Seats    []string
	Sections []string
}

func (e *SectionNotInPhaseError) Error() string {
	return fmt.Sprintf("seats %s are outside the sections of phase %s", strings.Join(e.Seats, ", "), e.Phase)
}

// inPhase is " in phase <phase>", or nothing without a phase.
func inPhase(phase string) string {
	if phase == "" {
		return ""
	}
	return " in phase " + phase
}

// withPhase adds the phase to an error's extra fields when there is one.
func withPhase(extra map[string]any, phase string) map[string]any {
	if phase != "" {
		extra["phase"] = phase
	}
	return extra
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
		noPhase     *UnknownPhaseError
		outside     *SectionNotInPhaseError
		noCategory  *UnknownCategoryError
		noSection   *UnknownSectionError
		notEnough   *NotEnoughPlacesError
		noBlock     *NoBlockError
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
	case errors.Is(err, ErrSeatsAndQuantity):
		return badRequest("seats_and_quantity", "ask for seats or for a quantity, not both")
	case errors.Is(err, ErrBadQuantity):
		return badRequest("bad_quantity", "quantity must be at least 1")
	case errors.Is(err, ErrNoCategory):
		return badRequest("no_category", "a quantity needs a category, or a section")
	case errors.Is(err, ErrBadWheelchair):
		return badRequest("bad_wheelchair", "wheelchair must be 0 or more, each with a companion seat counted in quantity")
	case errors.As(err, &noCategory):
		return &httpapi.Error{Status: http.StatusBadRequest, Code: "unknown_category",
			Message: fmt.Sprintf("no category %q", truncate(noCategory.Category, 20))}
	case errors.As(err, &noSection):
		return &httpapi.Error{Status: http.StatusBadRequest, Code: "unknown_section",
			Message: fmt.Sprintf("no section %q", truncate(noSection.Section, 20))}
	case errors.As(err, &notEnough):
		return &httpapi.Error{Status: http.StatusConflict, Code: "not_enough_places",
			Message: fmt.Sprintf("only %d places are left; nothing was held", notEnough.Available),
			Extra:   map[string]any{"available": notEnough.Available}}
	case errors.As(err, &noBlock):
		return &httpapi.Error{Status: http.StatusConflict, Code: "no_seats_together",
			Message: "no seats are free together; hold the split (seats) instead, or try again",
			Extra:   map[string]any{"split": noBlock.Split}}
	case errors.As(err, &badID):
		return badRequest("bad_seat_id", "seat id %q is not of the form <section>-<row>-<seat>", truncate(badID.Seat, 40))
	case errors.As(err, &tooMany):
		return &httpapi.Error{Status: http.StatusBadRequest, Code: "too_many_seats",
			Message: fmt.Sprintf("at most %d seats per customer%s", tooMany.Limit, inPhase(tooMany.Phase)),
			Extra:   withPhase(map[string]any{"limit": tooMany.Limit}, tooMany.Phase)}
	case errors.As(err, &noPhase):
		return &httpapi.Error{Status: http.StatusForbidden, Code: "unknown_phase",
			Message: fmt.Sprintf("your access token names phase %q, which this sale does not have; rejoin the queue", truncate(noPhase.Phase, 40))}
	case errors.As(err, &outside):
		return &httpapi.Error{Status: http.StatusForbidden, Code: "section_not_in_phase",
			Message: fmt.Sprintf("phase %s sells only sections %s; nothing was held", outside.Phase, strings.Join(outside.Sections, ", ")),
			Extra:   map[string]any{"phase": outside.Phase, "sections": outside.Sections, "seats": outside.Seats}}
	case errors.As(err, &unknown):
		return &httpapi.Error{Status: http.StatusBadRequest, Code: "unknown_seats",
			Message: "some seats do not exist", Extra: map[string]any{"unknown": unknown.Seats}}
	case errors.As(err, &limit):
		return &httpapi.Error{Status: http.StatusConflict, Code: "seat_limit",
			Message: fmt.Sprintf("you already hold or bought %d seats; the limit is %d%s", limit.Already, limit.Limit, inPhase(limit.Phase)),
			Extra:   withPhase(map[string]any{"limit": limit.Limit, "alreadyHeld": limit.Already}, limit.Phase)}
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
