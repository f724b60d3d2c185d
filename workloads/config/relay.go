package config

import "time"

// Relay configures `ticketfair relay`: outbox rows to Kafka.
type Relay struct {
	Server
	Postgres
	Kafka

	BatchSize    int           `env:"TICKETFAIR_RELAY_BATCH_SIZE" flag:"batch-size" default:"500" usage:"outbox rows claimed per batch"`
	PollInterval time.Duration `env:"TICKETFAIR_RELAY_POLL_INTERVAL" flag:"poll-interval" default:"500ms" usage:"fallback poll when no NOTIFY arrives"`
	Retention    time.Duration `env:"TICKETFAIR_RELAY_RETENTION" flag:"retention" default:"168h" usage:"how long published outbox rows are kept"`
	CreateTopics bool          `env:"TICKETFAIR_RELAY_CREATE_TOPICS" flag:"create-topics" usage:"create the topics at start (local sale only)"`
}

// Tickets configures `ticketfair tickets`: ticket issuance from ticket-issued.
type Tickets struct {
	Server
	Postgres
	Kafka
	Identity

	ConsumerGroup string `env:"TICKETFAIR_TICKETS_GROUP" flag:"group" default:"ticketfair-tickets" usage:"consumer group"`
	TicketKeys    string `env:"TICKETFAIR_TICKET_KEYS" flag:"ticket-keys" secret:"true" usage:"kid:base64seed,... Ed25519 keys signing ticket codes; the first signs"`
}
