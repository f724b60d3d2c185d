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

package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"
)

func TestMain(m *testing.M) { Main(m) }

// The servers are real: a Lua script runs inside redis-server.
func TestRedisLuaScript(t *testing.T) {
	rdb := Redis(t)
	ctx := context.Background()
	incrBy := redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], n)
return n`)
	for i := 1; i <= 3; i++ {
		n, err := incrBy.Run(ctx, rdb, []string{"counter", "log"}, 5).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(5*i) {
			t.Fatalf("script returned %d, want %d", n, 5*i)
		}
	}
	got, err := rdb.LRange(ctx, "log", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[5 10 15]" {
		t.Fatalf("log = %v", got)
	}
	// A second test database starts empty: isolation between tests.
	other := Redis(t)
	if n, _ := other.Exists(ctx, "counter").Result(); n != 0 {
		t.Fatal("test databases are not isolated")
	}
}

func TestPostgresWithPgx(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE seat (id text PRIMARY KEY, status text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO seat VALUES ('A-1','AVAILABLE')`); err != nil {
		t.Fatal(err)
	}
	// The conditional update succeeds once only.
	for i, want := range []int64{1, 0} {
		tag, err := pool.Exec(ctx, `UPDATE seat SET status='HELD' WHERE id=$1 AND status='AVAILABLE'`, "A-1")
		if err != nil {
			t.Fatal(err)
		}
		if tag.RowsAffected() != want {
			t.Fatalf("update %d affected %d rows, want %d", i, tag.RowsAffected(), want)
		}
	}
	var version string
	if err := pool.QueryRow(ctx, `SHOW server_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s", version)
}

func TestKafkaProduceConsumeWithKafkaGo(t *testing.T) {
	cfg := Kafka(t)
	brokers := cfg.Brokers
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        cfg.TopicTicketIssued,
		RequiredAcks: kafka.RequireAll,
		Balancer:     &kafka.Hash{},
	}
	defer w.Close()
	const n = 20
	var msgs []kafka.Message
	for i := 0; i < n; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("order-%d", i%4)), Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:     brokers,
		GroupID:     "smoke-group",
		Topic:       cfg.TopicTicketIssued,
		StartOffset: kafka.FirstOffset,
		MaxWait:     100 * time.Millisecond,
	})
	defer r.Close()
	lastByKey := map[string]int{}
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", i, err)
		}
		var v int
		fmt.Sscan(string(m.Value), &v)
		if last, ok := lastByKey[string(m.Key)]; ok && v <= last {
			t.Fatalf("key %s out of order: %d after %d", m.Key, v, last)
		}
		lastByKey[string(m.Key)] = v
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if len(lastByKey) != 4 {
		t.Fatalf("saw %d keys, want 4", len(lastByKey))
	}
}
