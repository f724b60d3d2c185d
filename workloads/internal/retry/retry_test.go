package retry

import (
	"context"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	lo, hi := 100*time.Millisecond, time.Second
	for attempt, ceiling := range []time.Duration{lo, 2 * lo, 4 * lo, 8 * lo, hi, hi, hi} {
		for range 200 {
			if d := Backoff(attempt, lo, hi); d < lo || d > ceiling {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, lo, ceiling)
			}
		}
	}
	if d := Backoff(3, time.Second, time.Millisecond); d != time.Second {
		t.Fatalf("hi below lo: %v, want lo", d)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("cancelled sleep: %v", err)
	}
}
