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
