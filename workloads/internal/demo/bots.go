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

package demo

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/config"

	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/pow"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// botPrefix starts the customer id of every bot (loadtest's bot-N), so the
// records tell bots from people.
const botPrefix = "bot-"

// BotShares compares the bots with the people: the crowd's view (places,
// requests, refusals) and the sale's records (admissions from the queue's
// admit log, seats sold from the ledger).
type BotShares struct {
	Crowd          *loadtest.BotReport `json:"crowd"`
	AdmittedPeople int64               `json:"admittedPeople"`
	AdmittedBots   int64               `json:"admittedBots"`
	SeatsPeople    int64               `json:"seatsPeople"`
	SeatsBots      int64               `json:"seatsBots"`
}

// auditBots reads the bots' and the people's admissions (the queue's admit
// log, whose entries start with the customer) and seats sold (the ledger).
func auditBots(ctx context.Context, conn *pgx.Conn, cfg AuditConfig, crowd *loadtest.BotReport) (*BotShares, error) {
	b := &BotShares{Crowd: crowd}
	rdb, err := redisconn.New(cfg.Redis)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	entries, err := rdb.LRange(ctx, zone.AdmitLogKey(cfg.EventID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("admit log: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e, botPrefix) {
			b.AdmittedBots++
		} else {
			b.AdmittedPeople++
		}
	}
	eventID := cfg.EventID
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE o.customer_id NOT LIKE $2 || '%'),
		       count(*) FILTER (WHERE o.customer_id LIKE $2 || '%')
		FROM seat s JOIN ticket_order o ON o.id = s.order_id
		WHERE s.event_id = $1 AND s.status = 'SOLD'`, eventID, botPrefix).Scan(&b.SeatsPeople, &b.SeatsBots)
	if err != nil {
		return nil, fmt.Errorf("seats by bots and people: %w", err)
	}
	return b, nil
}

func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// identityShare is the bots' share of the identities, in percent.
func (b *BotShares) identityShare() float64 {
	return share(b.Crowd.Bots.Identities, b.Crowd.Bots.Identities+b.Crowd.People.Identities)
}

// check adds the bots' problems: more than their share of identities in
// seats.
func (b *BotShares) check(r *Report) {
	if b == nil {
		return
	}
	if s := share(b.SeatsBots, b.SeatsBots+b.SeatsPeople); s > b.identityShare() {
		r.Problems = append(r.Problems, fmt.Sprintf("bots bought %.1f%% of the seats sold, more than their %.1f%% of the identities", s, b.identityShare()))
	}
}

// printBots writes the bots' rows of the report.
func printBots(w io.Writer, b *BotShares) {
	if b == nil {
		return
	}
	p, q := b.Crowd.People, b.Crowd.Bots
	fmt.Fprintf(w, "bots vs people\tidentities %d / %d (bots %.1f%%)\n", q.Identities, p.Identities, b.identityShare())
	fmt.Fprintf(w, "  places\tbots %.1f%% (%d of %d)\n", share(q.Joined, q.Joined+p.Joined), q.Joined, q.Joined+p.Joined)
	fmt.Fprintf(w, "  admissions\tbots %.1f%% (%d of %d)\n", share(b.AdmittedBots, b.AdmittedBots+b.AdmittedPeople), b.AdmittedBots, b.AdmittedBots+b.AdmittedPeople)
	fmt.Fprintf(w, "  seats sold\tbots %.1f%% (%d of %d)\n", share(b.SeatsBots, b.SeatsBots+b.SeatsPeople), b.SeatsBots, b.SeatsBots+b.SeatsPeople)
	perBot, perPerson := 0.0, 0.0
	if q.Identities > 0 {
		perBot = float64(q.Requests) / float64(q.Identities)
	}
	if p.Identities > 0 {
		perPerson = float64(p.Requests) / float64(p.Identities)
	}
	fmt.Fprintf(w, "  requests\tbots %d (%.1f each), people %d (%.1f each, the crowd's shared state and seat reads included)\n", q.Requests, perBot, p.Requests, perPerson)
	if len(b.Crowd.Refused) == 0 {
		fmt.Fprintf(w, "  refused\tnone\n")
	}
	for _, r := range b.Crowd.Refused {
		fmt.Fprintf(w, "  refused %s\t%s %d %s: %d\n", r.Kind, r.Endpoint, r.Status, r.Reason, r.Count)
	}
}

// The local sale's proof of work with bots: cheap for a person (256 hashes
// on average), rising by 2 bits for a network past 2,000 joins a minute and
// for each doubling, up to 20 bits (a million hashes).
const (
	botsPowDifficulty     = 8
	botsPowThreshold      = 2000
	botsPowMaxDifficulty  = 20
	peoplePerCrowdNetwork = 1000
)

// crowdNetworks is how many client networks the people come from: about a
// thousand people each (at least 64), far under a network's rate limits,
// as households and offices are.
func crowdNetworks(customers int) int {
	return min(max(64, customers/peoplePerCrowdNetwork), 60000)
}

// botProtection turns the proof of work on in q when the sale asks for it
// or has bots.
func (s *sale) botProtection(q *config.Queue) {
	if s.o.JoinLimit > 0 {
		q.JoinPerIdentity = s.o.JoinLimit
	}
	d := s.o.PowDifficulty
	if d == 0 && s.o.Bots > 0 {
		d = botsPowDifficulty
	}
	if d == 0 {
		return
	}
	q.PowDifficulty, q.PowKeys = d, pow.GenerateKey()
	if s.o.Bots > 0 {
		q.PowAdaptiveThreshold, q.PowMaxDifficulty = botsPowThreshold, max(botsPowMaxDifficulty, d)
	}
}
