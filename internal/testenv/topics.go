package testenv

import (
	"context"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
)

// CreateTopics creates topics (3 partitions) on an existing cluster,
// accepting ones that already exist.
func CreateTopics(brokers []string, topics ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return kafkatopics.Create(ctx, config.Kafka{Brokers: brokers}, topics...)
}
