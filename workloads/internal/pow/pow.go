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

// Package pow is the queue's proof-of-work gate: the queue hands a
// customer a short-lived challenge, signed with an HMAC key and bound to the
// event and the customer's identity subject, and the join carries a nonce
// such that SHA-256(challenge || nonce) starts with at least the challenge's
// difficulty in zero bits. Verifying is one HMAC and one SHA-256 over a
// hundred bytes: microseconds, no Redis. A solution costs the solver about
// 2^difficulty hashes.
package pow

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// MaxDifficulty bounds the difficulty of a challenge: 2^32 hashes are
// minutes in a browser, far past anything a sale should ask.
const MaxDifficulty = config.MaxPowDifficulty

// MaxNonceLen bounds a nonce: a solver counts, and a 64-bit counter in
// decimal is 20 characters.
const MaxNonceLen = 64

const (
	version = 1
	idLen   = 16
	macLen  = 16
	// payload: version | id | event id | expiry unix ms | difficulty.
	payloadLen = 1 + idLen + 8 + 8 + 1
	tokenLen   = payloadLen + macLen
)

// Errors of Verify. Every one is a refusal; callers answer 403.
var (
	ErrMalformed    = errors.New("pow: malformed challenge")
	ErrSignature    = errors.New("pow: challenge not issued for this event and identity")
	ErrExpired      = errors.New("pow: challenge expired")
	ErrBadNonce     = errors.New("pow: nonce is empty, too long or not printable ASCII")
	ErrInsufficient = errors.New("pow: the nonce does not solve the challenge")
)

// Challenge is an issued challenge.
type Challenge struct {
	Token      string // what the client hashes and sends back
	ID         string // random, hex: what makes a challenge single-use
	EventID    int64
	Difficulty int       // leading zero bits required
	ExpiresAt  time.Time // millisecond precision
}

// Keys sign and verify challenges: the first key signs, all verify, so a
// key can be rotated in without refusing challenges in flight.
type Keys struct {
	keys [][]byte
}

// ParseKeys reads a comma-separated list of base64 (standard or URL, padded
// or not) secrets of at least 16 bytes each.
func ParseKeys(s string) (*Keys, error) {
	var ks Keys
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := decodeKey(part)
		if err != nil {
			return nil, fmt.Errorf("pow: key %d: %w", len(ks.keys)+1, err)
		}
		if len(k) < 16 {
			return nil, fmt.Errorf("pow: key %d is %d bytes; at least 16 are needed", len(ks.keys)+1, len(k))
		}
		ks.keys = append(ks.keys, k)
	}
	if len(ks.keys) == 0 {
		return nil, errors.New("pow: no key (TICKETFAIR_POW_KEYS)")
	}
	return &ks, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// GenerateKey returns a new random key in the form ParseKeys reads.
func GenerateKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Issue returns a challenge of difficulty for subject at eventID, valid
// for ttl from now.
func (k *Keys) Issue(eventID int64, subject string, difficulty int, now time.Time, ttl time.Duration) (Challenge, error) {
	if difficulty < 0 || difficulty > MaxDifficulty {
		return Challenge{}, fmt.Errorf("pow: difficulty %d outside 0..%d", difficulty, MaxDifficulty)
	}
	var buf [tokenLen]byte
	buf[0] = version
	if _, err := rand.Read(buf[1 : 1+idLen]); err != nil {
		return Challenge{}, err
	}
	exp := now.Add(ttl).UnixMilli()
	binary.BigEndian.PutUint64(buf[1+idLen:], uint64(eventID))
	binary.BigEndian.PutUint64(buf[1+idLen+8:], uint64(exp))
	buf[payloadLen-1] = byte(difficulty)
	copy(buf[payloadLen:], mac(k.keys[0], buf[:payloadLen], subject))
	return Challenge{
		Token:      base64.RawURLEncoding.EncodeToString(buf[:]),
		ID:         hex.EncodeToString(buf[1 : 1+idLen]),
		EventID:    eventID,
		Difficulty: difficulty,
		ExpiresAt:  time.UnixMilli(exp),
	}, nil
}

// mac binds the payload to the subject without carrying the subject: the
// token says nothing about who it was issued to.
func mac(key, payload []byte, subject string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	h.Write([]byte(subject))
	return h.Sum(nil)[:macLen]
}

// Verify checks that token was issued by one of k for subject at eventID,
// has not expired at now, and that nonce solves it. It returns the
// challenge so the caller can make its ID single-use.
func (k *Keys) Verify(token, nonce string, eventID int64, subject string, now time.Time) (Challenge, error) {
	var buf [tokenLen]byte
	if base64.RawURLEncoding.DecodedLen(len(token)) != tokenLen {
		return Challenge{}, ErrMalformed
	}
	if n, err := base64.RawURLEncoding.Decode(buf[:], []byte(token)); err != nil || n != tokenLen || buf[0] != version {
		return Challenge{}, ErrMalformed
	}
	ok := false
	for _, key := range k.keys {
		if hmac.Equal(mac(key, buf[:payloadLen], subject), buf[payloadLen:]) {
			ok = true
			break
		}
	}
	if !ok || int64(binary.BigEndian.Uint64(buf[1+idLen:])) != eventID {
		return Challenge{}, ErrSignature
	}
	c := Challenge{
		Token:      token,
		ID:         hex.EncodeToString(buf[1 : 1+idLen]),
		EventID:    eventID,
		Difficulty: int(buf[payloadLen-1]),
		ExpiresAt:  time.UnixMilli(int64(binary.BigEndian.Uint64(buf[1+idLen+8:]))),
	}
	if !now.Before(c.ExpiresAt) {
		return c, ErrExpired
	}
	if !validNonce(nonce) {
		return c, ErrBadNonce
	}
	if LeadingZeroBits(token, nonce) < c.Difficulty {
		return c, ErrInsufficient
	}
	return c, nil
}

func validNonce(nonce string) bool {
	if nonce == "" || len(nonce) > MaxNonceLen {
		return false
	}
	for i := 0; i < len(nonce); i++ {
		if nonce[i] < 0x21 || nonce[i] > 0x7e {
			return false
		}
	}
	return true
}

// LeadingZeroBits is the number of leading zero bits of
// SHA-256(token || nonce), the bytes of the two strings concatenated.
func LeadingZeroBits(token, nonce string) int {
	h := sha256.New()
	h.Write([]byte(token))
	h.Write([]byte(nonce))
	var sum [sha256.Size]byte
	return zeroBits(h.Sum(sum[:0]))
}

func zeroBits(sum []byte) int {
	n := 0
	for i := 0; i+8 <= len(sum); i += 8 {
		w := binary.BigEndian.Uint64(sum[i:])
		if w != 0 {
			return n + bits.LeadingZeros64(w)
		}
		n += 64
	}
	return n
}
