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
	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// KeyPowKeys is the generated Secret's key of the proof-of-work HMAC keys.
const KeyPowKeys = "pow-keys"

// rateLimits renders spec.botProtection.rateLimits into dst; unset fields
// keep the workload's defaults (the CRD's markers state the same).
func rateLimits(dst *config.RateLimits, src ticketsv1alpha1.RateLimits) {
	if src.Window != nil {
		dst.RateLimitWindow = src.Window.Duration
	}
	setInt(&dst.JoinPerIdentity, src.Join.PerIdentity)
	setInt(&dst.JoinPerNetwork, src.Join.PerNetwork)
	setInt(&dst.PollPerIdentity, src.Poll.PerIdentity)
	setInt(&dst.PollPerNetwork, src.Poll.PerNetwork)
	setInt(&dst.HoldPerIdentity, src.Hold.PerIdentity)
	setInt(&dst.HoldPerNetwork, src.Hold.PerNetwork)
	dst.ClientAddrHeader = src.ClientAddressHeader
}

// proofOfWork renders spec.botProtection.proofOfWork into dst.
func proofOfWork(dst *config.ProofOfWork, src ticketsv1alpha1.ProofOfWork) {
	setInt(&dst.PowDifficulty, src.Difficulty)
	if src.TTL != nil {
		dst.PowTTL = src.TTL.Duration
	}
	setInt(&dst.PowAdaptiveThreshold, src.AdaptiveThreshold)
	setInt(&dst.PowAdaptiveStep, src.Step)
	setInt(&dst.PowMaxDifficulty, src.MaxDifficulty)
	setInt(&dst.PowSubjectPrefix, src.SubjectPrefix)
}

func setInt(dst *int, src *int32) {
	if src != nil {
		*dst = int(*src)
	}
}
