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

package render

import (
	"encoding/base64"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// TestBotProtection: spec.botProtection reaches the queue's and booking's
// configuration, unset fields keep the workloads' defaults, an explicit 0
// turns a limit off, and the proof of work's key comes from the generated
// Secret.
func TestBotProtection(t *testing.T) {
	load := func(o *Objects, c Component, dst any) {
		t.Helper()
		data := o.ConfigMaps[c].Data
		if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := data[k]; return v, ok }, dst); err != nil {
			t.Fatal(err)
		}
	}
	te := event()
	o, err := Render(te, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	var q config.Queue
	load(o, Queue, &q)
	if q.RateLimits != config.DefaultsOf[config.RateLimits]() || q.ProofOfWork != config.DefaultsOf[config.ProofOfWork]() {
		t.Fatalf("unset botProtection: %+v %+v, want the workloads' defaults", q.RateLimits, q.ProofOfWork)
	}
	found := false
	for _, e := range o.Deployments[Queue].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "TICKETFAIR_POW_KEYS" {
			found = true
			if s := e.ValueFrom.SecretKeyRef; s == nil || s.Name != KeysSecretName(te) || s.Key != KeyPowKeys {
				t.Fatalf("TICKETFAIR_POW_KEYS from %+v", e.ValueFrom)
			}
		}
	}
	if !found {
		t.Fatal("the queue has no TICKETFAIR_POW_KEYS")
	}

	bp := &te.Spec.BotProtection
	bp.ProofOfWork.Difficulty = ptr.To[int32](14)
	bp.ProofOfWork.TTL = &metav1.Duration{Duration: 90 * time.Second}
	bp.ProofOfWork.AdaptiveThreshold = ptr.To[int32](500)
	bp.ProofOfWork.Step = ptr.To[int32](3)
	bp.ProofOfWork.MaxDifficulty = ptr.To[int32](24)
	bp.ProofOfWork.SubjectPrefix = ptr.To[int32](6)
	bp.RateLimits.Window = &metav1.Duration{Duration: 10 * time.Second}
	bp.RateLimits.Join.PerIdentity = ptr.To[int32](5)
	bp.RateLimits.Join.PerNetwork = ptr.To[int32](0)
	bp.RateLimits.Poll.PerIdentity = ptr.To[int32](7)
	bp.RateLimits.Hold.PerNetwork = ptr.To[int32](9)
	bp.RateLimits.ClientAddressHeader = "X-Forwarded-For"
	if o, err = Render(te, Options{Image: "img"}); err != nil {
		t.Fatal(err)
	}
	q = config.Queue{}
	load(o, Queue, &q)
	defaults := config.DefaultsOf[config.RateLimits]()
	wantLimits := config.RateLimits{RateLimitWindow: 10 * time.Second, JoinPerIdentity: 5, JoinPerNetwork: 0,
		PollPerIdentity: 7, PollPerNetwork: defaults.PollPerNetwork, HoldPerIdentity: defaults.HoldPerIdentity, HoldPerNetwork: 9,
		ClientAddrHeader: "X-Forwarded-For"}
	if q.RateLimits != wantLimits {
		t.Fatalf("queue rate limits %+v, want %+v", q.RateLimits, wantLimits)
	}
	wantPow := config.ProofOfWork{PowDifficulty: 14, PowTTL: 90 * time.Second, PowAdaptiveThreshold: 500, PowAdaptiveStep: 3,
		PowMaxDifficulty: 24, PowSubjectPrefix: 6}
	if q.PowKeys = ""; q.ProofOfWork != wantPow {
		t.Fatalf("queue proof of work %+v, want %+v", q.ProofOfWork, wantPow)
	}
	var b config.Booking
	load(o, Booking, &b)
	if b.RateLimits != wantLimits {
		t.Fatalf("booking rate limits %+v, want %+v", b.RateLimits, wantLimits)
	}
	keys, err := GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(string(keys[KeyPowKeys])); err != nil || len(raw) != 32 {
		t.Fatalf("generated %s = %q", KeyPowKeys, keys[KeyPowKeys])
	}
}
