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

// Relay configures `ticketfair relay`: outbox rows to Kafka.
type Relay struct {
	Server
	Postgres
	Kafka

	BatchSize     int           `env:"TICKETFAIR_RELAY_BATCH_SIZE" flag:"batch-size" default:"500" usage:"outbox rows claimed per batch"`
	PollInterval  time.Duration `env:"TICKETFAIR_RELAY_POLL_INTERVAL" flag:"poll-interval" default:"500ms" usage:"fallback poll when no NOTIFY arrives"`
	Retention     time.Duration `env:"TICKETFAIR_RELAY_RETENTION" flag:"retention" default:"168h" usage:"how long published outbox rows are kept"`
	CreateTopics  bool          `env:"TICKETFAIR_RELAY_CREATE_TOPICS" flag:"create-topics" usage:"create the topics at start (local sale only)"`
	PruneInterval time.Duration `env:"TICKETFAIR_RELAY_PRUNE_INTERVAL" flag:"prune-interval" default:"1m" usage:"how often published rows older than the retention are deleted"`
	BackoffMin    time.Duration `env:"TICKETFAIR_RELAY_BACKOFF_MIN" flag:"backoff-min" default:"100ms" usage:"first retry delay after a failed publish (doubles, with jitter)"`
	BackoffMax    time.Duration `env:"TICKETFAIR_RELAY_BACKOFF_MAX" flag:"backoff-max" default:"10s" usage:"longest retry delay after failed publishes"`
	LockRetry     time.Duration `env:"TICKETFAIR_RELAY_LOCK_RETRY" flag:"lock-retry" default:"2s" usage:"how often a standby replica tries to become the active relay"`
}

// Tickets configures `ticketfair tickets`: ticket issuance from ticket-issued.
type Tickets struct {
	Server
	Postgres
	Kafka
	Identity
	Mail
	EventInfo
	Gate

	ConsumerGroup string        `env:"TICKETFAIR_TICKETS_GROUP" flag:"group" default:"ticketfair-tickets" usage:"consumer group"`
	TicketKeys    string        `env:"TICKETFAIR_TICKET_KEYS" flag:"ticket-keys" secret:"true" usage:"kid:base64seed,... Ed25519 keys signing ticket codes; the first signs"`
	RetryBackoff  time.Duration `env:"TICKETFAIR_TICKETS_RETRY_BACKOFF" flag:"retry-backoff" default:"200ms" usage:"first retry delay when storing tickets fails (doubles, with jitter, up to 10s)"`
}
