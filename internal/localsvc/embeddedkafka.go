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

package localsvc

import (
	"context"
	"fmt"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedKafka is an in-process imitation of a Kafka cluster (kfake) that
// speaks the wire protocol: the default broker of `make demo`, which needs
// no Java. Tests use Apache Kafka (apachekafka.go).
type EmbeddedKafka struct {
	Cluster *kfake.Cluster
	Brokers []string
}

// StartEmbeddedKafka starts an in-process Kafka-protocol cluster on loopback with
// the given topics created (3 partitions each). port 0 picks a free port;
// a non-empty dataDir keeps the log on disk so a restarted cluster on the
// same port and directory has the same data.
func StartEmbeddedKafka(port int, dataDir string, topics ...string) (*EmbeddedKafka, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(3)}
	if port != 0 {
		opts = append(opts, kfake.Ports(port))
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kafka-protocol cluster: %w", err)
	}
	k := &EmbeddedKafka{Cluster: c, Brokers: c.ListenAddrs()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := kafkatopics.Create(ctx, config.Kafka{Brokers: k.Brokers}, topics...); err != nil {
		c.Close()
		return nil, err
	}
	return k, nil
}

// Stop closes the cluster.
func (k *EmbeddedKafka) Stop() {
	if k != nil && k.Cluster != nil {
		k.Cluster.Close()
	}
}
