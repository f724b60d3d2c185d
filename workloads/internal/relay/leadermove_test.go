package relay

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
)

// TestLeaderMoves publishes through a 3-broker cluster while every
// partition's leader moves from broker to broker: nothing is lost, every
// row is marked only once the broker acknowledged it, and each order's
// events stay in order.
func TestLeaderMoves(t *testing.T) {
	url, pool := newDB(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, events.TopicTicketIssued, events.TopicRefundRequested))
	if err != nil {
		t.Skipf("kafka-protocol cluster: %v", err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	_, stop := startRun(t, testConfig(url, brokers))

	const keys, perKey = 200, 5
	done := make(chan struct{})
	go func() {
		defer close(done)
		insertConcurrently(t, pool, keys, perKey, 4, 2*time.Millisecond)
	}()
	moves := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(150 * time.Millisecond):
			for p := int32(0); p < 3; p++ {
				next := (c.LeaderFor(events.TopicTicketIssued, p) + 1) % 3
				if err := c.MoveTopicPartition(events.TopicTicketIssued, p, next); err != nil {
					t.Fatalf("move partition %d to broker %d: %v", p, next, err)
				}
				moves++
			}
		}
	}
	testenv.WaitFor(t, 60*time.Second, "every row marked", func() bool { return count(t, pool, "published_at IS NULL") == 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkAllDelivered(t, brokers, keys*perKey)
	t.Logf("%d rows of %d orders published across %d leader moves", keys*perKey, keys, moves)
}
