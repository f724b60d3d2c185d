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
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/ticketfair/ticketfair/workloads/internal/qrcode"
)

// qrSize is the QR codes' width in pixels: scannable from a phone screen
// at the door, small enough to keep a mail of many tickets light.
const qrSize = 320

// ticket is what a mail prints of one ticket.
type ticket struct {
	ID      string
	Seat    string
	Section string
	Price   string
	Code    string // the QR payload
	CID     string // Content-ID of its QR image
}

// job is one claimed mail with its tickets.
type job struct {
	Key       string
	Kind      Kind
	EventID   int64
	OrderID   string
	TicketIDs []string
	To        string
	Attempts  int
	Created   time.Time
	Tickets   []ticket
}

// view is what the templates see.
type view struct {
	Transfer bool
	Event    string
	Venue    string
	Starts   string // "" when the start is not configured
	OrderID  string
	Tickets  []ticket
}

var textBody = texttemplate.Must(texttemplate.New("text").Parse(
	`{{if .Transfer}}A ticket was passed on to you.{{else}}Thank you for your order{{if .OrderID}} {{.OrderID}}{{end}}.{{end}}

{{.Event}}
{{- if .Venue}}
{{.Venue}}{{end}}
{{- if .Starts}}
{{.Starts}}{{end}}

{{range $i, $t := .Tickets}}Ticket {{$t.ID}}: seat {{$t.Seat}}{{if $t.Section}}, section {{$t.Section}}{{end}}{{if $t.Price}}, {{$t.Price}}{{end}}
  Code: {{$t.Code}}
{{end}}
Show the QR code of each ticket at the door (the HTML version of this mail
shows them); the code above is what it holds.
`))

var htmlBody = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Event}}</title></head>
<body style="font-family: sans-serif">
<p>{{if .Transfer}}A ticket was passed on to you.{{else}}Thank you for your order{{if .OrderID}} {{.OrderID}}{{end}}.{{end}}</p>
<h1>{{.Event}}</h1>
<p>{{if .Venue}}{{.Venue}}<br>{{end}}{{if .Starts}}{{.Starts}}{{end}}</p>
{{range .Tickets}}<div style="margin: 1em 0">
<p>Ticket {{.ID}}: seat <b>{{.Seat}}</b>{{if .Section}}, section {{.Section}}{{end}}{{if .Price}}, {{.Price}}{{end}}</p>
<img src="cid:{{.CID}}" width="{{$.QRSize}}" height="{{$.QRSize}}" alt="QR code of ticket {{.ID}}">
</div>
{{end}}<p>Show the QR code of each ticket at the door.</p>
</body></html>
`))

// message builds the mail of j.
func (s *Sender) message(j *job) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(s.cfg.From); err != nil {
		return nil, fmt.Errorf("from %q: %w", s.cfg.From, err)
	}
	if err := m.To(j.To); err != nil {
		return nil, fmt.Errorf("to %q: %w", j.To, err)
	}
	event := s.info.EventName
	if event == "" {
		event = "Your event"
	}
	if j.Kind == KindTransfer {
		m.Subject("A ticket for " + event + " was passed on to you")
	} else {
		m.Subject("Your tickets for " + event)
	}
	// Set here, not generated: a resend after a crash keeps the Message-ID,
	// and mail clients show one message.
	m.SetMessageIDWithValue(j.Key + "@" + s.domain)
	m.SetDate()
	// No out-of-office replies to an address nobody reads.
	m.SetGenHeader("Auto-Submitted", "auto-generated")

	v := struct {
		view
		QRSize int
	}{view{Transfer: j.Kind == KindTransfer, Event: event, Venue: s.info.Venue, OrderID: j.OrderID}, qrSize}
	if !s.startsAt.IsZero() {
		v.Starts = s.startsAt.Format("Monday, 2 January 2006, 15:04 (UTC-07:00)")
	}
	for i, t := range j.Tickets {
		t.CID = fmt.Sprintf("ticket-%d.%s@%s", i+1, j.Key, s.domain)
		png, err := qrcode.PNG(t.Code, qrSize)
		if err != nil {
			return nil, fmt.Errorf("ticket %s: %w", t.ID, err)
		}
		if err := m.EmbedReader(fmt.Sprintf("ticket-%d.png", i+1), bytes.NewReader(png),
			gomail.WithFileContentID("<"+t.CID+">"), gomail.WithFileContentType("image/png")); err != nil {
			return nil, fmt.Errorf("ticket %s: %w", t.ID, err)
		}
		v.Tickets = append(v.Tickets, t)
	}
	var text, html strings.Builder
	if err := textBody.Execute(&text, v.view); err != nil {
		return nil, err
	}
	if err := htmlBody.Execute(&html, v); err != nil {
		return nil, err
	}
	m.SetBodyString(gomail.TypeTextPlain, text.String())
	m.AddAlternativeString(gomail.TypeTextHTML, html.String())

	if !s.startsAt.IsZero() {
		seats := make([]string, len(j.Tickets))
		for i, t := range j.Tickets {
			seats[i] = t.Seat
		}
		cal := ics(calendarEvent{
			UID:         j.Key + "@" + s.domain,
			Stamp:       j.Created,
			Start:       s.startsAt,
			Summary:     event,
			Location:    s.info.Venue,
			Description: fmt.Sprintf("%d ticket(s), seats %s", len(j.Tickets), strings.Join(seats, ", ")),
		})
		if err := m.AttachReader("event.ics", bytes.NewReader(cal),
			gomail.WithFileContentType("text/calendar; charset=utf-8; method=PUBLISH")); err != nil {
			return nil, err
		}
	}
	return m, nil
}
