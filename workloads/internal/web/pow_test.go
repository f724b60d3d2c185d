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

package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketfair/ticketfair/workloads/internal/pow"
)

// powPage serves the embedded assets and an empty page at /, so the
// worker (same-origin only) can be started in headless Chromium.
func powPage(t testing.TB) (base, worker string) {
	t.Helper()
	s := mustSite()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /assets/{name}", s.serveAsset)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>pow</title>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, s.hashed["pow.js"]
}

type workerAnswer struct {
	Nonce  string  `json:"nonce"`
	Hashes float64 `json:"hashes"`
	Ms     float64 `json:"ms"`
	Error  string  `json:"error"`
}

// solveInWorker runs pow.js in a Web Worker of the page and returns its answer.
func solveInWorker(b *browser, worker, challenge string, difficulty int) (workerAnswer, error) {
	expr := fmt.Sprintf(`new Promise((resolve) => {
		const w = new Worker(%q);
		w.onmessage = (e) => { w.terminate(); resolve(e.data); };
		w.onerror = (e) => { w.terminate(); resolve({ error: "worker error: " + e.message }); };
		w.postMessage({ challenge: %q, difficulty: %d });
	})`, worker, challenge, difficulty)
	return chromedp.Run(b.ctx, chromedp.Evaluate[workerAnswer](expr, chromedp.EvalAwaitPromise))
}

// TestPowWorkerInChromium: the page's worker finds nonces the queue's
// verifier accepts, at several difficulties, in headless Chromium.
func TestPowWorkerInChromium(t *testing.T) {
	b := newBrowser(t)
	base, worker := powPage(t)
	b.do(b.ctx, "open page", 20*time.Second, chromedp.Navigate(base+"/"))
	keys, err := pow.ParseKeys(pow.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{0, 4, 8, 12} {
		c, err := keys.Issue(7, "alice", d, time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		a, err := solveInWorker(b, worker, c.Token, d)
		if err != nil || a.Error != "" {
			t.Fatalf("difficulty %d: %v %s", d, err, a.Error)
		}
		if _, err := keys.Verify(c.Token, a.Nonce, 7, "alice", time.Now()); err != nil {
			t.Fatalf("difficulty %d: the worker's nonce %q: %v", d, a.Nonce, err)
		}
		// The worker counts from 0: its nonce is the first that solves it.
		n, _ := strconv.Atoi(a.Nonce)
		for i := 0; i < n; i++ {
			if pow.LeadingZeroBits(c.Token, strconv.Itoa(i)) >= d {
				t.Fatalf("difficulty %d: %d solves it before the worker's %d", d, i, n)
			}
		}
		t.Logf("difficulty %2d: %6.0f hashes in %7.1f ms", d, a.Hashes, a.Ms)
	}
}

// BenchmarkPowSolveChromium is a person's wait at each difficulty: the
// time pow.js takes in headless Chromium on this machine (ms/solve, the
// mean over fresh challenges; a solve takes 2^d hashes on average, with a
// geometric spread). TICKETFAIR_POW_BENCH_BITS=8,12,... picks the
// difficulties.
func BenchmarkPowSolveChromium(b *testing.B) {
	br := newBrowser(b)
	base, worker := powPage(b)
	br.do(br.ctx, "open page", 20*time.Second, chromedp.Navigate(base+"/"))
	keys, _ := pow.ParseKeys(pow.GenerateKey())
	bits := []int{8, 12, 14, 16, 18}
	if s := strings.TrimSpace(os.Getenv("TICKETFAIR_POW_BENCH_BITS")); s != "" {
		bits = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			bits = append(bits, n)
		}
	}
	for _, d := range bits {
		b.Run("bits="+strconv.Itoa(d), func(b *testing.B) {
			var ms, hashes float64
			for b.Loop() {
				c, _ := keys.Issue(7, "alice", d, time.Now(), time.Minute)
				a, err := solveInWorker(br, worker, c.Token, d)
				if err != nil || a.Error != "" {
					b.Fatalf("%v %s", err, a.Error)
				}
				ms += a.Ms
				hashes += a.Hashes
			}
			b.ReportMetric(ms/float64(b.N), "ms/solve")
			b.ReportMetric(hashes/ms/1000, "Mhash/s")
		})
	}
}
