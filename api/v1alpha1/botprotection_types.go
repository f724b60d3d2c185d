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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BotProtection holds the sale's defences against bots and scalpers: a
// proof of work at join and rate limits on join, poll and hold.
type BotProtection struct {
	// ProofOfWork makes every join carry the solution of a signed,
	// short-lived challenge that costs about 2^difficulty SHA-256 hashes
	// to solve (the waiting page solves it in a Web Worker). Off by default.
	// +kubebuilder:default={}
	// +optional
	ProofOfWork ProofOfWork `json:"proofOfWork,omitempty"`

	// RateLimits bound the joins, polls and holds of one identity and of
	// one client network (an IPv4 /24 or IPv6 /64); a refused request gets
	// 429 with Retry-After. The defaults sit far above what the waiting
	// page does and what a NAT full of people produces.
	// +kubebuilder:default={}
	// +optional
	RateLimits RateLimits `json:"rateLimits,omitempty"`
}

// ProofOfWork configures the proof of work asked at join.
type ProofOfWork struct {
	// Difficulty is the leading zero bits of SHA-256(challenge || nonce) a
	// join must carry; each bit doubles the work. 0 turns the proof of
	// work off. Default 0; 0 to 32.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +kubebuilder:default=0
	// +optional
	Difficulty *int32 `json:"difficulty,omitempty"`
	// TTL is how long a challenge may be solved and used. Default 2m; 10s to 10m.
	// +kubebuilder:default="2m"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="botProtection.proofOfWork.ttl must be a duration such as 2m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('10s') && duration(self) <= duration('10m'))",message="botProtection.proofOfWork.ttl must be between 10s and 10m"
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// AdaptiveThreshold is the joins per rate-limit window from one client
	// network (or subject prefix) beyond which the challenges handed to it
	// get harder by step bits, and by a step more for each doubling. 0
	// keeps the difficulty fixed. Default 0; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	// +optional
	AdaptiveThreshold *int32 `json:"adaptiveThreshold,omitempty"`
	// Step is the bits one step of the adaptive difficulty adds. Default 2; 1 to 8.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	// +kubebuilder:default=2
	// +optional
	Step *int32 `json:"step,omitempty"`
	// MaxDifficulty is the most the adaptive difficulty rises to (below
	// difficulty it never rises). Default 22; 1 to 32.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +kubebuilder:default=22
	// +optional
	MaxDifficulty *int32 `json:"maxDifficulty,omitempty"`
	// SubjectPrefix is how many leading characters of the identity subject
	// name an account family (an identity provider's prefix) whose join
	// rate also raises the difficulty. 0 counts networks only. Default 0; 0 to 64.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=0
	// +optional
	SubjectPrefix *int32 `json:"subjectPrefix,omitempty"`
}

// RateLimits are counts per window; 0 turns a limit off.
type RateLimits struct {
	// Window is the length of the counters' window. Default 1m; 1s to 1h.
	// +kubebuilder:default="1m"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="botProtection.rateLimits.window must be a duration such as 1m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="botProtection.rateLimits.window must be between 1s and 1h"
	Window *metav1.Duration `json:"window,omitempty"`
	// Join limits joins.
	// +kubebuilder:default={}
	// +optional
	Join JoinLimit `json:"join,omitempty"`
	// Poll limits polls of the per-person endpoint.
	// +kubebuilder:default={}
	// +optional
	Poll PollLimit `json:"poll,omitempty"`
	// Hold limits seat holds.
	// +kubebuilder:default={}
	// +optional
	Hold HoldLimit `json:"hold,omitempty"`
	// ClientAddressHeader names the header a trusted proxy in front of the
	// services writes the client's address into (e.g. X-Forwarded-For; its
	// last address is used). Set it only behind such a proxy: clients can
	// write the header themselves. Unset: the connection's peer.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9-]{1,64}$`
	// +optional
	ClientAddressHeader string `json:"clientAddressHeader,omitempty"`
}

// JoinLimit is the limit on joins.
type JoinLimit struct {
	// PerIdentity is the joins one identity may make per window. Default 30; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=30
	// +optional
	PerIdentity *int32 `json:"perIdentity,omitempty"`
	// PerNetwork is the joins one client network may make per window. Default 30000; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=30000
	// +optional
	PerNetwork *int32 `json:"perNetwork,omitempty"`
}

// PollLimit is the limit on polls of the per-person endpoint.
type PollLimit struct {
	// PerIdentity is the polls one identity may make per window. Default 120; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=120
	// +optional
	PerIdentity *int32 `json:"perIdentity,omitempty"`
	// PerNetwork is the polls one client network may make per window. Default 60000; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=60000
	// +optional
	PerNetwork *int32 `json:"perNetwork,omitempty"`
}

// HoldLimit is the limit on seat holds.
type HoldLimit struct {
	// PerIdentity is the holds one identity may make per window. Default 60; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=60
	// +optional
	PerIdentity *int32 `json:"perIdentity,omitempty"`
	// PerNetwork is the holds one client network may make per window. Default 20000; at least 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=20000
	// +optional
	PerNetwork *int32 `json:"perNetwork,omitempty"`
}
