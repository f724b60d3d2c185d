package qrcode

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/ticketfair/ticketfair/workloads/internal/qrcode/qrcodetest"
)

// TestPNGDecodes: what PNG renders, an independent decoder reads back.
func TestPNGDecodes(t *testing.T) {
	for _, text := range []string{
		"tf1.42.ord-0001.A-1-1.c2lnbmF0dXJl",
		strings.Repeat("x", 300),                  // a long signed code: a larger QR version
		"https://tickets.example/t/abc?x=1&y=<2>", // byte mode, symbols
	} {
		b, err := PNG(text, 256)
		if err != nil {
			t.Fatalf("PNG(%q): %v", text, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		if s := img.Bounds().Size(); s.X != 256 || s.Y != 256 {
			t.Errorf("size %v, want 256x256", s)
		}
		if got := qrcodetest.Decode(t, b); got != text {
			t.Errorf("decoded %q, want %q", got, text)
		}
	}
}

func TestPNGRejectsBadSize(t *testing.T) {
	if _, err := PNG("x", 0); err == nil {
		t.Fatal("size 0: no error")
	}
}
