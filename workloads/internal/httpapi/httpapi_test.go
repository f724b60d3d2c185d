package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not JSON: %q", rec.Body.String())
	}
	return body.Error
}

func TestWriteErrorMapsStatusInOnePlace(t *testing.T) {
	cases := []struct {
		err        error
		status     int
		code       string
		retryAfter string
	}{
		{Errorf(http.StatusConflict, "seats_unavailable", "taken"), 409, "seats_unavailable", ""},
		{fmt.Errorf("wrapped: %w", ErrNotFound), 404, "not_found", ""},
		{Unavailable("redis", errors.New("dial")), 503, "unavailable", "2"},
		{context.DeadlineExceeded, 503, "unavailable", "2"},
		{errors.New("boom"), 500, "internal", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		WriteError(rec, httptest.NewRequest("GET", "/", nil), c.err)
		if rec.Code != c.status {
			t.Errorf("%v: status %d, want %d", c.err, rec.Code, c.status)
		}
		if got := decodeError(t, rec)["code"]; got != c.code {
			t.Errorf("%v: code %v, want %s", c.err, got, c.code)
		}
		if got := rec.Header().Get("Retry-After"); got != c.retryAfter {
			t.Errorf("%v: Retry-After %q, want %q", c.err, got, c.retryAfter)
		}
	}
	// The cause of a 500 is not shown.
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("GET", "/", nil), errors.New("secret detail"))
	if strings.Contains(rec.Body.String(), "secret detail") {
		t.Fatal("internal error leaked its cause")
	}
}

func TestDecodeJSON(t *testing.T) {
	type req struct {
		Seats []string `json:"seats"`
	}
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"seats":["A-1-1"]}`, 0},
		{`{"seats":`, 400},
		{`{"seat":["A"]}`, 400},
		{`{"seats":[]} {}`, 400},
		{`{"seats":["` + strings.Repeat("x", MaxBodyBytes) + `"]}`, 413},
	} {
		rec := httptest.NewRecorder()
		var dst req
		err := DecodeJSON(rec, httptest.NewRequest("POST", "/", strings.NewReader(c.body)), &dst)
		var he *Error
		switch {
		case c.status == 0 && err != nil:
			t.Errorf("%.20q: %v", c.body, err)
		case c.status != 0 && (!errors.As(err, &he) || he.Status != c.status):
			t.Errorf("%.20q: got %v, want status %d", c.body, err, c.status)
		}
	}
}
