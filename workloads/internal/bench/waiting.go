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

package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
)

// waitingCost is what a waiting crowd costs the origin and Redis, per
// waiting person per minute.
type waitingCost struct {
	Name                  string
	People                int
	Duration              time.Duration
	CrowdRequests         int64
	OriginRequests        int64
	RedisCommands         int64
	OriginPerPersonMinute float64
	RedisPerPersonMinute  float64
}

// person is a waiting customer of the bench: identity token and queueId.
type person struct{ tok, id string }

// measureWaiting runs people for dur, each asking every interval (with a
// random phase, as a crowd joins over time): with viaState, the public
// state through the cache plus the per-person endpoint every heartbeat, as
// the waiting page does; without it, the per-person endpoint every
// interval, as the page did before. The origin's own request counts and
// Redis's INFO commandstats give the cost.
func measureWaiting(ctx context.Context, name string, hc *http.Client, queueURL, cacheURL string, rdb *redis.Client,
	people []person, dur, interval, heartbeat time.Duration, viaState bool) (waitingCost, error) {
	originBefore, err := originRequests(ctx, hc, queueURL)
	if err != nil {
		return waitingCost{}, err
	}
	redisBefore, err := redisCalls(ctx, rdb)
	if err != nil {
		return waitingCost{}, err
	}
	var crowd atomic.Int64
	var etag atomic.Pointer[string]
	sem := make(chan struct{}, 64)
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var wg sync.WaitGroup
	ask := func(url string, hdr map[string]string) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-sem }()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		crowd.Add(1)
		if t := resp.Header.Get("ETag"); t != "" {
			etag.Store(&t)
		}
	}
	for _, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now().Add(rand.N(interval))
			beat := time.Now().Add(rand.N(heartbeat))
			for {
				at, personal := next, !viaState
				if viaState && beat.Before(next) {
					at, personal = beat, true
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(at)):
				}
				if personal {
					ask(queueURL+"/events/1/queue/"+p.id, map[string]string{"Authorization": "Bearer " + p.tok})
					if viaState {
						beat = beat.Add(heartbeat)
						continue
					}
				} else {
					var hdr map[string]string
					if t := etag.Load(); t != nil {
						hdr = map[string]string{"If-None-Match": *t}
					}
					ask(cacheURL+"/events/1/queue/state", hdr)
				}
				next = next.Add(interval)
			}
		}()
	}
	wg.Wait()
	cctx := context.WithoutCancel(ctx)
	originAfter, err := originRequests(cctx, hc, queueURL)
	if err != nil {
		return waitingCost{}, err
	}
	redisAfter, err := redisCalls(cctx, rdb)
	if err != nil {
		return waitingCost{}, err
	}
	minutes := float64(len(people)) * dur.Minutes()
	w := waitingCost{Name: name, People: len(people), Duration: dur, CrowdRequests: crowd.Load(),
		OriginRequests: originAfter - originBefore, RedisCommands: redisAfter - redisBefore}
	w.OriginPerPersonMinute = float64(w.OriginRequests) / minutes
	w.RedisPerPersonMinute = float64(w.RedisCommands) / minutes
	return w, nil
}

// originRequests is the queue's count of answered state and per-person
// poll requests, from its /metrics.
func originRequests(ctx context.Context, hc *http.Client, queueURL string) (int64, error) {
	families, err := scrape.Metrics(ctx, hc, queueURL)
	if err != nil {
		return 0, err
	}
	return int64(scrape.Sum(families["ticketfair_queue_request_seconds"], "op", "state", "poll")), nil
}

// redisCalls sums INFO commandstats: every command, those run inside
// scripts included.
func redisCalls(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var n int64
	for cmd, calls := range scrape.CommandStats(info, "calls") {
		if cmd != "info" {
			n += calls
		}
	}
	return n, nil
}

// redisLoad is what Redis has done so far: CPU time (INFO cpu:
// used_cpu_user + used_cpu_sys) in seconds, and script calls (EVAL and
// EVALSHA in INFO commandstats).
type redisLoad struct {
	cpu     float64
	scripts int64
}

func (a redisLoad) minus(b redisLoad) redisLoad {
	return redisLoad{cpu: a.cpu - b.cpu, scripts: a.scripts - b.scripts}
}

func redisNow(ctx context.Context, rdb *redis.Client) (redisLoad, error) {
	info, err := rdb.Info(ctx, "cpu", "commandstats").Result()
	if err != nil {
		return redisLoad{}, err
	}
	calls := scrape.CommandStats(info, "calls")
	return redisLoad{cpu: scrape.CPUSeconds(info), scripts: calls["evalsha"] + calls["eval"]}, nil
}

func formatWaiting(ws []waitingCost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nwaiting crowd, per waiting person per minute (%d people, %s each)\n\n", ws[0].People, ws[0].Duration)
	fmt.Fprintln(&b, "| how the crowd waits | crowd requests | origin requests | origin req/person/min | Redis commands | Redis cmd/person/min |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- | --- |")
	for _, w := range ws {
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %d | %.3f |\n", w.Name, w.CrowdRequests, w.OriginRequests, w.OriginPerPersonMinute, w.RedisCommands, w.RedisPerPersonMinute)
	}
	if len(ws) == 2 && ws[1].OriginPerPersonMinute > 0 {
		fmt.Fprintf(&b, "\norigin requests per waiting person-minute: %.1fx fewer through the cache\n", ws[0].OriginPerPersonMinute/ws[1].OriginPerPersonMinute)
	}
	return b.String()
}
