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

import "github.com/ticketfair/ticketfair/workloads/internal/zone"

// postOpenBase separates the two cohorts in the queue's score space:
// pre-queue members score below it (a random key in [0, 2^52) when the
// pre-queue is shuffled, the arrival sequence when it is FIFO), members who
// join after opening score postOpenBase + the next number of the arrival
// sequence. Every score stays an exact integer in a float64.
const postOpenBase = 1 << 52

// maxShuffleKey bounds the pre-queue's random keys.
const maxShuffleKey = postOpenBase

// keys are the Redis keys of one event. They share the hash tag {eventId},
// so every script touches one Redis Cluster slot.
type keys struct {
	queue     string // ZSET waiting customers, scored by place
	customers string // HASH customer -> "state|arrival|score|sid"
	active    string // ZSET sessions, scored by expiry ms (zone contract)
	remaining string // seats left, written by booking (zone contract)
	inventory string // HASH held, sold: written by booking with remaining (zone contract)
	arrival   string // INCR: the places given, in order (see joinScript)
	preRank   string // INCR: rank of admitted pre-queue members
	epoch     string // fencing epoch of the admitter
	watermark string // score of the last admitted customer
	admitted  string // admissions so far
	admitLog  string // LIST "customer|arrivalSeq|queueSeq|cohort" (fairness audit)
	gen       string // this copy of the queue's generation, set by the first join
	prefix    string // the event's hash-tagged prefix, for the keys named per queue
	codes     string // HASH sha256(access code) -> the customer who redeemed it
	wrr       string // HASH queue -> the weighted round robin's credit (admitScript)
	admittedQ string // HASH queue -> admissions from it
	admitRate string // the rate autotune chose, for the stats (autotune.go)
}

func keysFor(eventID int64) keys {
	p := zone.Prefix(eventID)
	return keys{
		queue:     p + "queue",
		customers: p + "customers",
		active:    zone.ActiveKey(eventID),
		remaining: zone.RemainingKey(eventID),
		inventory: zone.InventoryKey(eventID),
		arrival:   p + "arrival",
		preRank:   p + "prerank",
		epoch:     p + "epoch",
		watermark: p + "watermark",
		admitted:  p + "admitted",
		admitLog:  zone.AdmitLogKey(eventID),
		gen:       p + "generation",
		prefix:    p,
		codes:     p + "codes",
		wrr:       p + "wrr",
		admittedQ: p + "admittedq",
		admitRate: p + "admitrate",
	}
}

// DefaultQueue is the queue of an event without phases; its keys are the
// event's first queue's, so an event without phases keeps today's keys.
const DefaultQueue = "general"

// queueKey is the ZSET of queue name's waiting customers.
func (k keys) queueKey(name string) string {
	if name == DefaultQueue || name == "" {
		return k.queue
	}
	return k.prefix + "queue:" + name
}

// watermarkKey holds the score of queue name's last admitted customer.
func (k keys) watermarkKey(name string) string {
	if name == DefaultQueue || name == "" {
		return k.watermark
	}
	return k.prefix + "watermark:" + name
}

// preRankKey counts queue name's admitted pre-queue members.
func (k keys) preRankKey(name string) string {
	if name == DefaultQueue || name == "" {
		return k.preRank
	}
	return k.prefix + "prerank:" + name
}

// challengePrefix prefixes the keys of used proof-of-work challenges.
func (k keys) challengePrefix() string { return k.prefix + "challenge:" }

// joinKeys are the KEYS of joinScript and joinManyScript, in their order.
func (k keys) joinKeys() []string {
	return []string{k.customers, k.queue, k.arrival, k.active, k.gen}
}
