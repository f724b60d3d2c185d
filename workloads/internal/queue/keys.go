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
	}
}

// joinKeys are the KEYS of joinScript and joinManyScript, in their order.
func (k keys) joinKeys() []string {
	return []string{k.customers, k.queue, k.arrival, k.active, k.gen}
}
