package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A request the crowd gives up (its stop cancels the context) is not the
// service's failure: it is not recorded. A transport error is, with its text.
func TestAbandonedRequestNotRecorded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	a := &api{http: srv.Client(), queueURL: srv.URL, eventID: 1, rec: newRecorder()}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, ok := a.stats(ctx); ok {
		t.Fatal("a cancelled request answered")
	}
	if n := a.rec.requests(); n != 0 {
		t.Fatalf("a request the crowd gave up was recorded: %d requests, %+v", n, a.rec.snapshot())
	}

	dead := &api{http: srv.Client(), queueURL: "http://127.0.0.1:1", eventID: 1, rec: newRecorder()}
	dead.stats(context.Background())
	s := dead.rec.snapshot()
	if len(s) != 1 || s[0].ByStatus[0] != 1 || s[0].Errors != 1 || s[0].FirstError == "" {
		t.Fatalf("a refused connection is not recorded as a transport error with its text: %+v", s)
	}
}
