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

// Package qrcode renders the QR codes printed on tickets and embedded in
// ticket mails. The payload is the ticket's signed code, which a gate
// verifies offline.
package qrcode

import (
	"fmt"

	qr "github.com/skip2/go-qrcode"
)

// PNG renders text as a size×size pixel PNG QR code with medium error
// correction (a phone screen with a crack or glare still scans) and the
// standard quiet zone around it, which scanners need to find the code.
// Ticket codes are ASCII: beyond it, readers guess the byte encoding, as
// the code carries no ECI designator.
func PNG(text string, size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("qrcode: size %d, want > 0", size)
	}
	q, err := qr.New(text, qr.Medium)
	if err != nil {
		return nil, fmt.Errorf("qrcode: %w", err)
	}
	q.DisableBorder = false
	b, err := q.PNG(size)
	if err != nil {
		return nil, fmt.Errorf("qrcode: %w", err)
	}
	return b, nil
}
