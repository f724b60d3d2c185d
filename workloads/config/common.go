package config

import "time"

// Server is what every HTTP workload shares.
type Server struct {
	HTTPAddr      string        `env:"TICKETFAIR_HTTP_ADDR" flag:"http-addr" default:":8080" usage:"address the HTTP API, probes and /metrics listen on"`
	ShutdownGrace time.Duration `env:"TICKETFAIR_SHUTDOWN_GRACE" flag:"shutdown-grace" default:"10s" usage:"time in-flight requests get to finish on SIGTERM"`
	DrainDelay    time.Duration `env:"TICKETFAIR_DRAIN_DELAY" flag:"drain-delay" default:"0s" usage:"on SIGTERM, keep serving this long (closing each connection after its response) before shutting down; a pod needs it while its endpoints leave the Service"`
}

// Event names the sale a workload serves.
type Event struct {
	EventID int64 `env:"TICKETFAIR_EVENT_ID" flag:"event-id" usage:"numeric id of the event this workload serves"`
}

// Redis is a Redis connection.
type Redis struct {
	RedisURL string `env:"TICKETFAIR_REDIS_URL" flag:"redis-url" default:"redis://127.0.0.1:6379/0" secret:"true" usage:"Redis URL (may carry a password)"`
}

// Postgres is a PostgreSQL connection.
type Postgres struct {
	DatabaseURL string `env:"TICKETFAIR_DATABASE_URL" flag:"database-url" default:"postgres://postgres@127.0.0.1:5432/ticketfair?sslmode=disable" secret:"true" usage:"PostgreSQL URL (may carry a password)"`
}

// Kafka is a Kafka connection and the topics ticketfair uses.
type Kafka struct {
	Brokers              []string `env:"TICKETFAIR_KAFKA_BROKERS" flag:"kafka-brokers" default:"127.0.0.1:9092" usage:"comma-separated Kafka bootstrap brokers"`
	TopicTicketIssued    string   `env:"TICKETFAIR_TOPIC_TICKET_ISSUED" flag:"topic-ticket-issued" default:"ticket-issued" usage:"topic of paid orders"`
	TopicRefundRequested string   `env:"TICKETFAIR_TOPIC_REFUND_REQUESTED" flag:"topic-refund-requested" default:"refund-requested" usage:"topic of refunds to make"`
}

// Identity says how customers' identity tokens (Authorization: Bearer JWT,
// sub = customer id) are verified: an HS256 shared secret, or public keys
// from a JWKS URL. Issuer and audience are always checked.
type Identity struct {
	IdentityHMACSecret string `env:"TICKETFAIR_IDENTITY_HMAC_SECRET" flag:"identity-hmac-secret" secret:"true" usage:"HS256 secret of customers' identity tokens"`
	IdentityJWKSURL    string `env:"TICKETFAIR_IDENTITY_JWKS_URL" flag:"identity-jwks-url" usage:"JWKS URL of the identity provider (instead of the HMAC secret)"`
	IdentityIssuer     string `env:"TICKETFAIR_IDENTITY_ISSUER" flag:"identity-issuer" default:"ticketfair-identity" usage:"required iss of identity tokens"`
	IdentityAudience   string `env:"TICKETFAIR_IDENTITY_AUDIENCE" flag:"identity-audience" default:"ticketfair" usage:"required aud of identity tokens"`
}

// AccessTokens holds the keys that sign access tokens (queue) and the JWKS
// they are verified with (booking).
type AccessTokens struct {
	AccessTokenKeys string `env:"TICKETFAIR_ACCESS_TOKEN_KEYS" flag:"access-token-keys" secret:"true" usage:"kid:base64seed,... Ed25519 keys; the first signs, all verify"`
}
