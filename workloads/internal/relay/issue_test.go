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

package relay

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = itoa(id)
	}
	return strings.Join(s, ",")
}

var messagesMetric = regexp.MustCompile(`ticketfair_tickets_messages_total\{result="(\w+)"\} (\d+)`)

// issueTickets runs the tickets service over the topic and checks that the
// orders (two seats each) got exactly one ticket per seat although the
// topic holds `messages` messages, duplicates included.
func issueTickets(t *testing.T, url string, brokers []string, orders, messages int) {
	t.Helper()
	key, err := accesstoken.GenerateKey("t1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Tickets{
		Server:        config.Server{HTTPAddr: "127.0.0.1:0", ShutdownGrace: 2 * time.Second},
		Postgres:      config.Postgres{DatabaseURL: url},
		Kafka:         config.Kafka{Brokers: brokers, TopicTicketIssued: events.TopicTicketIssued},
		Identity:      config.Identity{IdentityHMACSecret: "s3cret", IdentityIssuer: "iss", IdentityAudience: "aud"},
		ConsumerGroup: "tickets-" + t.Name(),
		TicketKeys:    key,
		RetryBackoff:  20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- tickets.Run(ctx, cfg, func(a net.Addr) { addrc <- a }) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("tickets.Run: %v", err)
		}
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-errc:
		t.Fatalf("tickets.Run: %v", err)
	}
	results := map[string]int{}
	testenv.WaitFor(t, 60*time.Second, "every message consumed", func() bool {
		results = map[string]int{}
		total := 0
		for _, m := range messagesMetric.FindAllStringSubmatch(get(t, base+"/metrics", 200), -1) {
			n, _ := strconv.Atoi(m[2])
			results[m[1]] = n
			total += n
		}
		return total >= messages
	})
	if results["issued"] != orders || results["duplicate"] != messages-orders {
		t.Fatalf("consumer results %v, want %d issued and %d duplicate", results, orders, messages-orders)
	}
	n, err := tickets.Count(context.Background(), poolFor(t, url), 7)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*orders {
		t.Fatalf("%d tickets, want %d (one per seat)", n, 2*orders)
	}
}
