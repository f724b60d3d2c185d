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
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/ticketfair/ticketfair/workloads/internal/chaos"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
)

// FaultsReport is the fault plan's part of the report.
type FaultsReport struct {
	Plan    string               `json:"plan"`
	Seed    uint64               `json:"seed"`
	Windows []chaos.WindowReport `json:"windows"`
	// ExitedOnTheirOwn counts, per workload, exits no fault caused; the
	// sale started them again, as Kubernetes would.
	ExitedOnTheirOwn map[string]int `json:"exitedOnTheirOwn"`
}

// Report is the outcome of a local sale. Its JSON form (--report-json) is
// what the tests check.
type Report struct {
	EventID   int64 `json:"eventId"`
	Customers int   `json:"customers"`
	Seats     int   `json:"seats"`
	MaxActive int   `json:"maxActive"`
	// Broker says which Kafka broker carried the sale's orders.
	Broker string `json:"broker,omitempty"`

	SeatsSold            int64      `json:"seatsSold"`
	OrdersPaid           int64      `json:"ordersPaid"`
	OrdersExpired        int64      `json:"ordersExpired"`
	OrdersRefundRequired int64      `json:"ordersRefundRequired"`
	OrdersPending        int64      `json:"ordersPending"`
	TicketsIssued        int64      `json:"ticketsIssued"`
	DoubleSold           DoubleSold `json:"doubleSold"`
	// Places are the checks of standing areas and best available.
	Places            PlaceChecks  `json:"places"`
	OutboxUnpublished int64        `json:"outboxUnpublished"`
	PaidWebhooks      PaidWebhooks `json:"paidWebhooks"`
	// RedisLifetimes is 1 plus the Redis restarts that lost its data;
	// ReadmittedAfterLoss the customers admitted in two of them.
	RedisLifetimes      int           `json:"redisLifetimes"`
	ReadmittedAfterLoss int           `json:"readmittedAfterLoss"`
	Faults              *FaultsReport `json:"faults,omitempty"`

	Fairness loadtest.Fairness `json:"fairness"`
	// Queues is a row per queue of a sale with phases, PhaseChecks the
	// audit's checks of it (AuditConfig.Phases).
	Queues      []QueueRow   `json:"queues,omitempty"`
	PhaseChecks *PhaseChecks `json:"phaseChecks,omitempty"`
	// QueueTimeline is the crowd's reads of the queues' figures (the
	// shares' source), for plotting the sale.
	QueueTimeline []loadtest.QueueSample   `json:"queueTimeline,omitempty"`
	Crowd         loadtest.Counts          `json:"crowd"`
	Endpoints     []loadtest.EndpointStats `json:"endpoints"`

	RedisCommands            map[string]int64 `json:"redisCommands"`
	RedisCommandsPerJoinPoll float64          `json:"redisCommandsPerQueueRequest"`
	RedisScriptsPerJoinPoll  float64          `json:"redisScriptCallsPerQueueRequest"`
	Waiting                  WaitingCost      `json:"waiting"`
	TimeToSellOutSeconds     float64          `json:"timeToSellOutSeconds"`
	DurationSeconds          float64          `json:"durationSeconds"`
	PeakMemoryBytes          map[string]int64 `json:"peakMemoryBytes"`
	// SellOut is when 98% and all of the seats were paid for, from the
	// ledger, and where the last 2% came from (with AuditConfig.SalesOpenAt).
	SellOut *SellOut `json:"sellOut,omitempty"`
	// CPUSeconds is each process's CPU time over the sale (a local sale's).
	CPUSeconds map[string]float64 `json:"cpuSeconds,omitempty"`
	// ServerLatency is the latency the services measured themselves (a
	// local sale's, since each service last started); ServerLatencyError
	// says why it is missing.
	ServerLatency      []ServerLatency `json:"serverLatency,omitempty"`
	ServerLatencyError string          `json:"serverLatencyError,omitempty"`
	// BookingPool is the booking process's connection pool (the first
	// one's, when a sale runs several).
	BookingPool *PoolWait `json:"bookingPool,omitempty"`
	// CPU is where the CPU went, with Options.CPUProfiles.
	CPU *WhereCPU `json:"whereCPU,omitempty"`
	// Bots compares the bots with the people (--bots).
	Bots *BotShares `json:"bots,omitempty"`
	// Door is the mails and the gates after the sale (Options.Door).
	Door *DoorReport `json:"door,omitempty"`

	Problems []string `json:"problems"`
}

// WaitingCost is what waiting people cost, per waiting person per minute:
// the requests the crowd made while waiting (the public state through the
// cache, and per-person polls), those that reached the queue itself (the
// origin), and Redis commands (all services, counting those inside scripts).
type WaitingCost struct {
	PersonMinutes         float64          `json:"personMinutes"`
	CrowdRequests         int64            `json:"crowdRequests"`
	EdgeReads             int64            `json:"edgeReads"` // answered by the simulated CDN edge's copy: no request
	OriginRequests        int64            `json:"originRequests"`
	OriginByOp            map[string]int64 `json:"originByOp"`
	CrowdPerPersonMinute  float64          `json:"crowdRequestsPerPersonMinute"`
	OriginPerPersonMinute float64          `json:"originRequestsPerPersonMinute"`
	RedisPerPersonMinute  float64          `json:"redisCommandsPerPersonMinute"`
}

// waitingFigures fills Waiting from the queue's request counts by
// operation and INFO commandstats before and after the crowd ran.
func (r *Report) waitingFigures(originBefore, originAfter, redisBefore, redisAfter map[string]int64) {
	w := &r.Waiting
	w.PersonMinutes = r.Crowd.WaitingSeconds / 60
	w.CrowdRequests = r.Crowd.StateReads + r.Crowd.PersonalPolls
	w.EdgeReads = r.Crowd.EdgeReads
	w.OriginByOp = map[string]int64{}
	for _, op := range []string{"state", "poll"} {
		w.OriginByOp[op] = originAfter[op] - originBefore[op]
		w.OriginRequests += w.OriginByOp[op]
	}
	var redis int64
	for k, v := range redisAfter {
		if k != "info" {
			redis += v - redisBefore[k]
		}
	}
	if w.PersonMinutes > 0 {
		w.CrowdPerPersonMinute = float64(w.CrowdRequests) / w.PersonMinutes
		w.OriginPerPersonMinute = float64(w.OriginRequests) / w.PersonMinutes
		w.RedisPerPersonMinute = float64(redis) / w.PersonMinutes
	}
}

// DoubleSold are the checks, by SQL on the ledger, that no seat was sold twice.
type DoubleSold struct {
	SeatsInTwoPaidOrders int64 `json:"seatsInTwoPaidOrders"`
	SoldWithoutPaidOrder int64 `json:"soldWithoutPaidOrder"`
	PaidSeatsNotSold     int64 `json:"paidSeatsNotSold"`
	DuplicateTickets     int64 `json:"duplicateTickets"`
}

// Total is the number of violations: must be 0.
func (d DoubleSold) Total() int64 {
	return d.SeatsInTwoPaidOrders + d.SoldWithoutPaidOrder + d.PaidSeatsNotSold + d.DuplicateTickets
}

func (r *Report) redisFigures(before, after map[string]int64) {
	r.RedisCommands = map[string]int64{}
	var total, scripts int64
	for k, v := range after {
		if d := v - before[k]; d > 0 && k != "info" {
			r.RedisCommands[k] = d
			total += d
			if k == "evalsha" || k == "eval" {
				scripts += d
			}
		}
	}
	var queueReqs uint64
	for _, e := range r.Endpoints {
		if e.Endpoint == "join" || e.Endpoint == "poll" {
			queueReqs += e.Requests
		}
	}
	if queueReqs > 0 {
		r.RedisCommandsPerJoinPoll = float64(total) / float64(queueReqs)
		r.RedisScriptsPerJoinPoll = float64(scripts) / float64(queueReqs)
	}
}

// check records every violated promise in Problems.
func (r *Report) check() {
	if n := r.DoubleSold.Total(); n != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d double-sold violations: %+v", n, r.DoubleSold))
	}
	r.Problems = r.Places.check(r.Problems)
	if r.TicketsIssued != r.SeatsSold {
		r.Problems = append(r.Problems, fmt.Sprintf("tickets issued %d != seats sold %d", r.TicketsIssued, r.SeatsSold))
	}
	if r.Fairness.AdmittedTwice != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d customers admitted twice", r.Fairness.AdmittedTwice))
	}
	if r.Fairness.PostOpenInversions != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d admissions out of FIFO order after opening", r.Fairness.PostOpenInversions))
	}
	if r.Crowd.MaxActiveSample > int64(r.MaxActive) {
		r.Problems = append(r.Problems, fmt.Sprintf("active %d sampled above MAX_ACTIVE %d", r.Crowd.MaxActiveSample, r.MaxActive))
	}
	if r.OutboxUnpublished != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d outbox rows unpublished after the sale", r.OutboxUnpublished))
	}
	if r.PaidWebhooks.Broken != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d accepted payments ended neither PAID nor refunded once", r.PaidWebhooks.Broken))
	}
	if r.Crowd.RejoinFailed != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d customers who lost their place could not join again", r.Crowd.RejoinFailed))
	}
	r.Bots.check(r)
}

// Print writes the report as a person reads it.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nSALE REPORT\tevent %d, %d customers, %d seats, MAX_ACTIVE %d\n", r.EventID, r.Customers, r.Seats, r.MaxActive)
	if r.Broker != "" {
		fmt.Fprintf(tw, "kafka\t%s\n", r.Broker)
	}
	fmt.Fprintf(tw, "seats sold\t%d\n", r.SeatsSold)
	fmt.Fprintf(tw, "orders paid / expired / refund / pending\t%d / %d / %d / %d\n", r.OrdersPaid, r.OrdersExpired, r.OrdersRefundRequired, r.OrdersPending)
	fmt.Fprintf(tw, "tickets issued\t%d\n", r.TicketsIssued)
	fmt.Fprintf(tw, "double-sold (SQL)\t%d\n", r.DoubleSold.Total())
	r.Places.print(tw)
	fmt.Fprintf(tw, "outbox unpublished\t%d\n", r.OutboxUnpublished)
	fmt.Fprintf(tw, "accepted payments\t%d: %d paid, %d refunded once, %d neither\n", r.PaidWebhooks.Delivered, r.PaidWebhooks.Paid, r.PaidWebhooks.RefundedOnce, r.PaidWebhooks.Broken)
	fmt.Fprintf(tw, "admitted / twice\t%d / %d\n", r.Fairness.Admitted, r.Fairness.AdmittedTwice)
	if r.RedisLifetimes > 1 {
		fmt.Fprintf(tw, "redis lost its data\t%d times; places lost %d, joined again %d, could not %d; admitted again after the loss %d\n",
			r.RedisLifetimes-1, r.Crowd.PlacesLost, r.Crowd.Rejoined, r.Crowd.RejoinFailed, r.ReadmittedAfterLoss)
	}
	fmt.Fprintf(tw, "FIFO after opening\t%d admitted, %d out of order\n", r.Fairness.PostOpenAdmitted, r.Fairness.PostOpenInversions)
	fmt.Fprintf(tw, "pre-queue shuffle\t%d admitted, rank correlation with arrival %.3f%s\n", r.Fairness.PreQueueAdmitted, r.Fairness.PreQueueSpearman, preQueuesText(r.Fairness.PreQueues))
	printQueues(tw, r.Fairness.Queues, r.Queues)
	printPhaseChecks(tw, r.PhaseChecks)
	fmt.Fprintf(tw, "max active (sampled)\t%d\n", r.Crowd.MaxActiveSample)
	fmt.Fprintf(tw, "time to sell out\t%.1fs after opening\n", r.TimeToSellOutSeconds)
	printSellOut(tw, r.SellOut)
	if r.RedisCommands != nil { // measured by a local sale only
		fmt.Fprintf(tw, "redis per join/poll\t%.3f script calls, %.3f commands (all services, counting those inside scripts)\n", r.RedisScriptsPerJoinPoll, r.RedisCommandsPerJoinPoll)
		fmt.Fprintf(tw, "waiting, per person-minute\t%.3f origin requests (%d state fills, %d per-person polls), %.2f crowd requests through the cache (besides %d state reads from the CDN edge's copy), %.2f Redis commands; %.0f person-minutes\n",
			r.Waiting.OriginPerPersonMinute, r.Waiting.OriginByOp["state"], r.Waiting.OriginByOp["poll"], r.Waiting.CrowdPerPersonMinute,
			r.Waiting.EdgeReads, r.Waiting.RedisPerPersonMinute, r.Waiting.PersonMinutes)
	}
	fmt.Fprintf(tw, "crowd\tjoined %d (pre-queue %d), abandoned %d, never claimed %d, sold-out seen %d, holds %d, conflicts %d, let expire %d, paid %d, webhook twice %d\n",
		r.Crowd.Joined, r.Crowd.JoinedPreQueue, r.Crowd.Abandoned, r.Crowd.NeverClaimed, r.Crowd.SoldOutSeen,
		r.Crowd.HoldsOK, r.Crowd.HoldConflicts, r.Crowd.HoldsAbandoned, r.Crowd.PaymentsSent, r.Crowd.WebhooksTwice)
	fmt.Fprintf(tw, "tickets seen by buyers\t%d of %d seats paid for (in the profile's ticketpollfor after paying)\n",
		r.Crowd.TicketsSeen, r.Crowd.SeatsPaidFor)
	r.Door.print(tw)
	printBots(tw, r.Bots)
	names := make([]string, 0, len(r.PeakMemoryBytes))
	for n := range r.PeakMemoryBytes {
		names = append(names, n)
	}
	sort.Strings(names)
	var mem []string
	for _, n := range names {
		mem = append(mem, fmt.Sprintf("%s %.0f MiB", n, float64(r.PeakMemoryBytes[n])/(1<<20)))
	}
	if len(mem) > 0 {
		fmt.Fprintf(tw, "peak memory\t%s\n", strings.Join(mem, ", "))
	}
	if len(r.CPUSeconds) > 0 {
		names := make([]string, 0, len(r.CPUSeconds))
		var total float64
		for n, v := range r.CPUSeconds {
			names = append(names, n)
			total += v
		}
		sort.Slice(names, func(i, j int) bool { return r.CPUSeconds[names[i]] > r.CPUSeconds[names[j]] })
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %.0f", n, r.CPUSeconds[n]))
		}
		fmt.Fprintf(tw, "CPU seconds (since start)\t%s; %.0f in all, %d cores × %.0f s of sale\n", strings.Join(parts, ", "), total, runtime.NumCPU(), r.DurationSeconds)
	}
	fmt.Fprintf(tw, "duration\t%.1fs\n", r.DurationSeconds)
	tw.Flush()
	printHolds(tw, r.Crowd.Holds)
	tw.Flush()
	fmt.Fprintf(tw, "\nENDPOINT\tREQUESTS\tERRORS\tP50 ms\tP99 ms\tSTATUS\n")
	for _, e := range r.Endpoints {
		codes := make([]int, 0, len(e.ByStatus))
		for c := range e.ByStatus {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d×%d", c, e.ByStatus[c]))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%s\n", e.Endpoint, e.Requests, e.Errors, e.P50Ms, e.P99Ms, strings.Join(parts, " "))
	}
	tw.Flush()
	for _, e := range r.Endpoints {
		if e.FirstError != "" {
			fmt.Fprintf(w, "%s: first transport error: %s\n", e.Endpoint, e.FirstError)
		}
	}
	if len(r.ServerLatency) > 0 {
		fmt.Fprintf(tw, "\nSERVER SIDE\tREQUESTS\tP50 ms\tP99 ms\t(the services' own histograms, interpolated within a bucket)\n")
		for _, l := range r.ServerLatency {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t\n", l.Name, l.Count, l.P50*1000, l.P99*1000)
		}
		tw.Flush()
	}
	if p := r.BookingPool; p != nil && p.Acquires > 0 {
		fmt.Fprintf(w, "booking's connection pool: %.0f connections, %.0f acquires, %.0f of them waited for a connection; %.1f s acquiring in all (%.2f ms an acquire)\n",
			p.Size, p.Acquires, p.Waited, p.WaitSeconds, p.WaitSeconds*1000/p.Acquires)
	}
	if r.ServerLatencyError != "" {
		fmt.Fprintf(w, "server-side latency: %s\n", r.ServerLatencyError)
	}
	if r.Faults != nil {
		fmt.Fprintf(w, "\nFAULT PLAN (seed %d)\n%s", r.Faults.Seed, r.Faults.Plan)
		chaos.PrintWindows(w, r.Faults.Windows)
		if len(r.Faults.ExitedOnTheirOwn) > 0 {
			fmt.Fprintf(w, "\nexited on their own (started again): %v\n", r.Faults.ExitedOnTheirOwn)
		}
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "\nOK: nothing sold twice, one ticket per sold seat, fair admission.")
	} else {
		fmt.Fprintln(w, "\nPROBLEMS:")
		for _, p := range r.Problems {
			fmt.Fprintln(w, "  - "+p)
		}
	}
}

// progressLine redraws one terminal line with the sale's live figures; on
// something that is not a terminal it writes a line every few seconds.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	lines int
}

func newProgressLine(w io.Writer) *progressLine {
	tty := false
	under := w
	if sw, ok := w.(*syncWriter); ok {
		under = sw.w
	}
	if f, ok := under.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progressLine{w: w, tty: tty}
}

func (p *progressLine) update(pr loadtest.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%6.1fs  waiting %7d  active %5d  held %5d  sold %6d  %7.0f req/s",
		pr.Elapsed.Seconds(), pr.Waiting, pr.Active, pr.Held, pr.Sold, pr.ReqPerSec)
	if p.tty {
		fmt.Fprint(p.w, "\r"+line+"   ")
		return
	}
	if p.lines++; p.lines%10 == 1 {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progressLine) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
