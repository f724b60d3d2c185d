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

package queue

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
)

// A queueId is base64url(version | eventId | score | generation | mac)
// where mac is the first 16 bytes of HMAC-SHA256 over the rest and the
// customer id. It is opaque and unforgeable, carries the place (so a poll
// needs no Redis) and the generation of the queue that gave it (so a place
// a restarted Redis no longer has is known lost), and is bound to the
// customer: another customer's queueId fails the MAC and reads as not found.
const (
	queueIDVersion = 2
	queueIDPayload = 1 + 8 + 8 + 8
	queueIDMAC     = 16
	queueIDLen     = queueIDPayload + queueIDMAC
	// Version 1 had no generation: still accepted, as of generation 0
	// (unknown), so places given before an upgrade are not lost by it.
	queueIDV1Payload = 1 + 8 + 8
)

var errBadQueueID = errors.New("bad queue id")

// queueIDCodec signs with the first key and accepts all (key rotation).
type queueIDCodec struct {
	keys [][]byte
}

// newQueueIDCodec derives the MAC keys from the access-token keys every
// queue pod already shares, so no extra secret has to be distributed.
func newQueueIDCodec(accessTokenKeys string) (*queueIDCodec, error) {
	if _, err := accesstoken.ParseKeys(accessTokenKeys); err != nil {
		return nil, err
	}
	var c queueIDCodec
	for _, part := range strings.Split(accessTokenKeys, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		_, b64, _ := strings.Cut(part, ":")
		seed, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			if seed, err = base64.RawURLEncoding.DecodeString(b64); err != nil {
				return nil, err
			}
		}
		m := hmac.New(sha256.New, seed)
		m.Write([]byte("ticketfair/queue-id/v1"))
		c.keys = append(c.keys, m.Sum(nil))
	}
	return &c, nil
}

func (c *queueIDCodec) mac(key, payload []byte, customer string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	m.Write([]byte{0})
	m.Write([]byte(customer))
	return m.Sum(nil)[:queueIDMAC]
}

// encode returns the queueId of customer's place score in event, given by
// the queue of generation gen.
func (c *queueIDCodec) encode(eventID int64, customer string, score int64, gen uint64) string {
	var b [queueIDLen]byte
	b[0] = queueIDVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(eventID))
	binary.BigEndian.PutUint64(b[9:17], uint64(score))
	binary.BigEndian.PutUint64(b[17:25], gen)
	copy(b[queueIDPayload:], c.mac(c.keys[0], b[:queueIDPayload], customer))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// decode verifies id for customer and event and returns the place's score
// and generation.
func (c *queueIDCodec) decode(id string, eventID int64, customer string) (int64, uint64, error) {
	payload := queueIDPayload
	switch len(id) {
	case base64.RawURLEncoding.EncodedLen(queueIDLen):
	case base64.RawURLEncoding.EncodedLen(queueIDV1Payload + queueIDMAC):
		payload = queueIDV1Payload
	default:
		return 0, 0, errBadQueueID
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	if err != nil || len(b) != payload+queueIDMAC || (b[0] != queueIDVersion && payload == queueIDPayload) || (b[0] != 1 && payload == queueIDV1Payload) {
		return 0, 0, errBadQueueID
	}
	ok := false
	for _, k := range c.keys {
		if hmac.Equal(b[payload:], c.mac(k, b[:payload], customer)) {
			ok = true
			break
		}
	}
	if !ok || int64(binary.BigEndian.Uint64(b[1:9])) != eventID {
		return 0, 0, errBadQueueID
	}
	score := int64(binary.BigEndian.Uint64(b[9:17]))
	if score < 0 {
		return 0, 0, errBadQueueID
	}
	if payload == queueIDV1Payload {
		return score, 0, nil
	}
	return score, binary.BigEndian.Uint64(b[17:25]), nil
}

// queueIDNamedVersion is a queueId of a place in a queue other than
// DefaultQueue: version 2's fields, then the queue's name, then the MAC.
const queueIDNamedVersion = 3

// encodeIn is encode for a place in queue: DefaultQueue's places keep
// version 2, others name their queue (version 3).
func (c *queueIDCodec) encodeIn(eventID int64, customer string, score int64, gen uint64, queue string) string {
	if queue == "" || queue == DefaultQueue {
		return c.encode(eventID, customer, score, gen)
	}
	b := make([]byte, queueIDPayload, queueIDPayload+len(queue)+queueIDMAC)
	b[0] = queueIDNamedVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(eventID))
	binary.BigEndian.PutUint64(b[9:17], uint64(score))
	binary.BigEndian.PutUint64(b[17:25], gen)
	b = append(b, queue...)
	b = append(b, c.mac(c.keys[0], b, customer)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeIn is decode that also returns the place's queue.
func (c *queueIDCodec) decodeIn(id string, eventID int64, customer string) (int64, uint64, string, error) {
	if len(id) <= base64.RawURLEncoding.EncodedLen(queueIDLen) {
		s, g, err := c.decode(id, eventID, customer)
		return s, g, DefaultQueue, err
	}
	if len(id) > base64.RawURLEncoding.EncodedLen(queueIDLen+32) {
		return 0, 0, "", errBadQueueID
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	if err != nil || len(b) <= queueIDLen || b[0] != queueIDNamedVersion {
		return 0, 0, "", errBadQueueID
	}
	body := b[:len(b)-queueIDMAC]
	ok := false
	for _, k := range c.keys {
		if hmac.Equal(b[len(body):], c.mac(k, body, customer)) {
			ok = true
			break
		}
	}
	score := int64(binary.BigEndian.Uint64(b[9:17]))
	if !ok || int64(binary.BigEndian.Uint64(b[1:9])) != eventID || score < 0 {
		return 0, 0, "", errBadQueueID
	}
	return score, binary.BigEndian.Uint64(b[17:25]), string(body[queueIDPayload:]), nil
}
