package runtime

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/registry"
)

// jobRun is one claimed delivery of a job.
type jobRun struct {
	id      string
	due     time.Time // when this delivery became due: the score it was claimed at (RunInfo.Due)
	fire    time.Time // its scheduled instant (RunInfo.Fire): its first due, or its envelope's fire
	attempt int
	env     envelope
	raw     string // the envelope as stored
	reg     *registry.Entry
	claim   string    // the id of the claim that delivered it, its owner in Redis
	claimed time.Time // when
	// slot is its capped type's slots (nil: not capped), which it counts
	// against until it ends or is given back (freeSlot); runs is true while
	// it holds one of the held slots (it started).
	slot *jobSlots
	runs bool
}

// jobScanAhead is how many due jobs of other types (WithTasks) a job claim
// looks past, beyond the jobs it wants; jobScanRetry is how soon it looks
// again when it found that many and more due: a backlog of another fleet's
// jobs costs each such claim about a millisecond of Redis time, and delays
// this process's jobs behind it by up to jobScanRetry.
const (
	jobScanAhead = 1024
	jobScanRetry = 100 * time.Millisecond
)

// claimJobs claims up to limit+room due jobs: it starts limit of them on
// the worker slots the dispatch loop holds, and keeps the rest (room at
// most) waiting for a worker in this process (see jobRunner.waiting). It
// returns the due time (unix ms) of the next job: 0 when there may be more
// due now, -1 when the queue is empty; and how many it started.
func (jr *jobRunner) claimJobs(ctx context.Context, limit, room int) (int64, int, error) {
	if limit <= 0 {
		return 0, 0, nil
	}
	limits := jr.jobLimits()
	if jr.rated {
		// A process with a rated type claims no job ahead of a free
		// worker: a start waiting here would start later than its place
		// in the rate window. (A capped type's waiting jobs are counted
		// in flight: they hold slots the cap counts, so the cap holds.)
		room = 0
	}
	want := limit + room
	bounded := false
	if jr.cappedOnly {
		// Every type this process runs is capped: it can take no more
		// than its slots not in flight, and a claim for more would read
		// (and pass over) pages of jobs it cannot take.
		free := 0
		for _, l := range limits {
			ahead := rdb.JobSlotsAhead
			if l.RateN > 0 {
				ahead = 1 // a rated type's claim is its start: none waits for a slot
			}
			free += max(0, ahead*l.MaxRunning-int(jr.capped[l.Type].inflight.Load()))
		}
		if !jr.rated {
			// Jobs beyond its held slots wait for a slot, not for a
			// worker (the ones that end start them): the claim takes
			// its hand, not only its free workers, as far as the
			// waiting room holds those that start beyond them.
			want = max(want, min(free, limit+cap(jr.waiting)-len(jr.waiting)))
		}
		if free <= want {
			want, bounded = max(1, free), true
			limit = min(limit, want)
		}
	}
	claim := rdb.ClaimID(jr.id, jr.claimSeq.Add(1))
	var jobs []rdb.ClaimedJob
	var nextMS int64
	var ownFull []string
	var held map[string]int
	var err error
	if levels := jr.claimLevels(); levels != nil || len(limits) > 0 {
		// Flow control: some type of this build has a priority (the claim
		// takes its levels' jobs by weighted round robin, see
		// TaskConfig.Priority), or some of this process's types have
		// limits (MaxRunning, Rate: their jobs wait in the queue while
		// full).
		limits = slices.Clone(limits)
		for i := range limits {
			if s := jr.capped[limits[i].Type]; s != nil {
				limits[i].InFlight = int(s.inflight.Load())
			}
		}
		var c rdb.FlowClaim
		c, err = jr.db.ClaimJobsFlow(ctx, rdb.ClaimFlow{ClaimID: claim, Limit: want, Lease: jr.jobLease(),
			Types: jr.jobTypes(), Limits: limits, Levels: levels, TypeLevels: jr.typeLevels,
			Scan: min(want+jobScanAhead, rdb.MaxJobScan), Retry: jr.scanRetry})
		jobs, nextMS, ownFull, held = c.Jobs, c.NextMS, c.OwnFull, c.Held
		if err == nil && levels != nil {
			jr.levels = c.Levels
		}
		// A rate window holding a foreign value (a RateKey window's name
		// comes with its jobs: no check at start knows it) leaves its
		// jobs waiting; moved aside, they run from the next claim on.
		for _, key := range c.Foreign {
			jr.moveAside(ctx, key, "zset")
		}
	} else if types := jr.jobTypes(); types != nil {
		// Only the jobs of this process's types (roles.go): the others
		// stay in the queue for the processes that run them.
		jobs, nextMS, err = jr.db.ClaimJobsOf(ctx, claim, want, jr.jobLease(), types, min(want+jobScanAhead, rdb.MaxJobScan), jr.scanRetry)
	} else {
		jobs, nextMS, err = jr.db.ClaimJobs(ctx, claim, want, jr.jobLease())
	}
	if err != nil {
		return 0, 0, err
	}
	claimed := make([]*jobRun, len(jobs))
	now := time.Now()
	for i, j := range jobs {
		claimed[i] = &jobRun{id: j.ID, due: time.UnixMilli(j.DueMS), fire: time.UnixMilli(j.FirstDueMS),
			attempt: j.Attempt, raw: j.Envelope, claim: claim, claimed: now}
	}
	// A claim bounded by this process's free slots that took them all
	// leaves the rest due for want of its own slots, as the script's
	// ownFull would.
	filled := bounded && len(jobs) == want
	if len(jr.capped) > 0 && jr.holdSlots(claimed, limits, held, ownFull, filled) {
		nextMS = 0 // a job of a type left for want of its slots ended during the claim: claim again now
	}
	if len(claimed) > 0 {
		jr.mu.Lock()
		jr.claims[claim] = len(claimed)
		jr.mu.Unlock()
	}
	// Jobs waiting for a held slot go first: the claim may hold more.
	started := jr.startQueued(limit)
	var overflow []*jobRun
	for _, j := range claimed {
		if started < limit {
			if jr.begin(j) {
				started++
			}
			continue
		}
		jr.credit.Add(-1)
		select {
		case jr.waiting <- j:
		default: // maintenance refilled the room meanwhile
			overflow = append(overflow, j)
		}
	}
	if len(overflow) > 0 {
		go jr.giveBack(overflow)
	}
	if len(jobs) == want && !filled {
		return 0, started, nil
	}
	return nextMS, started, nil
}

// jobLimits returns the flow control of this process's types that have
// any (TaskConfig.MaxRunning, Rate), read from its registry at the first
// claim: nil when none has, and the claims take the plain scripts. The
// limits each process passes are its own: processes of builds that
// disagree each enforce theirs on the jobs they claim.
func (jr *jobRunner) jobLimits() []rdb.JobLimit {
	jr.limitsOnce.Do(func() {
		for _, e := range jr.reg.Entries() {
			c := e.Config()
			if c.MaxRunning == 0 && c.Rate.IsZero() {
				continue
			}
			jr.limits = append(jr.limits, rdb.JobLimit{Type: c.Name, MaxRunning: c.MaxRunning, RateN: c.Rate.N, RatePer: c.Rate.Per})
			if c.MaxRunning > 0 {
				if jr.capped == nil {
					jr.capped = map[string]*jobSlots{}
				}
				ahead := int64(rdb.JobSlotsAhead)
				if c.Rate.N > 0 {
					ahead = 1 // a rated type's claim is its start: none waits for a slot
				}
				jr.capped[c.Name] = &jobSlots{ahead: ahead}
				jr.cappedTypes = append(jr.cappedTypes, c.Name)
			}
			jr.rated = jr.rated || c.Rate.N > 0
		}
		jr.cappedOnly = len(jr.capped) > 0 && len(jr.capped) == len(jr.reg.Entries())
	})
	return jr.limits
}

// prefetchRoom is how many jobs the next claim may take beyond the free
// workers: the credit of jobs finished and not yet replaced by a job
// claimed ahead, as far as the waiting queue has room. So a process claims
// ahead only what it has shown it runs: in a burst of short jobs each claim
// takes a full batch while the workers run the previous one, and a process
// busy with long jobs claims little more than it has free workers.
func (jr *jobRunner) prefetchRoom() int {
	credit := jr.credit.Load()
	if space := int64(cap(jr.waiting) - len(jr.waiting)); credit > space {
		return int(space)
	}
	return int(credit)
}

// startWaiting starts up to limit claimed jobs that wait for a worker, on
// worker slots the dispatch loop holds, and returns how many it started.
func (jr *jobRunner) startWaiting(limit int) int {
	n := 0
	for n < limit {
		select {
		case j := <-jr.waiting:
			if jr.begin(j) {
				n++
			}
		default:
			return n
		}
	}
	return n
}

// freeWorker is called when a job's handler returns, on the worker slot
// it held: the slot goes to the next claimed job waiting for a worker
// while more than half the waiting room is full, or else back to the
// dispatch loop, which starts a waiting job on it and claims more: so the
// next claim is under way while the workers still have jobs. While the
// scheduler stops, waiting jobs are left to be given back.
func (jr *jobRunner) freeWorker() {
	if jr.credit.Add(1) > int64(cap(jr.waiting)) {
		jr.credit.Store(int64(cap(jr.waiting)))
	}
	if jr.runCtx.Err() == nil && !jr.closing.Load() && len(jr.waiting) > cap(jr.waiting)/2 {
		select {
		case j := <-jr.waiting:
			if jr.begin(j) {
				return
			}
		default:
		}
	}
	jr.slots <- struct{}{}
	if len(jr.waiting) > 0 {
		select { // the dispatch loop may be asleep: the waiting jobs need it
		case jr.kick <- struct{}{}:
		default:
		}
	}
}

// maxJobWait is how long a claimed job waits for a worker in this process
// before maintenance gives it back to the queue, for any process to take.
const maxJobWait = time.Second

// giveBackWaiting puts claimed jobs that still wait for a worker back in
// the queue, due at once, their attempt not counted: all of them (when the
// scheduler stops) or those that waited longer than maxJobWait. It returns
// once Redis has them.
func (jr *jobRunner) giveBackWaiting(all bool) {
	var back, keep []*jobRun
	if all || jr.closing.Load() {
		back = jr.queuedJobs()
	}
	for {
		select {
		case j := <-jr.waiting:
			if all || jr.closing.Load() || time.Since(j.claimed) > maxJobWait {
				back = append(back, j)
			} else {
				keep = append(keep, j)
			}
			continue
		default:
		}
		break
	}
	for _, j := range keep {
		select {
		case jr.waiting <- j:
		default: // the dispatch loop refilled the room meanwhile
			back = append(back, j)
		}
	}
	jr.giveBack(back)
}

// giveBack puts claimed jobs that have not started back in the queue, due
// at once, their attempt not counted, and returns once Redis has them.
func (jr *jobRunner) giveBack(back []*jobRun) {
	if len(back) == 0 {
		return
	}
	due := ms(jr.clock.Now())
	acks := make([]*jobAck, len(back))
	for i, j := range back {
		jr.freeSlot(j)
		acks[i] = &jobAck{j: j, action: "release", due: due, done: make(chan struct{})}
		jr.acks.add(acks[i])
	}
	for _, a := range acks {
		<-a.done
	}
	jr.log.Debug("claimed jobs given back: no worker took them", "jobs", len(back))
}

// jobLease is how long a claimed job stays with its process without a
// renewal; maintenance renews it every heartbeat.
func (jr *jobRunner) jobLease() time.Duration { return 2 * jr.opts.processTTL }

// jobRunner is the job runner component: claims of due jobs, the handler
// goroutines of jobs, claimed jobs waiting for a worker, and the queue of
// acks.
type jobRunner struct {
	*engine
	mu sync.Mutex // guards claims, unknownTypes
	// goroutines run the handlers, reused from job to job (run.go).
	goroutines *handlerGoroutines[*jobRun]
	// waiting holds jobs claimed ahead of free workers (at most a batch);
	// a worker whose handler returns takes the next one. They are in
	// flight (leased to this process, their leases renewed) meanwhile.
	waiting chan *jobRun
	credit  atomic.Int64  // jobs finished less jobs claimed ahead (see prefetchRoom)
	kick    chan struct{} // ends the dispatch loop's sleep: jobs wait and a worker is free
	closing atomic.Bool   // set when the dispatch loop has stopped
	acks    batchQueue[*jobAck]
	// claimSeq numbers this process's claims.
	claimSeq atomic.Uint64
	// claims counts, by claim id, the jobs of each claim not yet acked; a
	// claim leaves when its last ack is written. Maintenance renews the
	// lease of every claim here.
	claims       map[string]int
	unknownTypes onceSet // job types seen that this process lacks
	// limits are the flow control of this process's types (jobLimits),
	// capped the slots of those with MaxRunning (cappedTypes their names),
	// rated whether one has a rate, cappedOnly whether every type it
	// runs is capped; set once.
	limitsOnce  sync.Once
	limits      []rdb.JobLimit
	capped      map[string]*jobSlots
	cappedTypes []string
	rated       bool
	cappedOnly  bool
	// scanRetry is jobScanRetry (tests set it longer).
	scanRetry time.Duration
	// reclaim is set by the end of a job of a type whose last claim left
	// jobs for want of this process's slots: the dispatch loop's next
	// round claims jobs whatever it knows of the queue's head.
	reclaim atomic.Bool
	// levels are the priority levels of its claims with their round robin
	// state (claimLevels; only the dispatch loop claims), typeLevels its
	// types whose priority is not 0.
	levelsOnce sync.Once
	levels     []rdb.Level
	typeLevels map[string]int
}

func newJobRunner(e *engine) *jobRunner {
	jr := &jobRunner{engine: e, waiting: make(chan *jobRun, e.opts.batch), kick: make(chan struct{}, 1),
		claims: make(map[string]int), scanRetry: jobScanRetry}
	jr.acks.write = jr.flushAcks
	jr.goroutines = newHandlerGoroutines(e, jr.executeJob)
	return jr
}

// startJob runs j, a claimed job, on a handler goroutine (an idle one, or
// a new one: see handlerGoroutines), on a worker slot the caller holds.
func (jr *jobRunner) startJob(j *jobRun) {
	jr.goroutines.start(j)
}

// executeJob decodes and runs one job, gives its worker back, and acks it
// (done, retried with backoff, or dead-lettered) in the next batch of acks.
// The job stays in flight here, its lease renewed, until the ack is
// written; hooks and listeners are told after that. A job whose envelope
// does not decode is dead-lettered; one whose type this process lacks is
// put back for another process.
func (jr *jobRunner) executeJob(j *jobRun) {
	env, err := decodeEnvelope(j.raw)
	if err != nil {
		jr.deadJob(j, err)
		return
	}
	j.env = env
	if env.Fire > 0 {
		j.fire = time.UnixMilli(env.Fire) // the scheduled fire this job retries, or its first due before it died
	}
	if j.reg = jr.reg.Entry(j.env.Task); j.reg == nil {
		jr.releaseJob(j)
		return
	}
	rep, rec := jr.runHandler(jr.runCtx, handlerRun{
		info:  RunInfo{Task: j.env.Task, JobID: j.id, Fire: j.fire, Due: j.due, Attempt: j.attempt, Process: jr.id},
		entry: j.reg,
		build: func() (TaskInterface, error) { return decodePayload(j.reg, jr.newValue, j.env.Payload) },
	})
	action, due := "ok", int64(0)
	if rep.err != nil {
		retries := j.reg.Config().Retries
		if j.env.Retries != nil {
			retries = *j.env.Retries
		}
		if j.attempt <= retries {
			action, due = "retry", ms(rec.End.Add(jr.backoff(j.attempt)))
		} else {
			action = "dead"
		}
	}
	jr.endJob(j, action, due, rec, rep)
}

// endJob queues j's ack and gives its worker slot back. The job stays in
// flight, its lease renewed, until the ack is written; then the hooks and
// listeners are told of rep (when not nil). Run waits for both.
func (jr *jobRunner) endJob(j *jobRun, action string, due int64, rec Record, rep *runReport) {
	s := j.slot
	jr.freeSlot(j)
	jr.running.Add(1) // done once the ack is written and reported
	jr.acks.add(&jobAck{j: j, action: action, due: due, rec: rec, report: rep, counted: true})
	if jr.runQueued(s) {
		return // the worker took the next job of its type waiting for the slot it freed
	}
	jr.freeWorker() // the handler is done: the worker may take the next job
}

// backoff is the delay before retry number attempt: exponential from the
// base (WithRetryBackoff), capped at an hour, with ±20% jitter.
func (e *engine) backoff(attempt int) time.Duration {
	d := e.opts.retryBackoff << min(attempt-1, 20)
	d = min(d, time.Hour)
	jitter := time.Duration((rand.Float64()*0.4 - 0.2) * float64(d))
	return d + jitter
}

// jobAck is the end of one delivery, waiting to be written.
type jobAck struct {
	j      *jobRun
	action string // ok, retry, dead or release
	due    int64  // retry or release: when it is due again (unix ms)
	rec    Record
	done   chan struct{} // when not nil: closed once written (or given up on)
	report *runReport    // when not nil: told to hooks and listeners once written
	// counted: the ack holds a count of Scheduler.running (see endJob).
	counted bool
}

// flushAcks writes a batch of acks, then wakes those waiting for them and
// has the runs reported.
func (jr *jobRunner) flushAcks(batch []*jobAck) {
	jr.writeAcks(batch)
	var reports []*runReport
	for _, a := range batch {
		if a.done != nil {
			close(a.done)
		}
		switch {
		case a.report != nil && a.counted:
			reports = append(reports, a.report) // its count is done once reported
		case a.counted:
			jr.running.Done()
		}
	}
	if len(reports) > 0 {
		go jr.reportRuns(reports)
	}
}

// writeAcks writes a batch of acks in one script call, retrying while Redis
// is away (for up to 30s; after that the jobs are delivered again when their
// leases expire). Of each type's history only the newest records that the
// history keeps are sent.
func (jr *jobRunner) writeAcks(batch []*jobAck) {
	recorded := map[string]int{} // per type: acks that leave a history record
	var ending []string
	jr.mu.Lock()
	for _, a := range batch {
		if a.action != "release" {
			recorded[a.j.env.Task]++
		}
		if jr.claims[a.j.claim]--; jr.claims[a.j.claim] == 0 {
			ending = append(ending, a.j.claim) // its lease goes with this batch
		}
	}
	jr.mu.Unlock()
	defer func() {
		// Renewed until the ack is written: a claim leaves only then.
		jr.mu.Lock()
		for _, c := range ending {
			if jr.claims[c] == 0 {
				delete(jr.claims, c)
			}
		}
		jr.mu.Unlock()
	}()
	acks := make([]rdb.JobAck, len(batch))
	for i, a := range batch {
		t := a.j.env.Task
		ack := rdb.JobAck{ID: a.j.id, Claim: a.j.claim, Action: rdb.AckAction(a.action), DueMS: a.due}
		if a.action == "retry" || a.action == "release" {
			ack.FirstDueMS = ms(a.j.fire) // kept unless one is kept already
			ack.Level, ack.Indexed = jr.ackLevel(a.j)
		}
		// A failed unique job holds its identity no longer than its ttl
		// (jobs:failed); a redelivered one keeps it until it ends.
		ack.Unique = a.action == "retry" && a.j.env.Unique != ""
		if a.action != "release" {
			// A release counts no run and writes no record: it needs no
			// type, and its job may not even be decoded.
			ack.Type = t
			// LPUSH then LTRIM keeps the newest historyLen records:
			// older ones of this batch would be trimmed at once.
			if recorded[t] <= jr.opts.historyLen {
				ack.Record = a.rec.encode()
			}
			recorded[t]--
		}
		if a.action == "dead" {
			env := a.j.env
			env.Error, env.Failed, env.Attempts = a.rec.Error, ms(a.rec.End), a.j.attempt
			env.Fire = ms(a.j.fire) // a retry from the dead letters keeps the scheduled instant
			b, _ := json.Marshal(env)
			ack.DeadEnvelope = string(b)
		}
		acks[i] = ack
	}
	b := rdb.AckBatch{Acks: acks, EndedClaims: ending, DeadLimit: jr.opts.deadLetters, History: jr.history()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		lost, err := jr.db.AckJobs(ctx, b)
		if err == nil {
			for _, a := range batch {
				if a.action == "retry" || a.action == "release" {
					jr.wake() // the job queue has a new entry: look at its head again
					break
				}
			}
			for _, id := range lost {
				jr.log.Warn("job delivery was no longer ours (lease expired; delivered again)", "job", id)
			}
			for _, a := range batch {
				if a.action == "dead" && !slices.Contains(lost, a.j.id) {
					jr.log.Error("job failed for good; moved to the dead letters", "job", a.j.id, "task", a.j.env.Task,
						"attempts", a.j.attempt, "err", a.rec.Error)
				}
			}
			return
		}
		if ctx.Err() != nil {
			jr.log.Error("could not ack jobs; they will be delivered again", "jobs", len(batch), "err", err)
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// releaseJob puts back a job whose type this process lacks, a little
// later, for a process that has it. It is never dropped.
func (jr *jobRunner) releaseJob(j *jobRun) {
	jr.mu.Lock()
	first := jr.unknownTypes.seen(j.env.Task)
	jr.mu.Unlock()
	if first {
		jr.log.Warn("job type not registered in this process; left for a process that has it",
			"job", j.id, "task", j.env.Task)
	}
	jr.endJob(j, "release", ms(jr.clock.Now().Add(jr.opts.maxSleep*5)), Record{}, nil)
}

// deadJob dead-letters a job that can never run (a corrupt envelope).
func (jr *jobRunner) deadJob(j *jobRun, err error) {
	jr.log.Error("bad job data; moved to the dead letters", "job", j.id, "err", err)
	j.env = badEnvelope(j.raw)
	now := jr.clock.Now()
	jr.endJob(j, "dead", 0, Record{Task: "?", JobID: j.id, Fire: j.fire, Start: now, End: now,
		Outcome: OutcomeFailed, Error: err.Error(), Process: jr.id, Attempt: j.attempt}, nil)
}

// renewJobs extends the leases of this process's claims that have jobs in
// flight, and the running slots it holds of its capped types (the same
// lease).
func (jr *jobRunner) renewJobs(ctx context.Context) {
	jr.mu.Lock()
	claims := make([]string, 0, len(jr.claims))
	for c := range jr.claims {
		claims = append(claims, c)
	}
	jr.mu.Unlock()
	if err := jr.db.RenewJobLeases(ctx, jr.jobLease(), claims); err != nil && ctx.Err() == nil {
		jr.log.Warn("renewing job leases failed", "err", err)
	}
	jr.jobLimits()
	if err := jr.db.RenewJobSlots(ctx, jr.id, jr.jobLease(), jr.cappedTypes); err != nil && ctx.Err() == nil {
		jr.log.Warn("renewing job slots failed", "err", err)
	}
}

// releaseJobSlots deletes the running slots this process holds of its
// capped types, at a graceful stop once its jobs have ended (else they
// would free only when their lease runs out).
func (jr *jobRunner) releaseJobSlots(ctx context.Context) {
	jr.jobLimits()
	if len(jr.cappedTypes) == 0 {
		return
	}
	if err := jr.db.ReleaseJobSlots(ctx, jr.id, jr.cappedTypes); err != nil {
		jr.log.Warn("shutdown: could not release job slots", "err", err)
	}
}

// redeliver puts the jobs of claims whose lease expired back in the queue
// (master duty).
func (jr *jobRunner) redeliver(ctx context.Context) error {
	back, err := jr.db.Redeliver(ctx, 1000, jr.maint.dutyDeadline(ctx))
	if err != nil {
		return err
	}
	for _, j := range back {
		process := rdb.ClaimProcess(j.Claim)
		jr.log.Warn("job delivered again: its process died or stalled", "job", j.ID, "process", process)
		if h := jr.opts.hooks.Redelivered; h != nil {
			h(ctx, j.ID, process)
		}
	}
	if len(back) > 0 {
		_ = jr.db.Wake(ctx, "redeliver")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// onceSet reports the first sighting of each string, bounded.
type onceSet struct {
	m map[string]struct{}
}

func (o *onceSet) seen(k string) bool {
	if o.m == nil || len(o.m) > 1000 {
		o.m = make(map[string]struct{})
	}
	if _, ok := o.m[k]; ok {
		return false
	}
	o.m[k] = struct{}{}
	return true
}
