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
