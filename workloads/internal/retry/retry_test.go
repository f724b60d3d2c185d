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
