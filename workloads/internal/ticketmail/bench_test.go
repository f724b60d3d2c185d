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

package ticketmail

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
)

// BenchmarkSendToMailpit measures ticket mails per second, two tickets
// each (QR codes, calendar), from pending rows to Mailpit's store, with
// the default number of workers.
func BenchmarkSendToMailpit(b *testing.B) {
	_, pool := migrationstest.NewDB(b)
	mp := testenv.Mailpit(b)
	ctx := context.Background()
	for i := range b.N {
		id := fmt.Sprintf("bench-%06d", i)
		m := orderMail(id, issue(b, pool, id, 2))
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return Enqueue(ctx, tx, m) }); err != nil {
			b.Fatal(err)
		}
	}
	cfg := mailConfig(mp)
	cfg.Workers = 0 // the default
	b.ResetTimer()
	start := time.Now()
	s := startSender(b, cfg, pool)
	s.Wake()
	testenv.WaitFor(b, 10*time.Minute, "every mail in Mailpit", func() bool {
		n, err := mp.Count(ctx)
		return err == nil && n >= b.N
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "mails/s")
	if n := count(b, mp); n != b.N {
		b.Fatalf("Mailpit holds %d messages, want %d", n, b.N)
	}
}
