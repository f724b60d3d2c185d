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

package loadtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Profile describes the simulated crowd. Fractions are of all customers
// (Abandon, NoClaim) or of customers who hold seats (HoldExpire, Webhook*).
type Profile struct {
	Customers     int           // simulated customers
	PreQueue      float64       // fraction who join before sales open
	JoinWindow    time.Duration // after opening, the rest join spread over this window
	Abandon       float64       // leave the queue while waiting
	NoClaim       float64       // never pick up their admission
	HoldExpire    float64       // hold seats, then never pay
	WebhookTwice  float64       // the payment provider delivers the callback twice
	WebhookLate   float64       // the callback arrives a little late (1-3 s)
	PayFail       float64       // the payment fails (status "failed")
	MaxSeats      int           // a customer wants 1..MaxSeats seats
	Concurrency   int           // requests in flight at most
	SeatRetries   int           // choices again after a 409
	MinPoll       time.Duration // lower bound on polling, whatever the server says (0: obey the server)
	ThinkTime     time.Duration // time an admitted customer spends picking seats
	TicketPollFor time.Duration // how long to wait for tickets after paying
	// Members join with the member tier in their identity token;
	// CodeHolders with an access code (Config.AccessCodes), one each.
	Members     float64
	CodeHolders float64
	// BestAvailable is the share of customers who ask for "N in category
	// C" (best available) rather than pick seats, as most buyers of a big
	// sale do; Standing the share of those who ask for standing places
	// when the venue has a standing area. Wheelchair is the share of
	// best-available parties of two or more who need a wheelchair place
	// (one, with a companion seat). AcceptSplit is the share of parties
	// told no seats are free together who hold the split offered; the
	// others ask again.
	BestAvailable float64
	Standing      float64
	Wheelchair    float64
	AcceptSplit   float64
	// FreshCounts: best-available parties choose by the places left as of
	// now, the seat map's counts less the crowd's holds since the map's
	// asOf. Booking's map lags by up to a few seconds (its max-age, and
	// the stale copy it serves while refreshing), and the crowd is the
	// only buyer, so this stands for counts served fresh. false: the
	// map's counts as served, and parties ask for places held seconds ago.
	FreshCounts bool
}

// DefaultProfile is a crowd with a little of every kind of behaviour.
func DefaultProfile() Profile {
	return Profile{
		Customers:     100000,
		PreQueue:      0.02,
		JoinWindow:    20 * time.Second,
		Abandon:       0.02,
		NoClaim:       0.01,
		HoldExpire:    0.03,
		WebhookTwice:  0.1,
		WebhookLate:   0.05,
		PayFail:       0.01,
		MaxSeats:      4,
		Concurrency:   256,
		SeatRetries:   3,
		ThinkTime:     200 * time.Millisecond,
		TicketPollFor: 30 * time.Second,
		BestAvailable: 0.8,
		Standing:      0.3,
		Wheelchair:    0.01,
		AcceptSplit:   0.5,
		FreshCounts:   true,
	}
}

// ParseProfile applies "key=value,key=value" overrides to p. Keys are the
// lower-cased field names: customers, prequeue, joinwindow, abandon,
// noclaim, holdexpire, webhooktwice, webhooklate, payfail, maxseats,
// concurrency, seatretries, minpoll, thinktime, ticketpollfor, members,
// codeholders, bestavailable, standing, wheelchair, acceptsplit,
// freshcounts (true or false).
func ParseProfile(p Profile, s string) (Profile, error) {
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("profile: %q is not key=value", kv)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case "customers":
			p.Customers, err = positiveInt(v)
		case "maxseats":
			p.MaxSeats, err = positiveInt(v)
		case "concurrency":
			p.Concurrency, err = positiveInt(v)
		case "seatretries":
			p.SeatRetries, err = strconv.Atoi(v)
		case "prequeue":
			p.PreQueue, err = fraction(v)
		case "abandon":
			p.Abandon, err = fraction(v)
		case "noclaim":
			p.NoClaim, err = fraction(v)
		case "holdexpire":
			p.HoldExpire, err = fraction(v)
		case "webhooktwice":
			p.WebhookTwice, err = fraction(v)
		case "webhooklate":
			p.WebhookLate, err = fraction(v)
		case "payfail":
			p.PayFail, err = fraction(v)
		case "members":
			p.Members, err = fraction(v)
		case "codeholders":
			p.CodeHolders, err = fraction(v)
		case "bestavailable":
			p.BestAvailable, err = fraction(v)
		case "standing":
			p.Standing, err = fraction(v)
		case "wheelchair":
			p.Wheelchair, err = fraction(v)
		case "acceptsplit":
			p.AcceptSplit, err = fraction(v)
		case "freshcounts":
			p.FreshCounts, err = strconv.ParseBool(v)
		case "joinwindow":
			p.JoinWindow, err = time.ParseDuration(v)
		case "minpoll":
			p.MinPoll, err = time.ParseDuration(v)
		case "thinktime":
			p.ThinkTime, err = time.ParseDuration(v)
		case "ticketpollfor":
			p.TicketPollFor, err = time.ParseDuration(v)
		default:
			return p, fmt.Errorf("profile: unknown key %q", k)
		}
		if err != nil {
			return p, fmt.Errorf("profile: %s: %w", k, err)
		}
	}
	return p, p.Validate()
}

// Validate checks the profile is usable.
func (p Profile) Validate() error {
	switch {
	case p.Customers < 1:
		return fmt.Errorf("profile: customers must be at least 1")
	case p.MaxSeats < 1 || p.MaxSeats > 10:
		return fmt.Errorf("profile: maxseats must be 1..10")
	case p.Concurrency < 1:
		return fmt.Errorf("profile: concurrency must be at least 1")
	case p.Abandon+p.NoClaim > 1:
		return fmt.Errorf("profile: abandon + noclaim exceed 1")
	case p.HoldExpire+p.PayFail > 1:
		return fmt.Errorf("profile: holdexpire + payfail exceed 1")
	case p.Members < 0 || p.CodeHolders < 0:
		return fmt.Errorf("profile: members and codeholders must be fractions")
	case p.Members+p.CodeHolders > 1:
		return fmt.Errorf("profile: members + codeholders exceed 1")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"bestavailable", p.BestAvailable}, {"standing", p.Standing}, {"wheelchair", p.Wheelchair}, {"acceptsplit", p.AcceptSplit}} {
		if f.v < 0 || f.v > 1 {
			return fmt.Errorf("profile: %s must be between 0 and 1", f.name)
		}
	}
	return nil
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n < 1 {
		err = fmt.Errorf("must be at least 1")
	}
	return n, err
}

func fraction(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && (f < 0 || f > 1) {
		err = fmt.Errorf("must be between 0 and 1")
	}
	return f, err
}
