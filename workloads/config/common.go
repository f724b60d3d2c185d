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

// Redis is a Redis connection: a single server, a master found through
// Sentinel, or a Cluster (package workloads/redisconn builds the client).
type Redis struct {
	RedisURL              string `env:"TICKETFAIR_REDIS_URL" flag:"redis-url" default:"redis://127.0.0.1:6379/0" secret:"true" usage:"Redis URL redis[s]://[user:password@]host:port[/db][?addr=host:port&addr=...]: the server (standalone), the sentinels (sentinel) or seed nodes (cluster); rediss:// turns TLS on"`
	RedisMode             string `env:"TICKETFAIR_REDIS_MODE" flag:"redis-mode" default:"standalone" usage:"standalone, sentinel or cluster"`
	RedisMasterName       string `env:"TICKETFAIR_REDIS_MASTER_NAME" flag:"redis-master-name" usage:"sentinel mode: name of the master the sentinels monitor"`
	RedisUsername         string `env:"TICKETFAIR_REDIS_USERNAME" flag:"redis-username" secret:"true" usage:"ACL user (instead of the URL's)"`
	RedisPassword         string `env:"TICKETFAIR_REDIS_PASSWORD" flag:"redis-password" secret:"true" usage:"password or AUTH token (instead of the URL's)"`
	RedisSentinelUsername string `env:"TICKETFAIR_REDIS_SENTINEL_USERNAME" flag:"redis-sentinel-username" secret:"true" usage:"sentinel mode: ACL user of the sentinels"`
	RedisSentinelPassword string `env:"TICKETFAIR_REDIS_SENTINEL_PASSWORD" flag:"redis-sentinel-password" secret:"true" usage:"sentinel mode: password of the sentinels (empty: they need none)"`
	RedisTLS              bool   `env:"TICKETFAIR_REDIS_TLS" flag:"redis-tls" usage:"connect with TLS (also implied by a rediss:// URL)"`
	RedisTLSCA            string `env:"TICKETFAIR_REDIS_TLS_CA" flag:"redis-tls-ca" secret:"true" usage:"PEM CA certificates that sign the servers' certificates (empty: the system's)"`
	RedisTLSCert          string `env:"TICKETFAIR_REDIS_TLS_CERT" flag:"redis-tls-cert" secret:"true" usage:"PEM client certificate, for servers that require one"`
	RedisTLSKey           string `env:"TICKETFAIR_REDIS_TLS_KEY" flag:"redis-tls-key" secret:"true" usage:"PEM private key of the client certificate"`
	RedisTLSServerName    string `env:"TICKETFAIR_REDIS_TLS_SERVER_NAME" flag:"redis-tls-server-name" usage:"name the servers' certificates must carry (default: the host dialed)"`
}

// Postgres is a PostgreSQL connection (package workloads/internal/database
// builds the pool).
type Postgres struct {
	DatabaseURL   string `env:"TICKETFAIR_DATABASE_URL" flag:"database-url" default:"postgres://postgres@127.0.0.1:5432/ticketfair?sslmode=disable" secret:"true" usage:"PostgreSQL URL (may carry a password); several hosts with target_session_attrs=read-write follow a failover"`
	DatabaseTLSCA string `env:"TICKETFAIR_DATABASE_TLS_CA" flag:"database-tls-ca" secret:"true" usage:"PEM CA certificates of the server (with sslmode=verify-full in the URL)"`
}

// Kafka is a Kafka connection and the topics ticketfair uses.
type Kafka struct {
	Brokers              []string `env:"TICKETFAIR_KAFKA_BROKERS" flag:"kafka-brokers" default:"127.0.0.1:9092" usage:"comma-separated Kafka bootstrap brokers"`
	KafkaTLS             bool     `env:"TICKETFAIR_KAFKA_TLS" flag:"kafka-tls" usage:"connect to the brokers with TLS"`
	KafkaTLSCA           string   `env:"TICKETFAIR_KAFKA_TLS_CA" flag:"kafka-tls-ca" secret:"true" usage:"PEM CA certificates of the brokers (empty: the system's)"`
	KafkaTLSCert         string   `env:"TICKETFAIR_KAFKA_TLS_CERT" flag:"kafka-tls-cert" secret:"true" usage:"PEM client certificate, for brokers that require one"`
	KafkaTLSKey          string   `env:"TICKETFAIR_KAFKA_TLS_KEY" flag:"kafka-tls-key" secret:"true" usage:"PEM private key of the client certificate"`
	KafkaTLSServerName   string   `env:"TICKETFAIR_KAFKA_TLS_SERVER_NAME" flag:"kafka-tls-server-name" usage:"name the brokers' certificates must carry (default: the host dialed)"`
	KafkaSASLMechanism   string   `env:"TICKETFAIR_KAFKA_SASL_MECHANISM" flag:"kafka-sasl-mechanism" usage:"SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: none)"`
	KafkaUsername        string   `env:"TICKETFAIR_KAFKA_USERNAME" flag:"kafka-username" secret:"true" usage:"SASL user"`
	KafkaPassword        string   `env:"TICKETFAIR_KAFKA_PASSWORD" flag:"kafka-password" secret:"true" usage:"SASL password"`
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
	TierClaim          string `env:"TICKETFAIR_IDENTITY_TIER_CLAIM" flag:"identity-tier-claim" default:"tier" usage:"claim of identity tokens read as the customer's tier (e.g. member), for presale phases"`
	EmailClaim         string `env:"TICKETFAIR_IDENTITY_EMAIL_CLAIM" flag:"identity-email-claim" default:"email" usage:"claim of identity tokens read as the customer's email address, where the tickets are mailed (ignored when email_verified is false)"`
}

// AccessTokens holds the keys that sign access tokens (queue) and the JWKS
// they are verified with (booking).
type AccessTokens struct {
	AccessTokenKeys string `env:"TICKETFAIR_ACCESS_TOKEN_KEYS" flag:"access-token-keys" secret:"true" usage:"kid:base64seed,... Ed25519 keys; the first signs, all verify"`
}
