package demo

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintQueues(t *testing.T) {
	var b bytes.Buffer
	printQueues(&b, nil)
	if b.Len() != 0 {
		t.Fatalf("a sale without phases printed %q", b.String())
	}
	printQueues(&b, map[string]int{"": 25, "members": 75})
	want := "queue general\t25 admitted, 25.0% of admissions\nqueue members\t75 admitted, 75.0% of admissions\n"
	if got := b.String(); got != want || strings.Count(got, "\n") != 2 {
		t.Fatalf("got %q, want %q", got, want)
	}
}
