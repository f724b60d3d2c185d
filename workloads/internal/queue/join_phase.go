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
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

// identify verifies the identity token of r: its subject is the customer,
// its tier chooses the queue.
func (s *service) identify(r *http.Request) (identity.Identity, error) {
	id, err := s.verifier.Identify(r)
	if err != nil {
		return id, err
	}
	if strings.ContainsRune(id.Subject, '|') {
		return id, errBadCustomer
	}
	return id, nil
}

// chooseQueue is step 5 of the join: it checks the access code (CPU only:
// its MAC under the event's codes key) and fills req's Tier, Queue and
// CodeHash from the phases, the tier and the code. Whether the code is
// still unused is the join script's part.
func (s *service) chooseQueue(req *JoinRequest, tier, code string) error {
	req.Tier = tier
	phase := ""
	if code != "" {
		if s.codeKey == nil {
			return errCodeNotNeeded
		}
		c, err := accesscode.Check(s.codeKey, s.cfg.EventID, code)
		switch {
		case errors.Is(err, accesscode.ErrOtherEvent):
			return errCodeOtherEvent
		case err != nil:
			return errCodeInvalid
		}
		phase, req.CodeHash = c.Phase, accesscode.Hash(c)
	}
	q, err := s.live.Load().choose(time.Now(), tier, phase)
	if err != nil {
		return err
	}
	req.Queue = q
	return nil
}

// countRefusal counts a join refused by one of its checks: a 403, 409 or
// 429 that carries a code.
func (s *service) countRefusal(err error) {
	var he *httpapi.Error
	if errors.As(err, &he) && he.Code != "" &&
		(he.Status == http.StatusForbidden || he.Status == http.StatusConflict || he.Status == http.StatusTooManyRequests) {
		s.m.joinRefused.WithLabelValues(he.Code).Inc()
	}
}
