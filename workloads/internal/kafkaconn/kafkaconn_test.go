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

package kafkaconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/kafkaconn"
	"github.com/ticketfair/ticketfair/workloads/internal/relay"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

const topic = "ticket-issued"

// secureCluster is an Apache Kafka broker whose client listener speaks
// only TLS and accepts only SASL users of each mechanism (PLAIN from the
// listener's JAAS config, SCRAM users created when its storage is
// formatted).
func secureCluster(t *testing.T) (config.Kafka, testenv.Certs) {
	t.Helper()
	certs := testenv.NewCerts(t)
	k := testenv.ApacheKafka(t, localsvc.ApacheKafkaConfig{
		Topics:  []string{topic},
		CertPEM: certs.ServerCert, KeyPEM: certs.ServerKey,
		SCRAMUsers: []localsvc.KafkaSCRAMUser{
			{Mechanism: "SCRAM-SHA-256", Name: "scram256-user", Password: "scram256-pass"},
			{Mechanism: "SCRAM-SHA-512", Name: "scram512-user", Password: "scram512-pass"},
		},
		Settings: []string{
			"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			`listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_plain-user="plain-pass";`,
			`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_plain-user="plain-pass";`,
		},
	})
	var cfg config.Kafka
	_ = config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &cfg)
	cfg.Brokers = k.SASLTLSBrokers
	cfg.KafkaTLS, cfg.KafkaTLSCA = true, certs.CA
	return cfg, certs
}

func TestTLSAndSASL(t *testing.T) {
	base, _ := secureCluster(t)
	for _, mech := range []struct{ name, user, pass string }{
		{"PLAIN", "plain-user", "plain-pass"},
		{"SCRAM-SHA-256", "scram256-user", "scram256-pass"},
		{"SCRAM-SHA-512", "scram512-user", "scram512-pass"},
	} {
		t.Run(mech.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := base
			cfg.KafkaSASLMechanism, cfg.KafkaUsername, cfg.KafkaPassword = mech.name, mech.user, mech.pass
			if err := kafkaconn.Check(ctx, cfg); err != nil {
				t.Fatalf("check: %v", err)
			}
			tr, err := kafkaconn.Transport(cfg)
			if err != nil {
				t.Fatal(err)
			}
			w := &kafka.Writer{Addr: kafka.TCP(cfg.Brokers...), Topic: topic, Transport: tr, Balancer: &kafka.Hash{},
				RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
			defer w.Close()
			key := "order-" + mech.name
			if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(key), Value: []byte("paid")}); err != nil {
				t.Fatalf("write: %v", err)
			}
			d, err := kafkaconn.Dialer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: cfg.Brokers, Dialer: d, GroupID: "g" + mech.name, Topic: topic,
				StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond})
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if string(m.Key) == key {
					break
				}
			}
		})
	}
}

// TestWrongCredentialsFailAtStart: a wrong password, a missing CA or TLS
// turned off make the relay and the tickets service stop at start-up with
// the reason, within seconds.
func TestWrongCredentialsFailAtStart(t *testing.T) {
	base, _ := secureCluster(t)
	base.KafkaSASLMechanism, base.KafkaUsername, base.KafkaPassword = "SCRAM-SHA-512", "scram512-user", "scram512-pass"
	for name, change := range map[string]func(*config.Kafka){
		"wrong password": func(c *config.Kafka) { c.KafkaPassword = "wrong" },
		"unknown user":   func(c *config.Kafka) { c.KafkaUsername = "nobody" },
		"wrong mechanism": func(c *config.Kafka) {
			c.KafkaSASLMechanism, c.KafkaUsername, c.KafkaPassword = "PLAIN", "scram512-user", "scram512-pass"
		},
		"system CAs": func(c *config.Kafka) { c.KafkaTLSCA = "" },
		"no TLS":     func(c *config.Kafka) { c.KafkaTLS, c.KafkaTLSCA = false, "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := base
			change(&cfg)
			for svc, run := range map[string]func(ctx context.Context) error{
				"relay": func(ctx context.Context) error {
					var rc config.Relay
					_ = config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &rc)
					rc.Kafka, rc.HTTPAddr = cfg, "127.0.0.1:0"
					return relay.Run(ctx, rc, nil)
				},
				"tickets": func(ctx context.Context) error {
					var tc config.Tickets
					_ = config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &tc)
					tc.Kafka, tc.HTTPAddr = cfg, "127.0.0.1:0"
					return tickets.Run(ctx, tc, nil)
				},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				start := time.Now()
				err := run(ctx)
				hung := ctx.Err() != nil
				cancel()
				if err == nil || hung {
					t.Fatalf("%s started (or hung for 30s): %v", svc, err)
				}
				if d := time.Since(start); d > 12*time.Second {
					t.Errorf("%s failed only after %v", svc, d)
				}
				if strings.Contains(err.Error(), cfg.KafkaPassword) && cfg.KafkaPassword != "" {
					t.Errorf("%s: the error quotes the password: %v", svc, err)
				}
				if !strings.Contains(err.Error(), "kafka") {
					t.Errorf("%s: the error does not say it is Kafka: %v", svc, err)
				}
				t.Logf("%s: %v (%v)", svc, err, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}
