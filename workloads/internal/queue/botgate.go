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

package queue

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/pow"
	"github.com/ticketfair/ticketfair/workloads/internal/ratelimit"
)

// botChecks are the join's defences against bots, cheapest first: the
// proof of work (CPU only; nil sol when the body carries none), then the
// rate limits of the customer's identity and client network (one batched
// Redis call). It returns the spent challenge, whose ID the join script
// marks used (zero when the event asks for no proof of work).
func (s *service) botChecks(ctx context.Context, r *http.Request, customer string, sol *pow.Solution) (pow.Challenge, error) {
	ch, err := s.pow.Check(sol, customer, pow.ChallengePath(fmt.Sprintf("/events/%d", s.cfg.EventID)))
	if err != nil {
		return pow.Challenge{}, err
	}
	if err := s.limits.Check(ctx, ratelimit.Join, customer, s.pow.Prefix(customer), r); err != nil {
		return pow.Challenge{}, err
	}
	return ch, nil
}

// refusedJoin is the answer to a join the join script refused: a challenge
// already spent (challenge_used) or an access code already redeemed by
// someone else (code_used), both 409.
func refusedJoin(reason string) error {
	msg := "the join was refused: " + reason
	switch reason {
	case "challenge_used":
		msg = "this proof-of-work challenge was already used; fetch a new one"
	case "code_used":
		msg = "this access code was already used by someone else"
	}
	return &httpapi.Error{Status: http.StatusConflict, Code: reason, Message: msg}
}
