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

package kafkatopics_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
)

// TestCreate: on Apache Kafka, topics get Partitions partitions, and
// creating them again is no error.
func TestCreate(t *testing.T) {
	cfg := config.Kafka{Brokers: testenv.KafkaBrokers(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		if err := kafkatopics.Create(ctx, cfg, "a", "b"); err != nil {
			t.Fatal(err)
		}
	}
	if err := kafkatopics.Create(ctx, cfg); err != nil {
		t.Fatalf("no topics: %v", err)
	}
	md, err := (&kafka.Client{Addr: kafka.TCP(cfg.Brokers...)}).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 2 {
		t.Fatalf("topics %+v", md.Topics)
	}
	for _, tp := range md.Topics {
		if tp.Error != nil || len(tp.Partitions) != kafkatopics.Partitions {
			t.Fatalf("topic %s: %d partitions, %v", tp.Name, len(tp.Partitions), tp.Error)
		}
	}
}
