package runtime

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// misfireThreshold is how late a fire may start before it counts as missed
// (after downtime) and the task's misfire policy applies.
const misfireThreshold = 5 * time.Second

// dispatcher is the dispatch component: its loop sleeps until the queues'
// heads are due, prepares the claim of the next instant ahead of it, claims
// this process's share of each instant (share.go) and the due jobs, and
// hands what it won to the task and job runners.
type dispatcher struct {
	*engine
	mu        sync.Mutex
	ignored   map[string]int64           // due members this process cannot run, by score; guarded by mu
	deferred  map[string]int64           // due members whose claim waits for a lock holder's run lease, until (unix ms); guarded by mu
	left      map[string]leftClaim       // due members of a coalesced span left to the peer whose share they are; guarded by mu
	badStatus onceSet                    // "task|status" of unknown statuses logged (dispatch goroutine only)
	share     atomic.Pointer[peerShares] // this process's share of each instant, set by the maintainer
	backlog   bool                       // the latest head read was all due (dispatch goroutine only)
}

func newDispatcher(e *engine) *dispatcher {
	return &dispatcher{engine: e, ignored: make(map[string]int64), deferred: make(map[string]int64), left: make(map[string]leftClaim)}
}

// fire is one claimed run, handed from the dispatch loop to a worker.
type fire struct {
	state taskState
	reg   *registry.Entry
	at    time.Time // the scheduled instant
	runID string
	lease string
	next  int64 // the instant after it, unix ms; 0 when there is none
	once  bool  // the task has no next instant: remove it after the run
}

// dispatch is the loop that claims due tasks and hands them to workers. It
// sleeps until the head of the queue is due, wakes early on a message on the
// wake channel, and never sleeps longer than the max-sleep option.
func (dp *dispatcher) dispatch(ctx context.Context) {
	backoff := 10 * time.Millisecond
	var heads queueHeads
	for ctx.Err() == nil {
		// Claim no more than there are free workers, so a claimed fire
		// starts at once.
		free := dp.acquireSlots(ctx)
		if free == 0 {
			return
		}
		select {
		case <-dp.wakeCh:
			heads = queueHeads{}
		default:
		}
		wait, err := dp.claim(ctx, free, &heads)
		if err != nil {
			heads = queueHeads{}
			if ctx.Err() != nil {
				return
			}
			dp.log.Error("claim failed; retrying", "err", err, "in", backoff.String())
			reloadTopology(dp.rdb, err)
			wait = backoff
			backoff = min(backoff*2, dp.opts.maxSleep)
		} else {
			backoff = 10 * time.Millisecond
		}
		if wait <= 0 {
			continue
		}
		if dp.sleep(ctx, wait, heads.preparedNext()) {
			heads = queueHeads{}
		}
	}
}

// preciseTail is the last stretch of a dispatch sleep, slept with the OS's
// nanosecond timer: Go's timers wake up to a millisecond late after a long
// sleep (the poller waits in whole milliseconds), which would add up to a
// millisecond to the lag of every fire.
const preciseTail = 2 * time.Millisecond

// warmLead is how long before the instant of prepared fires the dispatch
// loop touches Redis (without waiting for the answer): a server and a
// connection idle for a while answer the claim at the instant later than
// busy ones. On the 2-CPU benchmark machine a PING after 100 ms idle took
// 0.24-0.29 ms (p50) and one sent 1 ms after another 0.06-0.13 ms (the
// calibration lines of crontabbench); S3 x 100's lag fell from 2.05 to 1.89
// ms (p50) and 4.74 to 3.79 ms (p99). It costs one EXISTS per instant.
const warmLead = time.Millisecond

// sleep waits d, or until ctx ends, a message arrives on the wake channel
// (which it reports), or a worker frees up for claimed jobs that wait. The
// last preciseTail of it does not see these: they are at most that late.
// With warm, it touches Redis warmLead before the end (see warmLead).
func (dp *dispatcher) sleep(ctx context.Context, d time.Duration, warm bool) (woken bool) {
	until := time.Now().Add(d)
	tail := preciseTail
	if warm {
		tail += warmLead // so the timer's lateness cannot eat the warm-up
	}
	if d > tail {
		timer := time.NewTimer(d - tail)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-dp.wakeCh:
			return true
		case <-dp.jobs.kick:
			return false
		case <-timer.C:
		}
	}
	if warm && time.Until(until) > warmLead {
		preciseSleep(time.Until(until) - warmLead)
		go dp.warmUp(ctx)
	}
	preciseSleep(time.Until(until))
	return false
}

// warmUp sends Redis a cheap command on the namespace's key, so that on
// Redis Cluster it reaches the node the claim goes to.
func (dp *dispatcher) warmUp(ctx context.Context) {
	dp.db.TouchQueue(ctx)
}

// queueHeads is what the dispatch loop knows, between claims, of when the
// heads of the task queue and of the job queue are due, so that a claim asks
// Redis only about a queue whose head is due (one round trip per claim
// instead of two). A message on the wake channel forgets both; so does
// max-sleep passing, so nothing depends on a message arriving.
type queueHeads struct {
	task, job queueHead
	// ahead holds the tasks due at task.next, read and prepared before
	// their instant, so that at the instant one round trip (the claim
	// script) starts them.
	ahead *aheadFires
}

// aheadFires are prepared fires of one instant.
type aheadFires struct {
	at    int64      // the instant, unix ms
	read  time.Time  // when the task hashes were read (server time)
	fires []*fire    // this process's share (see share.go), in the order they are tried
	split bool       // the instant's other fires are the peers' shares
	after int64      // the queue's next instant after at, unix ms; -1: none seen
	call  *claimCall // the first claim of fires, built ahead
}

// aheadOf prepares this process's share of the fires of instant at, read
// as tied. It splits them only when the read held every task of the
// instant: a split of some would leave the rest a grace for nothing.
func (dp *dispatcher) aheadOf(at int64, read time.Time, fires []*fire, tied tiedTasks) *aheadFires {
	a := &aheadFires{at: at, read: read, fires: fires, after: tied.after}
	if tied.all {
		a.fires, a.split = dp.currentShares().split(fires)
	}
	// A random order: processes that claim the same fires (no split) then
	// mostly try different ones first, and between them claim every fire
	// of the instant in one round even when each has fewer free workers
	// than there are fires.
	rand.Shuffle(len(a.fires), func(i, j int) { a.fires[i], a.fires[j] = a.fires[j], a.fires[i] })
	a.call = dp.newClaimCall(a.fires, at)
	return a
}

// graceEnd is when to look at the queue again after claiming a split
// instant's share: once the peers had shareGrace to claim theirs, or at the
// queue's next instant if that comes first.
func (a *aheadFires) graceEnd() int64 {
	end := a.at + shareGrace.Milliseconds()
	if a.after >= 0 && a.after < end {
		return a.after
	}
	return end
}

// maxAheadAge bounds how old the task state behind prepared fires may be
// when they fire: run-time changes of a task's type or parameters reach
// every scheduler within a second (see TaskSpec), and a fire prepared
// earlier than that is prepared again.
const maxAheadAge = time.Second

// preparedNext reports whether the loop's next wake-up is for the instant of
// fires prepared ahead (and not for a job due before it).
func (h *queueHeads) preparedNext() bool {
	return h.ahead != nil && h.ahead.at == h.task.next && (h.job.next <= 0 || h.job.next >= h.task.next)
}

type queueHead struct {
	next int64     // unix ms of the head; -1: the queue is empty; 0: unknown, or more is due now
	read time.Time // when next was read (server time)
}

// fresh reports whether the head is known, not due at now, and recent.
func (h queueHead) fresh(now time.Time, maxSleep time.Duration) bool {
	return h.next != 0 && (h.next < 0 || h.next > ms(now)) && now.Sub(h.read) < maxSleep
}

// acquireSlots takes every free worker slot, waiting for at least one, and
// returns how many it took (0 when ctx ended). Slots not used by a claim are
// given back by claim.
func (dp *dispatcher) acquireSlots(ctx context.Context) int {
	select {
	case <-dp.slots:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < dp.opts.batch {
		select {
		case <-dp.slots:
			n++
		default:
			return n
		}
	}
	return n
}

func (dp *dispatcher) releaseSlots(n int) {
	for range n {
		dp.slots <- struct{}{}
	}
}

// claim claims up to limit due tasks and jobs and starts their handlers,
// tasks first. It returns how long to sleep before the next claim: 0 to
// claim again at once.
func (dp *dispatcher) claim(ctx context.Context, limit int, heads *queueHeads) (wait time.Duration, err error) {
	used := 0
	defer func() { dp.releaseSlots(limit - used) }()

	now := dp.clock.Now()
	if !heads.task.fresh(now, dp.opts.maxSleep) {
		ahead := heads.ahead
		heads.ahead = nil
		if ahead.ready(now, heads.task.next) {
			started, early, err := dp.fireAhead(ctx, ahead, limit)
			used += started
			switch {
			case err == nil && len(ahead.fires) > 0:
				heads.ahead = ahead // more prepared than free workers: the rest in the next round
			case err == nil && ahead.split && !early:
				// The peers' shares are theirs for a grace; then the
				// queue tells what is still due.
				heads.task = queueHead{next: ahead.graceEnd(), read: now}
			default:
				heads.task = queueHead{} // look at the queue again
			}
			return 0, err
		}
		next, started, tied, err := dp.claimTasks(ctx, now, limit)
		used += started
		heads.task = queueHead{next: next, read: now}
		if err != nil || next == 0 {
			return 0, err
		}
		if tied.members != nil && tied.at == next && time.UnixMilli(next).Sub(now) < maxAheadAge {
			fires, err := dp.prepare(ctx, now, tied.members, tied.scores)
			if err != nil {
				return 0, err
			}
			queued := make(map[string]int64, len(tied.members))
			for i, m := range tied.members {
				queued[m] = tied.scores[i]
			}
			// A fire whose hash moved on since the queue read is not of
			// the instants read.
			fires = slices.DeleteFunc(fires, func(f *fire) bool { return f.state.NextRun != queued[f.state.Member] })
			heads.ahead = dp.aheadOf(next, now, fires, tied)
		}
	}
	used += dp.jobs.startWaiting(limit - used)
	if dp.jobs.reclaim.Swap(false) {
		heads.job = queueHead{} // a job ended that frees a slot of jobs left due (freeSlot)
	}
	if !heads.job.fresh(now, dp.opts.maxSleep) {
		next, started, err := dp.jobs.claimJobs(ctx, limit-used, dp.jobs.prefetchRoom())
		used += started
		heads.job = queueHead{next: next, read: now}
		if err != nil || next == 0 {
			return 0, err
		}
	}
	next := heads.task.next
	if next < 0 || (heads.job.next > 0 && heads.job.next < next) {
		next = heads.job.next
	}
	// Measure the sleep from the time now, not from the start of the
	// claim: its round trips would make every wake-up late by their length.
	return dp.sleepFor(dp.clock.Now(), next), nil
}

// tiedTasks are the tasks due at the queue's next instant, or at the
// instants of a coalesced span (see coalesceSpan), as one read saw them:
// members (nil when none) and their queue scores; at, the instant they
// are claimed at (the next instant, or the span's last); whether they are
// all of the next instant's, in a read of that instant alone (the read did
// not stop inside it: a span is never split among peers); and the instant
// after at, unix ms (-1: none was read).
type tiedTasks struct {
	members []string
	scores  []int64
	at      int64
	all     bool
	after   int64
	share   peerShare // of a span: this process's share by member (the zero value: every member)
}

// coalesceSpan bounds how much later than its instant a task may be
// claimed so that the instants that follow it closely are claimed with it,
// in one call (one queue read, one read of the task hashes, one claim
// script, one wake-up): when the queue's next instant and at least
// coalesceInstants-1 more fall within coalesceSpan of it, the dispatcher
// sleeps until the last of them and claims them all at once. A claim then
// pays its fixed part (the wake-up, the reads, the script's prelude) once
// for the span's fires instead of once for each instant's one or two:
// 100,000 every:1h tasks with a minute's jitter are 1.7 instants per
// millisecond. No instant starts before it is due (the span's fires are
// claimed at its last instant, and the claim script checks each fire
// against the server's clock); an instant is at most coalesceSpan later
// than without coalescing. Sparse instants (a single task; two tasks a
// millisecond apart) are claimed each at its own instant, as before.
const coalesceSpan = 3 * time.Millisecond

// coalesceInstants is how many distinct instants within coalesceSpan of
// the queue's next one make the dispatcher claim them together.
const coalesceInstants = 3

// latestPerClaim is how many of the latest due tasks a claim behind a
// backlog (a head read whole and all due) tries before the head's, so the
// tasks of an instant after the backlog's start are claimed within a
// round or two, however long the backlog (S6: an every:1s probe during the
// drain of 100,000 fires of one instant), at the cost of up to that many
// fires tried by every peer.
const latestPerClaim = 4

// backlogReadPerWorker is how many due queue entries per free worker a
// claim reads: with its peers' shares among them, about as many of its own
// as it has free workers (S6: a 256-entry read per claim of 64 was 8.7 µs
// of Redis per fire, a third of it for 2 peers' shares).
const backlogReadPerWorker = 2

// lastScore is the last of scores, or -1 when there is none.
func lastScore(scores []int64) int64 {
	if len(scores) == 0 {
		return -1
	}
	return scores[len(scores)-1]
}

// claimTasks claims up to limit due tasks. It returns the due time (unix
// ms) of the next task (of a coalesced span's last, see coalesceSpan): 0
// when there may be more due now, -1 when the queue is empty; how many runs
// it started; and, when nothing was due, the tasks it saw due at that next
// time or in that span (up to a batch; of a span, this process's share),
// to be prepared ahead.
func (dp *dispatcher) claimTasks(ctx context.Context, now time.Time, limit int) (int64, int, tiedTasks, error) {
	nowMS := ms(now)
	// One read of the queue (rdb.ReadQueueWindow): the due tasks, up to
	// backlogReadPerWorker per free worker (room for this process's share,
	// preferOwn); the tasks of the next instant, up to a batch, to prepare
	// ahead, or of the instants within coalesceSpan of it; the instant
	// after those; and, behind a backlog, the latest due.
	// What it reads is what the claim uses, not a batch of the head: with
	// instants a millisecond apart (jittered tenants), a batch of the head
	// was 256 entries read per fire or two.
	ignored := dp.ignoredCount()
	dueRead := backlogReadPerWorker*limit + ignored
	latestRead := 0
	if dp.backlog {
		// Behind a backlog: the latest due too, so that an instant after
		// it is not delayed by it (see latestPerClaim).
		latestRead = latestPerClaim
	}
	// The next instant's tasks only when they may be prepared (claim:
	// within maxAheadAge); of one further ahead, its instant alone.
	win, err := dp.db.ReadQueueWindow(ctx, rdb.WindowRead{NowMS: nowMS, Due: dueRead, Next: dp.opts.batch + ignored,
		Latest: latestRead, SpanMS: coalesceSpan.Milliseconds(), HorizonMS: maxAheadAge.Milliseconds()})
	if err != nil {
		return 0, 0, tiedTasks{}, err
	}
	dp.backlog = len(win.Due) == dueRead
	// Outside a backlog, a peer's share (by member) of what just fell due
	// is the peer's for as long as a span and a grace: a process that
	// wakes late, or whose span started later than the peer's, finds due
	// what the peer claims at the end of its span (see leaveToPeer).
	recent := peerShare{}
	if !dp.backlog {
		recent = dp.currentShares().backlogShare()
	}
	var due []string
	var dueScores []int64
	next, tied := win.Next, tiedTasks{after: win.After, all: win.NextAll}
	if !win.Far && rdb.Instants(win.Span) >= coalesceInstants {
		// Instants close together: claimed together, at the span's last
		// (see coalesceSpan). Not split among peers: their spans need not
		// be the same.
		// A read that stopped inside the span's last instant leaves the
		// rest of it to the claim's next look at the queue.
		next, tied = win.Span, tiedTasks{after: win.SpanAfter, share: dp.currentShares().backlogShare()}
	}
	nextMS, retryMS := int64(-1), int64(-1)
	for _, z := range win.Due {
		member, score := z.Member, z.Score
		if dp.isIgnored(member, score) {
			continue
		}
		until, ok := dp.deferredUntil(member, nowMS)
		if !ok {
			until, ok = dp.leftUntil(member, score, nowMS)
		}
		if wait := score + (coalesceSpan + shareGrace).Milliseconds(); !ok && wait > nowMS && !recent.ownsMember(member) {
			until, ok = wait, true
		}
		if ok {
			if retryMS < 0 || until < retryMS {
				retryMS = until
			}
			continue
		}
		due, dueScores = append(due, member), append(dueScores, score)
	}
	if len(next) > 0 {
		nextMS = next[len(next)-1].Score // the last: the instant the tasks read are claimed at
	}
	if win.Far {
		next = nil // beyond the horizon: nothing to prepare, the instant alone was read
	}
	for _, z := range next {
		switch {
		case dp.isIgnored(z.Member, z.Score):
		case !tied.share.ownsMember(z.Member):
			// A peer's share of a span: its own claim at the span's end
			// takes it; this process claims it if it is still due a
			// grace later.
			dp.leaveToPeer(z.Member, z.Score, nextMS+shareGrace.Milliseconds(), nowMS)
		default:
			tied.members = append(tied.members, z.Member)
			tied.scores = append(tied.scores, z.Score)
		}
	}
	tied.at = nextMS
	latest := win.Latest
	// The latest due first, if the due read does not hold them; then of
	// the due read, this process's share first (share.go).
	var first []string
	var firstScores []int64
	for _, z := range latest {
		if len(first) == min(latestPerClaim, max(1, limit/2)) || z.Score <= lastScore(dueScores) {
			break
		}
		if dp.isIgnored(z.Member, z.Score) {
			continue
		}
		_, deferred := dp.deferredUntil(z.Member, nowMS)
		_, left := dp.leftUntil(z.Member, z.Score, nowMS)
		if !deferred && !left {
			first, firstScores = append(first, z.Member), append(firstScores, z.Score)
		}
	}
	due, dueScores = dp.currentShares().backlogShare().preferOwn(due, dueScores, limit-len(first))
	due, dueScores = append(first, due...), append(firstScores, dueScores...)
	if len(due) == 0 {
		if retryMS > 0 && (nextMS < 0 || retryMS < nextMS) {
			return retryMS, 0, tied, nil // a deferred claim comes first
		}
		return nextMS, 0, tied, nil
	}
	fires, err := dp.prepare(ctx, now, due, dueScores)
	if err != nil || len(fires) == 0 {
		return 0, 0, tiedTasks{}, err
	}
	started, _, early, err := dp.advance(ctx, fires, limit) // no more fires than limit: none untried
	if err != nil {
		return 0, started, tiedTasks{}, err
	}
	if early {
		// Our clock estimate ran ahead of the server's: resync, retry soon.
		_ = dp.clock.Sync(ctx, 3)
		return nowMS + 1, started, tiedTasks{}, nil
	}
	return 0, started, tiedTasks{}, nil
}

// ready reports whether prepared fires can be claimed at now: they are of
// the head's instant, which is due, recent enough for the misfire policy
// not to apply, and their state is fresh.
func (a *aheadFires) ready(now time.Time, head int64) bool {
	return a != nil && a.at == head && head <= ms(now) && now.Sub(time.UnixMilli(head)) < misfireThreshold &&
		now.Sub(a.read) < maxAheadAge
}

// fireAhead claims up to limit prepared fires with one call of the claim
// script, and leaves the rest in a. The script stops at limit fires won;
// the fires it did not try stay in a for the next round, whose claim finds
// the ones other processes took moved on.
// It reports whether a fire was early by the server's clock (then the
// clock is synced again, and the queue is to be looked at again soon).
func (dp *dispatcher) fireAhead(ctx context.Context, a *aheadFires, limit int) (started int, early bool, err error) {
	call := a.call
	if call == nil {
		call = dp.newClaimCall(a.fires, a.at)
	}
	a.fires, a.call = nil, nil
	if len(call.fires) == 0 {
		return 0, false, nil // the whole instant is the peers'
	}
	started, untried, early, err := dp.sendClaim(ctx, call, limit)
	if early && err == nil {
		_ = dp.clock.Sync(ctx, 3)
	}
	if err == nil {
		a.fires = untried
	}
	return started, early, err
}

// sleepFor returns how long to sleep until the head at nextMS is due,
// capped by the max-sleep option. nextMS < 0 means the queue is empty.
func (dp *dispatcher) sleepFor(now time.Time, nextMS int64) time.Duration {
	if nextMS < 0 {
		return dp.opts.maxSleep
	}
	return min(time.UnixMilli(nextMS).Sub(now), dp.opts.maxSleep)
}

// prepare reads the due tasks and computes, for each one this process can
// run, the fire it claims and the instant after it. scores, when not nil,
// holds each due task's queue score as read (so that passing over a task
// of another fleet's type costs no round trip).
func (dp *dispatcher) prepare(ctx context.Context, now time.Time, due []string, scores []int64) ([]*fire, error) {
	reads, err := dp.db.ReadTaskStates(ctx, due)
	if err != nil {
		return nil, err
	}
	fires := make([]*fire, 0, len(due))
	// The instants after an instant, per expression and zone: the tasks of
	// one instant mostly share a few (100,000 tenants' daily:09:00 in a few
	// hundred zones), so each is computed once per call. A jittered task's
	// is its offset added to the unjittered schedule's after at - offset
	// (schedule.Offset), so it shares the memo too.
	nexts := make(map[nextKey]time.Time)
	nextOf := func(st taskState, sched Schedule, offset time.Duration, at time.Time) time.Time {
		at = at.Add(-offset)
		k := nextKey{st.Expression, st.TZ, at.UnixNano()}
		t, ok := nexts[k]
		if !ok {
			t = sched.Next(at)
			nexts[k] = t
		}
		if t.IsZero() {
			return t
		}
		return t.Add(offset)
	}
	for i, m := range due {
		read := reads[i]
		score := int64(-1)
		if scores != nil {
			score = scores[i]
		}
		switch {
		case read.Err != nil:
			dp.ignore(m, score, "bad task data; skipped", read.Err) // not a hash, or corrupt
			continue
		case read.Missing:
			// A queue entry without a task hash (a foreign member): the
			// claim script removes it, checking again that there is none.
			fires = append(fires, &fire{state: read.State})
			continue
		}
		st := read.State
		if !st.Status.Valid() && dp.badStatus.seen(m+"|"+string(st.Status)) {
			dp.log.Warn("unknown status in task hash; its fires are skipped as if paused (want active, paused or disabled)",
				"task", m, "status", st.Status)
		}
		reg := dp.reg.Entry(st.Type)
		if reg == nil {
			if dp.leftOut(st.Type) {
				dp.ignore(m, score, "", nil) // another fleet's task (WithTasks): nothing to tell
			} else {
				dp.ignore(m, score, "task type not registered in this process; left for a process that has it", errors.New(st.Type))
			}
			continue
		}
		sched, err := dp.cache.Get(st.Expression, st.TZ)
		if err != nil {
			dp.ignore(m, score, "bad schedule in task hash; skipped", err)
			continue
		}
		offset := schedule.JitterOffset(m, st.Jitter) // parsed per expression and zone, offset per task
		f := &fire{state: st, reg: reg, at: time.UnixMilli(st.NextRun)}
		mode := "run"
		next := nextOf(st, sched, offset, f.at)
		if now.Sub(f.at) > misfireThreshold {
			// Missed instants (downtime): one catch-up run or none, then
			// continue from the next future instant.
			next = nextOf(st, sched, offset, now)
			if st.Misfire == MisfireSkip {
				mode = "skip"
			}
		}
		f.once = next.IsZero()
		f.runID = rdb.RunID(m, st.NextRun)
		f.next = ms(next)
		if mode == "skip" {
			f.runID = ""
		}
		fires = append(fires, f)
	}
	return fires, nil
}

// nextKey names an instant after at of an expression in a zone.
type nextKey struct {
	expression, tz string
	at             int64 // unix ns
}

// claimCall is one call of the claim script: the fires it tries, in order,
// with the call built for them (rdb.FireClaim), and each fire's run lease.
// A call prepared ahead of its instant is built before it, so that at the
// instant only the send is left.
type claimCall struct {
	fires []*fire
	claim *rdb.FireClaim
}

// newClaimCall builds the call claiming fires; their leases name startMS
// (unix ms) as the start: the claim's time, or the instant of fires
// prepared ahead.
func (dp *dispatcher) newClaimCall(fires []*fire, startMS int64) *claimCall {
	cands := make([]rdb.FireCandidate, len(fires))
	for i, f := range fires {
		m := f.state.Member
		f.lease = leaseValue(dp.id, m, f.state.NextRun, startMS)
		cands[i] = rdb.FireCandidate{Task: m, FireMS: ms(f.at), NextMS: f.next, Skip: f.runID == "", RunID: f.runID, Lease: f.lease}
		cands[i].Type, cands[i].MaxRunning = fireCap(f)
		if f.reg != nil {
			cands[i].Timeout = f.reg.Config().Timeout // the lock's TTL when the hash has no timeout of its own
		}
	}
	return &claimCall{fires: fires, claim: dp.db.NewFireClaim(dp.id, dp.history(), dp.runLeases(), cands)}
}

// advance runs the claim script over the prepared fires and starts a
// worker for every fire won, up to maxFires; the script does not look at the
// fires after that many were won, and advance returns them (untried). It
// reports how many workers it started and whether any fire was early by the
// server's clock though due by this process's.
func (dp *dispatcher) advance(ctx context.Context, fires []*fire, maxFires int) (started int, untried []*fire, early bool, err error) {
	return dp.sendClaim(ctx, dp.newClaimCall(fires, ms(dp.clock.Now())), maxFires)
}

// sendClaim is advance with the call built.
func (dp *dispatcher) sendClaim(ctx context.Context, c *claimCall, maxFires int) (started int, untried []*fire, early bool, err error) {
	fires := c.fires
	sent := dp.clock.Now()
	res, err := dp.db.ClaimFires(ctx, c.claim, maxFires)
	if err != nil {
		return 0, nil, false, err
	}
	var foreign map[string]bool
	for i, r := range res {
		f := fires[i]
		if r.ForeignSlots != "" {
			if foreign == nil {
				foreign = map[string]bool{}
			}
			foreign[r.ForeignSlots] = true
		}
		switch r.Outcome {
		case rdb.FireUntried:
			untried = append(untried, f)
		case rdb.FireWon, rdb.FireWonForeignLock, rdb.FireTakeover:
			switch r.Outcome {
			case rdb.FireWonForeignLock:
				dp.log.Warn("lock without expiry replaced: it was not a scheduler's", "task", f.state.Member, "lock", dp.keys.Lock(f.state.Member))
			case rdb.FireTakeover:
				dp.maint.tookOver(f, r.Holder) // runlease.go
			}
			dp.tasks.startRun(f)
			started++
		case rdb.FireEarly:
			// Early by the server's clock though due by ours: our estimate
			// ran ahead. A fire not due by ours either is a stale read (a
			// peer claimed the instant between our queue read and our hash
			// read, and the hash moved on; the script put the queue entry
			// at it): no reason to sync the clock.
			early = early || !f.at.After(sent)
		case rdb.FireDeferred:
			dp.deferClaim(f.state.Member, r.RetryMS)
		case rdb.FireLocked:
			dp.log.Info("fire skipped: previous run still running", "task", f.state.Member, "fire", f.at)
			dp.skipped(ctx, f, SkipRunning)
		case rdb.FireCapped:
			group, limit := fireCap(f)
			dp.log.Info("fire skipped: max_running runs in progress", "task", f.state.Member, "slots", group,
				"max_running", limit, "fire", f.at)
			dp.skipped(ctx, f, SkipMaxRunning)
		case rdb.FireMisfire:
			dp.log.Info("missed fire skipped (misfire=skip)", "task", f.state.Member, "fire", f.at)
			dp.skipped(ctx, f, SkipMisfire)
		case rdb.FirePaused:
			dp.skipped(ctx, f, SkipPaused)
		case rdb.FireMissing:
			dp.log.Warn("queue entry without task hash removed", "task", f.state.Member)
		}
	}
	// A fire slot key holding a foreign value left its cap off for this
	// claim (a run-time task's slot group comes with the task: no check at
	// start knows it); moved aside, the cap holds from the next claim on.
	for key := range foreign {
		dp.moveAside(ctx, key, "zset")
	}
	return started, untried, early, nil
}

// fireSlots is the slot group whose fire slot a run of f holds (see
// fireCap), or "" when f has no cap.
func fireSlots(f *fire) string {
	group, _ := fireCap(f)
	return group
}

// fireCap is the max_running cap of f and the slot group it counts in: a
// run-time task's own cap (TaskSpec.MaxRunning, in its hash) counts its
// runs apart (a declared task's hash holds its type's cap, and it counts
// with the type's run-time tasks); else its type's cap, in this process's registry (the code is
// the source), counts the runs of every task of the type. ("", 0): no cap.
func fireCap(f *fire) (group string, limit int) {
	switch {
	case ownFireSlots(f.state.Member, f.state.Type, f.state.MaxRunning):
		return rdb.FireSlotsOfTask(f.state.Member), f.state.MaxRunning
	case f.reg != nil && f.reg.Config().MaxRunning > 0:
		return f.state.Type, f.reg.Config().MaxRunning
	}
	return "", 0
}

// runTimeout is how long a run of f may take: a run-time task's own
// timeout (TaskSpec.Timeout, its hash's timeout field), else its type's as
// this process registered it. A declared task is its own type, and takes
// this process's declaration, whatever another build wrote to the hash.
func (f *fire) runTimeout() time.Duration {
	if f.state.Member != f.state.Type && f.state.Timeout > 0 {
		return f.state.Timeout
	}
	return f.reg.Config().Timeout
}

// ownFireSlots is true for a run-time task member of type typ whose hash
// holds a cap max of its own (TaskSpec.MaxRunning): its runs count in
// their own slot group, FireSlotsOfTask(member). A declared task is its
// own type, and its hash holds its type's cap.
func ownFireSlots(member, typ string, max int) bool { return max > 0 && member != typ }

// ignore remembers a due member this process cannot run, at its current
// score, so the loop does not spin on it; it is looked at again once its
// score changes. The reason is logged once per score (msg "": not logged).
// Nothing is written: the member is left exactly as it is. score is its
// queue score as read, or -1 to read it.
func (dp *dispatcher) ignore(member string, score int64, msg string, err error) {
	if score < 0 {
		s, queued, zerr := dp.db.QueueScore(context.Background(), member)
		if zerr != nil || !queued {
			return
		}
		score = s
	}
	dp.mu.Lock()
	prev, seen := dp.ignored[member]
	dp.ignored[member] = score
	dp.mu.Unlock()
	if msg != "" && (!seen || prev != score) {
		dp.log.Warn(msg, "task", member, "err", err)
	}
}

func (dp *dispatcher) isIgnored(member string, score int64) bool {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	prev, ok := dp.ignored[member]
	if ok && prev != score {
		delete(dp.ignored, member)
		return false
	}
	return ok
}

func (dp *dispatcher) ignoredCount() int {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	return len(dp.ignored)
}

// deferClaim makes the claim of a due member wait until untilMS: its lock's
// holder has a run lease that runs out by then (rdb.FireDeferred). The
// claim then takes a dead holder's lock over, or skips the fire if the
// holder renewed.
func (dp *dispatcher) deferClaim(member string, untilMS int64) {
	dp.mu.Lock()
	dp.deferred[member] = untilMS + 1 // the lease has run out strictly after its deadline
	dp.mu.Unlock()
}

// deferredUntil reports whether the claim of member waits, and until when
// (unix ms); a wait that is over is forgotten.
func (dp *dispatcher) deferredUntil(member string, nowMS int64) (int64, bool) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	until, ok := dp.deferred[member]
	if !ok {
		return 0, false
	}
	if until <= nowMS {
		delete(dp.deferred, member)
		return 0, false
	}
	return until, true
}

// leftClaim is a due member of a coalesced span left to the peer whose
// share it is (by member, peerShare.ownsMember): at its queue score, until
// (unix ms).
type leftClaim struct {
	score, until int64
}

// maxLeft is how many left claims the dispatcher keeps before it drops
// those whose wait is over (most are never looked at again: the peer
// claimed them, and their next instant is far).
const maxLeft = 4096

// leaveToPeer makes the claim of member, due at score, wait until untilMS
// (unix ms): it is a peer's share of a coalesced span, which the peer
// claims at the span's last instant. A share still due at untilMS (its
// process died or stalled, or read another span: the spans of two
// processes need not be the same) is claimed by whoever looks then; a
// process that finds an instant due without having read it in a span
// claims all of it, as before.
func (dp *dispatcher) leaveToPeer(member string, score, untilMS, nowMS int64) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if len(dp.left) >= maxLeft {
		for m, l := range dp.left {
			if l.until <= nowMS {
				delete(dp.left, m)
			}
		}
	}
	dp.left[member] = leftClaim{score: score, until: untilMS}
}

// leftUntil reports whether the claim of member, due at score, is left to
// a peer (leaveToPeer), and until when (unix ms); a wait that is over, or
// of another score, is forgotten.
func (dp *dispatcher) leftUntil(member string, score, nowMS int64) (int64, bool) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	l, ok := dp.left[member]
	if !ok {
		return 0, false
	}
	if l.until <= nowMS || l.score != score {
		delete(dp.left, member)
		return 0, false
	}
	return l.until, true
}

// forgetIgnored clears the ignored set, so every skipped entry is looked
// at, and logged, again.
func (dp *dispatcher) forgetIgnored() {
	dp.mu.Lock()
	clear(dp.ignored)
	dp.mu.Unlock()
}

// skipped tells the Skipped hook of a fire that did not run.
func (dp *dispatcher) skipped(ctx context.Context, f *fire, reason SkipReason) {
	if h := dp.opts.hooks.Skipped; h != nil {
		h(ctx, RunInfo{Task: f.state.Member, Fire: f.at, Due: f.at, Process: dp.id}, reason)
	}
}
