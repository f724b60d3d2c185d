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

package ticketmail

import (
	"strings"
	"time"
	"unicode/utf8"
)

// calendarEvent is the one event of a ticket mail's .ics attachment.
type calendarEvent struct {
	UID         string
	Stamp       time.Time // when the entry was made (the mail's enqueueing)
	Start       time.Time
	Summary     string
	Location    string
	Description string
}

// ics renders ev as an iCalendar (RFC 5545) object: CRLF line endings,
// UTC times, escaped text, lines folded at 75 octets.
func ics(ev calendarEvent) []byte {
	var b strings.Builder
	line := func(name, value string) { fold(&b, name+":"+value) }
	line("BEGIN", "VCALENDAR")
	line("VERSION", "2.0")
	line("PRODID", "-//ticketfair//tickets//EN")
	line("CALSCALE", "GREGORIAN")
	line("METHOD", "PUBLISH")
	line("BEGIN", "VEVENT")
	line("UID", escapeText(ev.UID))
	line("DTSTAMP", icsTime(ev.Stamp))
	line("DTSTART", icsTime(ev.Start))
	line("SUMMARY", escapeText(ev.Summary))
	if ev.Location != "" {
		line("LOCATION", escapeText(ev.Location))
	}
	if ev.Description != "" {
		line("DESCRIPTION", escapeText(ev.Description))
	}
	line("END", "VEVENT")
	line("END", "VCALENDAR")
	return []byte(b.String())
}

func icsTime(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// escapeText escapes a TEXT value (RFC 5545, 3.3.11).
var textEscaper = strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`)

func escapeText(s string) string { return textEscaper.Replace(s) }

// fold writes a content line, folded so that no line exceeds 75 octets
// without splitting a UTF-8 sequence (RFC 5545, 3.1).
func fold(b *strings.Builder, s string) {
	const max = 75
	limit := max
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		b.WriteString(s[:cut])
		b.WriteString("\r\n ")
		s = s[cut:]
		limit = max - 1 // the continuation's leading space counts
	}
	b.WriteString(s)
	b.WriteString("\r\n")
}
