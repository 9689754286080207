package runtime

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gocrontab/crontab/internal/rdb"
)

// jobSlots is this process's side of the running slots of one capped job
// type (TaskConfig.MaxRunning; the slots hash, see "The limits of a claim"
// in internal/rdb/limits.go):
//
//   - held: the slots its field holds, as its last claim left it
//     (rdb.FlowClaim.Held); at most that many of its jobs of the type run
//     at once;
//   - running: its jobs of the type that started and have not ended;
//   - inflight: its jobs of the type claimed and not yet ended: running,
//     waiting for a worker (jobRunner.waiting), or waiting for one of its
//     held slots (queue). It passes that count with each claim
//     (rdb.JobLimit.InFlight), which takes no more than rdb.JobSlotsAhead
//     times held, less inflight: so a job's end starts the next one at
//     once, without a claim's round trip;
//   - ownFull: the last claim left jobs of the type because this process
//     held all it may: once its hand is down to half of that (refill), a
//     job's end has the dispatch loop claim at once, and the claim is
//     under way while the other half runs.
type jobSlots struct {
	held     atomic.Int64
	ahead    int64 // jobs in hand per held slot: rdb.JobSlotsAhead, 1 for a type with a rate too
	running  atomic.Int64
	inflight atomic.Int64
	ownFull  atomic.Bool
	mu       sync.Mutex
	queue    []*jobRun // claimed jobs waiting for a held slot, oldest first
}

// refill is the hand (inflight) at or below which, when the last claim
// left jobs of the type for want of this process's slots, it claims again:
// half the jobs it may hold (ahead per held slot), and no less than its
// held slots. So the next claim is under way while half its hand still
// runs, and takes the other half.
func (s *jobSlots) refill() int64 {
	h := s.held.Load()
	return max(h, h*s.ahead/2)
}

// tryRun takes one of the held slots for a job about to start: false when
// all are running.
func (s *jobSlots) tryRun() bool {
	for {
		r := s.running.Load()
		if r >= s.held.Load() {
			return false
		}
		if s.running.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// push queues j, a claimed job, until one of the held slots is free.
func (s *jobSlots) push(j *jobRun) {
	s.mu.Lock()
	s.queue = append(s.queue, j)
	s.mu.Unlock()
}

// next returns the oldest queued job that can run now, having taken a
// held slot for it, or nil.
func (s *jobSlots) next() *jobRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 || !s.tryRun() {
		return nil
	}
	j := s.queue[0]
	s.queue = s.queue[1:]
	j.runs = true
	return j
}

// drain empties the queue and returns what it held.
func (s *jobSlots) drain() []*jobRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// begin starts j on the worker slot the caller holds, unless j is of a
// capped type of which all held slots run: then j waits in the type's
// queue for one, the worker slot stays the caller's, and begin returns
// false.
func (jr *jobRunner) begin(j *jobRun) bool {
	if s := j.slot; s != nil && !j.runs {
		if !s.tryRun() {
			s.push(j)
			return false
		}
		j.runs = true
	}
	jr.startJob(j)
	return true
}

// holdSlots counts the claimed jobs of capped types in flight (each counts
// against its type's slots, by the type the claim script read), takes the
// slots held (held, from the claim; for a type it lacks, the count is
// kept), and records of which capped types the claim left jobs for want
// of this process's own slots (ownFull, from the claim; every one when
// filled; limits as passed to it). It reports whether a job of such a type
// ended while the claim was under way (its end found the flag of the
// claim before): the caller claims again at once.
func (jr *jobRunner) holdSlots(claimed []*jobRun, limits []rdb.JobLimit, held map[string]int, ownFull []string, filled bool) (ended bool) {
	took := map[*jobSlots]int64{}
	for _, j := range claimed {
		if s := jr.capped[rdb.EnvelopeType(j.raw)]; s != nil {
			s.inflight.Add(1)
			j.slot = s
			took[s]++
		}
	}
	for _, l := range limits {
		s := jr.capped[l.Type]
		if s == nil {
			continue
		}
		if n, ok := held[l.Type]; ok {
			s.held.Store(int64(n))
		}
		full := filled || slices.Contains(ownFull, l.Type)
		s.ownFull.Store(full)
		if full && s.inflight.Load() < int64(l.InFlight)+took[s] && s.inflight.Load() <= s.refill() {
			ended = true
		}
	}
	return ended
}

// freeSlot ends j's count against its type's slots, when its handler
// returned or it goes back to the queue without running: once (the
// process's field in Redis keeps the slot until its next claim). When the
// last claim left jobs of the type for want of this process's slots, and
// its hand is down to its held slots, the dispatch loop claims at once.
func (jr *jobRunner) freeSlot(j *jobRun) {
	s := j.slot
	if s == nil {
		return
	}
	j.slot = nil
	if j.runs {
		j.runs = false
		s.running.Add(-1)
	}
	if s.inflight.Add(-1) <= s.refill() && s.ownFull.Load() {
		jr.reclaim.Store(true)
		select {
		case jr.kick <- struct{}{}:
		default:
		}
	}
}

// runQueued starts, on the worker slot the caller holds (that of a job of
// s's type that just ended), the next job of the type waiting for a held
// slot, and reports whether it did. While the scheduler stops, queued jobs
// are left to be given back.
func (jr *jobRunner) runQueued(s *jobSlots) bool {
	if s == nil || jr.runCtx.Err() != nil || jr.closing.Load() {
		return false
	}
	j := s.next()
	if j == nil {
		return false
	}
	jr.startJob(j)
	return true
}

// startQueued starts, on up to limit worker slots the caller holds, jobs
// waiting for a held slot that can run now (the last claim may have left
// more slots held), and returns how many it started.
func (jr *jobRunner) startQueued(limit int) int {
	n := 0
	for _, t := range jr.cappedTypes {
		s := jr.capped[t]
		for n < limit {
			j := s.next()
			if j == nil {
				break
			}
			jr.startJob(j)
			n++
		}
	}
	return n
}

// queuedJobs empties every capped type's queue of jobs waiting for a held
// slot, for the caller to give them back.
func (jr *jobRunner) queuedJobs() []*jobRun {
	var out []*jobRun
	for _, t := range jr.cappedTypes {
		out = append(out, jr.capped[t].drain()...)
	}
	return out
}
