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

package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ticketfair/ticketfair/internal/faultproxy"
)

// Target is the local sale a plan runs against.
type Target interface {
	// Admitter names the queue replica whose admitter runs now.
	Admitter(ctx context.Context) (string, error)
	// Kill SIGKILLs a service process; Restart starts it again and waits
	// until it is ready.
	Kill(name string) error
	Restart(ctx context.Context, name string) error
	// RestartRedis restarts Redis as the fault says after the pause and
	// describes what was lost.
	RestartRedis(ctx context.Context, appendOnly bool, pause time.Duration) (string, error)
	// FailoverRedis SIGKILLs the Sentinel set-up's master and waits until
	// the sentinels name another; it describes the failover.
	FailoverRedis(ctx context.Context) (string, error)
	RestartPostgres(ctx context.Context) error
	// StopBroker SIGKILLs Kafka node n (1-based), every node when n is 0;
	// StartBroker starts the same nodes again with their data.
	StopBroker(n int) error
	StartBroker(ctx context.Context, n int) error
	// Proxy is the fault proxy of a link (BookingPostgres, QueueRedis).
	Proxy(link string) *faultproxy.Proxy
}

// Window is when a fault was in force.
type Window struct {
	Fault  Fault
	Target string // the process a kill hit (queue-admitter resolved)
	Start  time.Time
	End    time.Time
	Note   string
	Err    string
}

// Run injects plan's faults at their times after open, each in its own
// goroutine, and returns their windows once all are over.
func Run(ctx context.Context, plan Plan, open time.Time, t Target, logf func(string, ...any)) []Window {
	windows := make([]Window, len(plan.Faults))
	var wg sync.WaitGroup
	for i, f := range plan.Faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Until(open.Add(f.At))):
			case <-ctx.Done():
				windows[i] = Window{Fault: f, Err: "not run: " + ctx.Err().Error()}
				return
			}
			w := Window{Fault: f, Target: f.Target, Start: time.Now()}
			note, err := inject(ctx, f, t, &w)
			w.End, w.Note = time.Now(), note
			if err != nil {
				w.Err = err.Error()
			}
			logf("fault %-40s %5.1fs  %s%s", f.String(), w.End.Sub(w.Start).Seconds(), note, errSuffix(err))
			windows[i] = w
		}()
	}
	wg.Wait()
	return windows
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " FAILED: " + err.Error()
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func inject(ctx context.Context, f Fault, t Target, w *Window) (string, error) {
	switch f.Kind {
	case Kill:
		name := f.Target
		if name == "queue-admitter" {
			n, err := t.Admitter(ctx)
			if err != nil {
				return "", err
			}
			name = n
		}
		w.Target = name
		if err := t.Kill(name); err != nil {
			return "", err
		}
		if err := sleep(ctx, f.For); err != nil {
			return "", err
		}
		return "killed " + name + ", restarted", t.Restart(ctx, name)
	case RedisRestart, RedisRestartAOF:
		return t.RestartRedis(ctx, f.Kind == RedisRestartAOF, f.For)
	case RedisFailover:
		return t.FailoverRedis(ctx)
	case PostgresRestart:
		return "", t.RestartPostgres(ctx)
	case BrokerOutage:
		n, _ := f.BrokerNode() // validated when parsed
		if err := t.StopBroker(n); err != nil {
			return "", err
		}
		serr := sleep(ctx, f.For)
		if err := t.StartBroker(context.WithoutCancel(ctx), n); err != nil {
			return "", err
		}
		return "", serr
	case Latency, Blackhole, Reset:
		p := t.Proxy(f.Target)
		if p == nil {
			return "", fmt.Errorf("no proxy for %s", f.Target)
		}
		switch f.Kind {
		case Latency:
			p.SetLatency(f.Latency)
			defer p.SetLatency(0)
			return "", sleep(ctx, f.For)
		case Blackhole:
			p.SetBlackhole(true)
			defer p.SetBlackhole(false)
			return "", sleep(ctx, f.For)
		default:
			n := 0
			end := time.Now().Add(f.For)
			for time.Now().Before(end) {
				n += p.ResetAll()
				if err := sleep(ctx, 500*time.Millisecond); err != nil {
					return "", err
				}
			}
			return fmt.Sprintf("%d connections reset", n), nil
		}
	}
	return "", fmt.Errorf("unknown fault %q", f.Kind)
}
