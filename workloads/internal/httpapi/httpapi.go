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

// Package httpapi holds what every ticketfair HTTP service shares: JSON
// bodies with a size limit, one error type mapped to an HTTP status in one
// place, the probes, request metrics, and the runtime every service runs
// in (Run: the server with its drain and graceful shutdown, and the
// background loops, in one errgroup).
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// MaxBodyBytes is the largest request body the services accept.
const MaxBodyBytes = 64 << 10

// Error is an error with an HTTP status, a stable machine code and a message
// meant for people. Extra is merged into the error body (e.g. unavailable seats).
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
	Extra      map[string]any
	Err        error // the cause, logged but not shown
	// Dependency names what was unavailable (Unavailable's what), for the
	// services' dependency error metrics.
	Dependency string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Common errors.
var (
	ErrNotFound = &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not found"}
	ErrTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes)}
)

// Unavailable wraps a dependency failure as 503 with Retry-After.
func Unavailable(what string, err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Message: what + " is unavailable, try again shortly", RetryAfter: 2 * time.Second, Err: err,
		Dependency: strings.ReplaceAll(strings.TrimPrefix(what, "the "), " ", "_")}
}

// DatabaseError turns a PostgreSQL error into a service's answer: errors
// that already are *Error pass through; a database that cannot be reached,
// is shutting down or restarting (SQLSTATE classes 08 and 57, too many
// connections) or a transaction that lost a race becomes 503 so clients
// retry; anything else stays an error (500).
func DatabaseError(err error) error {
	var he *Error
	if errors.As(err, &he) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code[:2] == "08", pe.Code[:2] == "57", pe.Code == "53300", pe.Code == "40001", pe.Code == "40P01":
			return Unavailable("the database", err)
		}
		return fmt.Errorf("database: %w", err)
	}
	if errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Connection refused, reset, timeouts: the database is unreachable.
	return Unavailable("the database", err)
}

// WriteError writes err as {"error": {"code": ..., "message": ...}}. Errors
// that are not *Error become 500 (or 503 for deadlines), with the cause logged
// and not shown.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			e = Unavailable("a dependency", err)
		default:
			e = &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error", Err: err}
		}
	}
	if e.Status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	body := map[string]any{"code": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	WriteJSON(w, e.Status, map[string]any{"error": body})
}

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DecodeJSON reads one JSON value of at most MaxBodyBytes into dst,
// rejecting unknown fields and trailing data.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := ReadBody(w, r)
	if err != nil {
		return err
	}
	return UnmarshalStrict(body, dst)
}

// ReadBody reads the raw body, at most MaxBodyBytes.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, ErrTooLarge
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: "bad_body", Message: "could not read request body", Err: err}
	}
	return body, nil
}

// UnmarshalStrict decodes body into dst, rejecting unknown fields and trailing data.
func UnmarshalStrict(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: "request body is not valid JSON: " + err.Error(), Err: err}
	}
	if dec.More() {
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: "request body has data after the JSON value"}
	}
	return nil
}

// HandlerFunc is an http handler that returns its error for WriteError.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		WriteError(w, r, err)
	}
}

// Serve runs handler on addr until ctx is cancelled, then shuts down
// gracefully, giving in-flight requests up to grace to finish. ready, when
// not nil, receives the bound address once listening.
func Serve(ctx context.Context, addr string, handler http.Handler, grace time.Duration, ready func(net.Addr)) error {
	return ServeDrain(ctx, addr, handler, 0, grace, ready)
}

// ServeDrain is Serve that, once ctx is cancelled, first keeps serving for
// drain with every response closing its connection, then shuts down. A
// stopping pod's endpoints leave kube-proxy a moment after SIGTERM, and its
// clients' keep-alive connections stay open: during the drain, new
// connections still get answers, and clients move to other pods without a
// request racing the close of an idle connection.
func ServeDrain(ctx context.Context, addr string, handler http.Handler, drain, grace time.Duration, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	var draining atomic.Bool
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if draining.Load() {
				w.Header().Set("Connection", "close")
			}
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if drain > 0 {
		draining.Store(true)
		select {
		case err := <-errc:
			return err
		case <-time.After(drain):
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
