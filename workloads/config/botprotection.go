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

package config

import "time"

// RateLimits are the per-identity and per-client-network limits on joins,
// polls (queue) and holds (booking), each a count per RateLimitWindow (0
// turns a limit off). A client network is an IPv4 /24 or an IPv6 /64.
//
// The per-identity defaults are far above what the waiting page does: it
// joins once (again only after losing its place, and on an error no sooner
// than Retry-After or 5 s: at most 12 a minute), asks its own poll
// endpoint every five minutes and every 2 s only once its turn has come
// (30 a minute; a second tab doubles it), and holds once per choice of
// seats. The per-network defaults are far above a NAT of people, say a
// stadium's Wi-Fi of 10,000 behind one /24 joining within the opening
// minute, while a flood from one network stays bounded.
type RateLimits struct {
	RateLimitWindow  time.Duration `env:"TICKETFAIR_RATE_LIMIT_WINDOW" flag:"rate-limit-window" default:"1m" usage:"window of the rate limits' counters"`
	JoinPerIdentity  int           `env:"TICKETFAIR_RATE_LIMIT_JOIN_PER_IDENTITY" flag:"rate-limit-join-per-identity" default:"30" usage:"joins per identity per window (0: no limit)"`
	JoinPerNetwork   int           `env:"TICKETFAIR_RATE_LIMIT_JOIN_PER_NETWORK" flag:"rate-limit-join-per-network" default:"30000" usage:"joins per client network (/24, /64) per window (0: no limit)"`
	PollPerIdentity  int           `env:"TICKETFAIR_RATE_LIMIT_POLL_PER_IDENTITY" flag:"rate-limit-poll-per-identity" default:"120" usage:"polls of the per-person endpoint per identity per window (0: no limit)"`
	PollPerNetwork   int           `env:"TICKETFAIR_RATE_LIMIT_POLL_PER_NETWORK" flag:"rate-limit-poll-per-network" default:"60000" usage:"polls of the per-person endpoint per client network per window (0: no limit)"`
	HoldPerIdentity  int           `env:"TICKETFAIR_RATE_LIMIT_HOLD_PER_IDENTITY" flag:"rate-limit-hold-per-identity" default:"60" usage:"holds per identity per window (0: no limit)"`
	HoldPerNetwork   int           `env:"TICKETFAIR_RATE_LIMIT_HOLD_PER_NETWORK" flag:"rate-limit-hold-per-network" default:"20000" usage:"holds per client network per window (0: no limit)"`
	ClientAddrHeader string        `env:"TICKETFAIR_CLIENT_ADDR_HEADER" flag:"client-addr-header" usage:"header a trusted proxy in front writes the client's address into, e.g. X-Forwarded-For (its last address is used); empty: the connection's peer"`
}

// ProofOfWork configures the queue's proof-of-work gate at join. With a
// difficulty of 0 it is off and joins need no challenge.
type ProofOfWork struct {
	PowDifficulty int           `env:"TICKETFAIR_POW_DIFFICULTY" flag:"pow-difficulty" default:"0" usage:"leading zero bits of SHA-256(challenge || nonce) a join must carry (0: no proof of work)"`
	PowKeys       string        `env:"TICKETFAIR_POW_KEYS" flag:"pow-keys" secret:"true" usage:"comma-separated base64 HMAC keys of the challenges (at least 16 bytes each): the first signs, all verify"`
	PowTTL        time.Duration `env:"TICKETFAIR_POW_TTL" flag:"pow-ttl" default:"2m" usage:"how long a challenge may be solved and used"`
	// The difficulty rises by PowAdaptiveStep bits once a client network
	// (or a subject prefix) has joined PowAdaptiveThreshold times in the
	// current rate-limit window, and by a step more for each doubling.
	PowAdaptiveThreshold int `env:"TICKETFAIR_POW_ADAPTIVE_THRESHOLD" flag:"pow-adaptive-threshold" default:"0" usage:"joins per rate-limit window from one client network or subject prefix above which its challenges get harder (0: the difficulty never rises)"`
	PowAdaptiveStep      int `env:"TICKETFAIR_POW_ADAPTIVE_STEP" flag:"pow-adaptive-step" default:"2" usage:"bits the difficulty rises by per step"`
	PowMaxDifficulty     int `env:"TICKETFAIR_POW_MAX_DIFFICULTY" flag:"pow-max-difficulty" default:"22" usage:"the most the difficulty rises to"`
	PowSubjectPrefix     int `env:"TICKETFAIR_POW_SUBJECT_PREFIX" flag:"pow-subject-prefix" default:"0" usage:"characters of the identity subject that name its prefix (e.g. an identity provider's account family) whose join rate raises the difficulty too (0: only networks)"`
}
