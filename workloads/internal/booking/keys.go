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

package booking

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
)

// keySource holds the public keys access tokens are verified with: fixed
// keys from configuration, or the queue's JWKS, refreshed periodically and
// when a token names a kid we do not know (the queue rotated its key).
type keySource struct {
	keys     atomic.Pointer[map[string]ed25519.PublicKey]
	verifier *accesstoken.Verifier

	url    string
	client *http.Client

	mu         sync.Mutex
	lastUnseen time.Time // last fetch for an unknown kid
}

// Minimum time between JWKS fetches triggered by unknown kids, so forged
// kids cannot hammer the queue.
const jwksMinInterval = 10 * time.Second

func staticKeys(keys map[string]ed25519.PublicKey) *keySource {
	k := &keySource{}
	k.keys.Store(&keys)
	k.verifier = accesstoken.NewVerifier(k.current)
	return k
}

func jwksKeys(url string) *keySource {
	k := &keySource{url: url, client: &http.Client{Timeout: 5 * time.Second}}
	empty := map[string]ed25519.PublicKey{}
	k.keys.Store(&empty)
	k.verifier = accesstoken.NewVerifier(k.current)
	return k
}

func (k *keySource) current() map[string]ed25519.PublicKey { return *k.keys.Load() }

func (k *keySource) ready() bool { return len(k.current()) > 0 }

// run refreshes the JWKS every interval until ctx ends (JWKS only).
func (k *keySource) run(ctx context.Context, interval time.Duration) {
	if k.url == "" {
		return
	}
	for {
		wait := interval
		if err := k.refresh(ctx, true); err != nil {
			slog.WarnContext(ctx, "access token JWKS refresh failed", "url", k.url, "err", err)
			if !k.ready() {
				wait = 2 * time.Second
			}
		}
		if retry.Sleep(ctx, wait) != nil {
			return
		}
	}
}

func (k *keySource) refresh(ctx context.Context, force bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !force {
		if time.Since(k.lastUnseen) < jwksMinInterval {
			return nil
		}
		k.lastUnseen = time.Now()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", k.url, resp.Status)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	keys, err := accesstoken.ParseJWKS(doc)
	if err != nil {
		return err
	}
	k.keys.Store(&keys)
	return nil
}

// maxTokenBytes bounds an access token taken from a header.
const maxTokenBytes = 8 << 10

// verify checks an access token for eventID, refetching the JWKS once if
// the token's kid is unknown.
func (k *keySource) verify(ctx context.Context, token string, eventID int64) (*accesstoken.Claims, error) {
	if len(token) > maxTokenBytes {
		return nil, fmt.Errorf("%w: token too long", accesstoken.ErrInvalid)
	}
	c, err := k.verifier.Verify(token, eventID)
	if err == nil || k.url == "" {
		return c, err
	}
	if kid := kidOf(token); kid != "" {
		if _, known := k.current()[kid]; !known {
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			if rerr := k.refresh(rctx, false); rerr != nil {
				slog.WarnContext(ctx, "access token JWKS refresh failed", "url", k.url, "err", rerr)
			}
			return k.verifier.Verify(token, eventID)
		}
	}
	return c, err
}

// kidOf reads the kid from a JWT's header without verifying anything.
func kidOf(token string) string {
	h, _, ok := strings.Cut(token, ".")
	if !ok || len(h) > 1024 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return ""
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	if json.Unmarshal(raw, &hdr) != nil {
		return ""
	}
	return hdr.Kid
}
