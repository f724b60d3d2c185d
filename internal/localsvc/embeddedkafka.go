package localsvc

import (
	"context"
	"fmt"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Kafka is an in-process cluster that speaks the Kafka wire protocol.
type Kafka struct {
	Cluster *kfake.Cluster
	Brokers []string
}

// StartKafka starts an in-process Kafka-protocol cluster on loopback with
// the given topics created (3 partitions each). port 0 picks a free port;
// a non-empty dataDir keeps the log on disk so a restarted cluster on the
// same port and directory has the same data.
func StartKafka(port int, dataDir string, topics ...string) (*Kafka, error) {
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
	k := &Kafka{Cluster: c, Brokers: c.ListenAddrs()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := kafkatopics.Create(ctx, config.Kafka{Brokers: k.Brokers}, topics...); err != nil {
		c.Close()
		return nil, err
	}
	return k, nil
}

// Stop closes the cluster.
func (k *Kafka) Stop() {
	if k != nil && k.Cluster != nil {
		k.Cluster.Close()
	}
}
