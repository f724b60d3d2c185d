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

// Package keyspace names the Redis keyspace of a sale: every key of event N
// starts with Prefix(N) = "tf:{N}:". The hash tag {N} keeps all of them in
// one Redis Cluster slot, so the queue's Lua scripts touch a single slot.
//
// It is public (not under internal/) so the operator can delete an event's
// keys when its TicketEvent is deleted without copying the prefix; the
// workloads name their keys through it (internal/zone.Prefix).
package keyspace

import (
	"strconv"
	"strings"
)

// Prefix returns the key prefix of an event: "tf:{42}:".
func Prefix(eventID int64) string { return "tf:{" + strconv.FormatInt(eventID, 10) + "}:" }

// Pattern returns the SCAN MATCH pattern of exactly the keys that start with
// Prefix(eventID): the prefix with glob characters escaped, then "*".
// "tf:{42}:*" does not match "tf:{421}:queue", because the closing brace and
// the colon are part of the prefix.
func Pattern(eventID int64) string { return escapeGlob(Prefix(eventID)) + "*" }

// escapeGlob backslash-escapes the characters Redis glob matching treats
// specially: * ? [ and \ (with [ escaped no bracket class opens, so ] ^ -
// are literal). { } and : are literal anyway; a prefix holds none of the
// special ones today, this keeps Pattern right if that changes.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
