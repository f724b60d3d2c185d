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

// Package kafkatopics creates the Kafka topics of a sale: the one way the
// relay (--create-topics, the local sale), the embedded broker of the
// local sale and the tests create them. Production topics are provisioned
// by the cluster's owner.
package kafkatopics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/kafkaconn"
)

// Partitions is the partition count of the topics created here.
const Partitions = 3

// Create creates topics (Partitions partitions, one replica) on the
// brokers of cfg, with its TLS and SASL, accepting ones that already exist.
func Create(ctx context.Context, cfg config.Kafka, topics ...string) error {
	if len(topics) == 0 {
		return nil
	}
	transport, err := kafkaconn.Transport(cfg)
	if err != nil {
		return err
	}
	c := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second, Transport: transport}
	var req kafka.CreateTopicsRequest
	for _, t := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: t, NumPartitions: Partitions, ReplicationFactor: 1})
	}
	resp, err := c.CreateTopics(ctx, &req)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for t, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	return nil
}
