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

package config

import "time"

// Mail configures the ticket mail: one message per paid order, sent by the
// tickets service to the buyer's verified email address over SMTP.
type Mail struct {
	SMTPHost     string        `env:"TICKETFAIR_MAIL_SMTP_HOST" flag:"mail-smtp-host" usage:"SMTP server the ticket mails are sent to (empty: no mail; tickets stay on the order page)"`
	SMTPPort     int           `env:"TICKETFAIR_MAIL_SMTP_PORT" flag:"mail-smtp-port" default:"587" usage:"SMTP server port"`
	SMTPTLS      string        `env:"TICKETFAIR_MAIL_SMTP_TLS" flag:"mail-smtp-tls" default:"starttls" usage:"transport security to the SMTP server: starttls (required), tls (implicit, usually port 465) or none (loopback and tests only)"`
	SMTPUsername string        `env:"TICKETFAIR_MAIL_SMTP_USERNAME" flag:"mail-smtp-username" secret:"true" usage:"SMTP user (empty: no authentication)"`
	SMTPPassword string        `env:"TICKETFAIR_MAIL_SMTP_PASSWORD" flag:"mail-smtp-password" secret:"true" usage:"SMTP password"`
	From         string        `env:"TICKETFAIR_MAIL_FROM" flag:"mail-from" default:"tickets@ticketfair.invalid" usage:"From address of the ticket mails; its domain also names the Message-IDs"`
	Workers      int           `env:"TICKETFAIR_MAIL_WORKERS" flag:"mail-workers" default:"4" usage:"SMTP connections sending ticket mails in parallel"`
	RetryMin     time.Duration `env:"TICKETFAIR_MAIL_RETRY_MIN" flag:"mail-retry-min" default:"1s" usage:"first retry delay after a failed send (doubles, with jitter)"`
	RetryMax     time.Duration `env:"TICKETFAIR_MAIL_RETRY_MAX" flag:"mail-retry-max" default:"5m" usage:"longest retry delay after failed sends"`
}

// EventInfo is what a ticket says about its event.
type EventInfo struct {
	EventName string `env:"TICKETFAIR_EVENT_NAME" flag:"event-name" usage:"the event's name as printed on tickets and mails"`
	Venue     string `env:"TICKETFAIR_EVENT_VENUE" flag:"event-venue" usage:"the venue as printed on tickets and mails"`
	StartsAt  string `env:"TICKETFAIR_EVENT_STARTS_AT" flag:"event-starts-at" usage:"when the event starts (RFC 3339); doors open, transfers close before it"`
}

// Gate configures check-in at the doors and ticket transfer.
type Gate struct {
	GateSecret     string        `env:"TICKETFAIR_GATE_SECRET" flag:"gate-secret" secret:"true" usage:"key the gate devices' credentials are derived from (HMAC over event and gate name); empty disables check-in"`
	MaxTransfers   int           `env:"TICKETFAIR_TRANSFER_MAX" flag:"transfer-max" default:"3" usage:"how many times one ticket may change hands (0: no transfers)"`
	TransferCutoff time.Duration `env:"TICKETFAIR_TRANSFER_CUTOFF" flag:"transfer-cutoff" default:"2h" usage:"transfers close this long before the event starts"`
}
