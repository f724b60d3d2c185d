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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// browser is one headless Chromium with a fresh profile, phone-sized.
type browser struct {
	t     testing.TB
	ctx   context.Context // the first tab
	shots string          // screenshots of this test
	n     int
}

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts Chromium for t. Screenshots taken with shot go to a
// temporary folder that is copied to <module>/testdata-out/<test> when the test
// fails, or to $TICKETFAIR_WEB_SCREENSHOTS when that is set.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		testenv.Unavailable(t, "chromium", errors.New("not installed (hack/install-deps.sh installs it)"))
	}
	profile, err := os.MkdirTemp("", "ticketfair-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(390, 844),
	)
	ctx, cancel := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx, shots: t.TempDir()}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
		dst := os.Getenv("TICKETFAIR_WEB_SCREENSHOTS")
		if dst == "" && t.Failed() {
			dst = filepath.Join(moduleRoot(), "testdata-out", t.Name())
		}
		if dst != "" {
			_ = os.MkdirAll(dst, 0o755)
			files, _ := filepath.Glob(filepath.Join(b.shots, "*.png"))
			for _, f := range files {
				if data, err := os.ReadFile(f); err == nil {
					_ = os.WriteFile(filepath.Join(dst, filepath.Base(f)), data, 0o644)
				}
			}
			t.Logf("screenshots in %s", dst)
		}
	})
	// A phone: 390x844 CSS pixels.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// moduleRoot is the directory of go.mod (testdata-out/ there is ignored by
// git), or "." when it cannot be found.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return "."
		}
	}
}

// shot saves a full-page screenshot of tab ctx as NN-name.png.
func (b *browser) shot(ctx context.Context, name string) {
	b.t.Helper()
	b.n++
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	_ = os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name)), png, 0o644)
}

// do runs steps in tab ctx with a deadline, failing the test (after a
// screenshot) when they do not complete.
func (b *browser) do(ctx context.Context, what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		b.shot(ctx, "failed-"+strings.ReplaceAll(what, " ", "-"))
		b.t.Fatalf("%s: %v (page: %s)", what, err, b.describe(ctx))
	}
}

// eval evaluates a JavaScript expression in tab ctx.
func evalIn[T any](b *browser, ctx context.Context, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// waitFor evaluates a JavaScript predicate in tab ctx every 100 ms until it
// is true. It polls from Go, so it survives the page navigating.
func (b *browser) waitFor(ctx context.Context, what, predicate string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(ectx, chromedp.Evaluate[bool]("!!("+predicate+")"))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	b.shot(ctx, "failed-"+strings.ReplaceAll(what, " ", "-"))
	b.t.Fatalf("%s: not true within %v: %s (last error %v; page: %s)", what, timeout, predicate, lastErr, b.describe(ctx))
}

// describe summarises the page for failure messages.
func (b *browser) describe(ctx context.Context) string {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[string](`location.pathname + " | " + document.body.innerText.replace(/\s+/g, " ").slice(0, 600)`))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

// samePageChecks asserts what every page must satisfy: no request left the
// origin, nothing wider than the phone's screen.
func (b *browser) samePageChecks(ctx context.Context, page string) {
	b.t.Helper()
	foreign := evalIn[[]string](b, ctx, `performance.getEntriesByType("resource").map(e => e.name).filter(n => !n.startsWith(location.origin))`)
	if len(foreign) > 0 {
		b.t.Errorf("%s: requests to other origins: %v", page, foreign)
	}
	if over := evalIn[bool](b, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
		b.t.Errorf("%s: wider than a 390px phone screen", page)
	}
}
