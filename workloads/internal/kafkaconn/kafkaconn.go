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

// Package kafkaconn builds the relay's and the tickets consumer's Kafka
// connections from config.Kafka: plain, TLS (a CA, a client certificate)
// and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), as managed Kafka offers
// them.
package kafkaconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/tlsconf"
)

// checkTimeout bounds the start-up check: a broker that never answers, or
// answers a TLS client in plain text, is an error, not a hang.
const checkTimeout = 10 * time.Second

// Security returns the TLS configuration (nil: plain TCP) and the SASL
// mechanism (nil: none) of cfg.
func Security(cfg config.Kafka) (*tls.Config, sasl.Mechanism, error) {
	var t *tls.Config
	if cfg.KafkaTLS {
		var err error
		if t, err = tlsconf.Client(cfg.KafkaTLSCA, cfg.KafkaTLSCert, cfg.KafkaTLSKey, cfg.KafkaTLSServerName); err != nil {
			return nil, nil, fmt.Errorf("kafka: %w", err)
		}
	} else if cfg.KafkaTLSCA != "" || cfg.KafkaTLSCert != "" || cfg.KafkaTLSKey != "" || cfg.KafkaTLSServerName != "" {
		return nil, nil, errors.New("kafka: TLS settings are given but TLS is off (TICKETFAIR_KAFKA_TLS=true)")
	}
	var m sasl.Mechanism
	switch cfg.KafkaSASLMechanism {
	case "":
		if cfg.KafkaUsername != "" || cfg.KafkaPassword != "" {
			return nil, nil, errors.New("kafka: a SASL user is given without TICKETFAIR_KAFKA_SASL_MECHANISM")
		}
		return t, nil, nil
	case "PLAIN":
		m = plain.Mechanism{Username: cfg.KafkaUsername, Password: cfg.KafkaPassword}
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		algo := scram.SHA256
		if cfg.KafkaSASLMechanism == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		var err error
		if m, err = scram.Mechanism(algo, cfg.KafkaUsername, cfg.KafkaPassword); err != nil {
			return nil, nil, fmt.Errorf("kafka: SCRAM: %w", err)
		}
	default:
		return nil, nil, fmt.Errorf("kafka: unknown SASL mechanism %q (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", cfg.KafkaSASLMechanism)
	}
	if cfg.KafkaUsername == "" {
		return nil, nil, errors.New("kafka: SASL needs a user (TICKETFAIR_KAFKA_USERNAME)")
	}
	return t, m, nil
}

// Transport is the connection of writers and admin clients.
func Transport(cfg config.Kafka) (*kafka.Transport, error) {
	t, m, err := Security(cfg)
	if err != nil {
		return nil, err
	}
	return &kafka.Transport{TLS: t, SASL: m, DialTimeout: 5 * time.Second}, nil
}

// Dialer is the connection of readers.
func Dialer(cfg config.Kafka) (*kafka.Dialer, error) {
	t, m, err := Security(cfg)
	if err != nil {
		return nil, err
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: t, SASLMechanism: m}, nil
}

// Check connects to the bootstrap brokers and authenticates, so a wrong
// password or CA stops a process at start-up with the broker's answer
// instead of leaving it retrying in silence. The first broker that
// accepts is enough.
func Check(ctx context.Context, cfg config.Kafka) error {
	d, err := Dialer(cfg)
	if err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("kafka: no brokers")
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	var errs []error
	for _, b := range cfg.Brokers {
		conn, err := d.DialContext(ctx, "tcp", b)
		if err == nil {
			// A request after the handshake: some brokers only then refuse.
			_, err = conn.ApiVersions()
			conn.Close()
		}
		if err == nil {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("%w (a TLS broker reached without TICKETFAIR_KAFKA_TLS, or the reverse, looks like this)", err)
		}
		errs = append(errs, fmt.Errorf("%s: %w", b, err))
	}
	return fmt.Errorf("kafka: cannot connect and authenticate: %w", errors.Join(errs...))
}
