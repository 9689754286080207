package runtime

// The invariant sweep: a master duty of the maintainer that walks the
// namespace's keys a page at a time, looking for state that no write path
// leaves behind and that no other duty repairs, and repairs it. The scans
// and the scripts that check each page's candidates again, atomically, and
// repair only what is still orphaned are the data model's
// (internal/rdb/sweep.go); this file paces them and reports what they did.
//
// What it finds, by kind (the counters of the sweep hash, Overview.Repaired
// and the Repaired hook):
//
//   - job: a job record (jobs:data) that is not queued (jobs), not dead
//     (dead) and not owned by a claim that holds a lease (jobs:owner names
//     no claim, or one without a jobs:lease entry: its acks would all be
//     refused and no redelivery would ever take it). It is queued again,
//     due now: at-least-once, never dropped; its attempts are unchanged.
//   - claim: a claim's lease (jobs:lease) that owns no job (no jobs:owner
//     field names it). It is removed.
//   - lease: an older release's run lease (run:<id>) with no running
//     entry, whose process has no recent heartbeat (or which names no
//     process). The run was lost: the lease, and the task's lock if the run
//     holds it, are deleted, and the run is recorded abandoned in the
//     task's history and counters. A live process's lease is left alone:
//     its finish records the run. This release keeps a run's lease in its
//     field of the runs hash, which is its entry too, so only a namespace
//     an older release used has these.
//   - lock: a task lock (lock:task:<key>) whose value "process|fire" names
//     no run in progress (no field in runs, no entry in an older release's
//     running set and no lease key of that release: the lease kind repairs
//     those two together), held by a process with no recent heartbeat, or
//     whose value names no run at all. The lock is deleted, and a named run
//     is recorded abandoned. A live process's lock is left alone: after
//     Redis lost its data, a process takes again the locks of its runs in
//     progress (dataloss.go), and renews them until they finish.
//   - running: an older release's running entry with no lease key. The
//     reap duty already records such a run abandoned (its lease key
//     expired: maintain.go), so it counts them there; the sweep itself only
//     removes entries that are not run ids ("task@fire"), which reap skips.
//     A run of this release is one field of runs holding its lease, so it
//     cannot be one; a field whose process is gone is reap's, as any.
//   - queue: a queue member with no task hash. It is removed from the queue.
//   - index: a task hash (task:<key>, found with SCAN) in neither the
//     queue nor the unqueued set, the indexes that list a task (a run-time
//     task has no other): a task whose queue entry was lost. It is put in
//     the unqueued set, so it is listed and counted again, and the requeue
//     queues it at its next instant within a tick if it is active or
//     paused. The same pass takes out of the tasks set the run-time tasks
//     an older release listed there, once the queue or the unqueued set
//     lists them (not counted: nothing was wrong).
//   - due: a first-due field (jobs:first: when a job put back in the queue
//     was first due) whose job no longer exists (no jobs:data entry). It
//     is removed.
//
// Bounds: every scan asks for sweepCount elements (COUNT), a master tick
// makes at most sweepCallsPerTick scan calls, and a pass starts
// sweepEvery heartbeats after the previous one ended; the cursor is kept
// across ticks, so a namespace of a million jobs is swept in about a
// thousand ticks without stalling the other duties. A new master starts a
// pass from the beginning.

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// The kinds of repair of the invariant sweep: the fields of the sweep hash,
// the keys of Overview.Repaired and the kind told to Hooks.Repaired.
const (
	// RepairJob counts job records that were neither queued, nor dead, nor
	// owned by a leased claim, and were queued again, due now.
	RepairJob = rdb.RepairJob
	// RepairClaim counts claim leases (jobs:lease) that owned no job and
	// were removed.
	RepairClaim = rdb.RepairClaim
	// RepairLease counts an older release's run leases (run:<id>) with no
	// running entry whose process was gone: the run is recorded abandoned.
	// This release writes no such lease: it counts only what an older
	// release sharing the namespace left.
	RepairLease = rdb.RepairLease
	// RepairRunning counts an older release's running entries with no
	// lease key: runs recorded abandoned by the reap duty after their lease
	// key expired, and entries that were no run id, removed by the sweep.
	// A run of this release (a field of runs, holding its lease) is never
	// one.
	RepairRunning = rdb.RepairRunning
	// RepairLock counts task locks held for no run in progress by a process
	// that was gone, or by no process: deleted, the run recorded abandoned.
	RepairLock = rdb.RepairLock
	// RepairQueue counts queue members with no task hash, removed.
	RepairQueue = rdb.RepairQueue
	// RepairDue counts first-due fields (when a job put back in the queue
	// was first due) of jobs that no longer exist, removed.
	RepairDue = rdb.RepairDue
	// RepairIndex counts task hashes that were in neither the queue nor the
	// unqueued set (a lost queue entry), put in the unqueued set, from
	// which the requeue queues them again.
	RepairIndex = rdb.RepairIndex
)

// RepairKinds returns the kinds of repair, in the order the operator's
// overview prints them.
func RepairKinds() []string { return rdb.RepairKinds() }

const (
	// sweepCount is the COUNT of each scan call of the sweep, and so about
	// how many candidates one script call checks.
	sweepCount = 100
	// sweepCallsPerTick bounds the scan calls of one master tick.
	sweepCallsPerTick = 10
	// sweepEvery is how many heartbeats after a pass ends the next starts.
	sweepEvery = 10
	// sweepMaxClaims bounds the claim ids one pass checks.
	sweepMaxClaims = 10000
)

// sweeper is the sweep's progress. The maintain goroutine alone uses it.
type sweeper struct {
	active bool
	next   time.Time // when the next pass may start
	step   int       // index into sweepSteps
	cursor uint64    // the step's scan cursor
	claims map[string]bool
}

// sweepStep scans one page from cursor, has its candidates checked and
// repaired, and returns the next cursor (0 when the step is done).
type sweepStep func(mt *maintainer, ctx context.Context, cursor uint64) (uint64, error)

// sweepPage is the step of one page method of the data model, whose
// repairs are of kind.
func sweepPage(kind string, page func(mt *maintainer, ctx context.Context, cursor uint64) (uint64, []string, error)) sweepStep {
	return func(mt *maintainer, ctx context.Context, cursor uint64) (uint64, error) {
		next, ids, err := page(mt, ctx, cursor)
		mt.repaired(ctx, kind, ids)
		return next, err
	}
}

// sweepSteps are the steps of a pass, in order. The claim steps read the
// leases before the owners (see rdb.SweepClaims).
var sweepSteps = []sweepStep{
	sweepPage(RepairQueue, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepQueue(ctx, c, sweepCount)
	}),
	sweepPage(RepairIndex, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepTaskIndex(ctx, c, sweepCount)
	}),
	func(mt *maintainer, ctx context.Context, c uint64) (uint64, error) {
		next, _, err := mt.db.SweepTrackedRunTime(ctx, c, sweepCount)
		return next, err
	},
	sweepPage(RepairJob, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepJobs(ctx, c, sweepCount)
	}),
	(*maintainer).sweepClaimLeases,
	(*maintainer).sweepClaimOwners,
	sweepPage(RepairRunning, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepRunning(ctx, c, sweepCount)
	}),
	sweepPage(RepairLease, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepLeases(ctx, c, sweepCount, mt.lostRuns(ctx))
	}),
	sweepPage(RepairLock, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepLocks(ctx, c, sweepCount, mt.lostRuns(ctx))
	}),
	sweepPage(RepairDue, func(mt *maintainer, ctx context.Context, c uint64) (uint64, []string, error) {
		return mt.db.SweepFirstDue(ctx, c, sweepCount)
	}),
}

// sweep is the master duty: it goes on with the current pass, or starts
// one when it is time, for at most sweepCallsPerTick scan calls. A failed
// call keeps its cursor, so the page is read again next tick.
func (mt *maintainer) sweep(ctx context.Context) error {
	w := &mt.sweeper
	if !w.active {
		if time.Now().Before(w.next) {
			return nil
		}
		*w = sweeper{active: true}
	}
	for range sweepCallsPerTick {
		next, err := sweepSteps[w.step](mt, ctx, w.cursor)
		if err != nil {
			return err
		}
		w.cursor = next
		if next != 0 {
			continue
		}
		if w.step++; w.step == len(sweepSteps) {
			*w = sweeper{next: time.Now().Add(sweepEvery * mt.opts.heartbeat)}
			return nil
		}
	}
	return nil
}

// lostRuns is how the lease and lock steps judge and record lost runs.
func (mt *maintainer) lostRuns(ctx context.Context) rdb.LostRuns {
	return rdb.LostRuns{ProcessTTL: mt.opts.processTTL, History: mt.history(), EndMS: ms(mt.clock.Now()),
		NotAfterMS: mt.dutyDeadline(ctx)}
}

// sweepClaimLeases reads one page of the claims that hold a lease: the
// claims this pass checks.
func (mt *maintainer) sweepClaimLeases(ctx context.Context, cursor uint64) (uint64, error) {
	next, claims, err := mt.db.ScanLeasedClaims(ctx, cursor, sweepCount)
	if err != nil {
		return cursor, err
	}
	w := &mt.sweeper
	if w.claims == nil {
		w.claims = map[string]bool{}
	}
	for _, c := range claims {
		if len(w.claims) >= sweepMaxClaims {
			break
		}
		w.claims[c] = true
	}
	return next, nil
}

// sweepClaimOwners reads one page of jobs:owner, crossing off the claims
// that own a job; after the last page, the claims left have their leases
// removed.
func (mt *maintainer) sweepClaimOwners(ctx context.Context, cursor uint64) (uint64, error) {
	w := &mt.sweeper
	if len(w.claims) == 0 {
		return 0, nil
	}
	next, owning, err := mt.db.ScanOwnerClaims(ctx, cursor, sweepCount)
	if err != nil {
		return cursor, err
	}
	for _, c := range owning {
		delete(w.claims, c)
	}
	if next != 0 || len(w.claims) == 0 {
		return next, nil
	}
	removed, err := mt.db.SweepClaims(ctx, slices.Collect(maps.Keys(w.claims)))
	mt.repaired(ctx, RepairClaim, removed)
	if err != nil {
		return cursor, err // this page again next tick
	}
	w.claims = nil
	return 0, nil
}

// repaired logs what a sweep step (or reap) repaired and tells the hook.
func (mt *maintainer) repaired(ctx context.Context, kind string, ids []string) {
	if len(ids) == 0 {
		return
	}
	shown := ids
	if len(shown) > 20 {
		shown = shown[:20]
	}
	mt.log.Warn("invariant sweep repaired "+kind, "kind", kind, "n", len(ids), "ids", strings.Join(shown, ","))
	if h := mt.opts.hooks.Repaired; h != nil {
		h(ctx, kind, len(ids))
	}
}

// countRepaired counts repairs another duty made (reap's abandoned runs
// whose lease was gone) in the sweep hash, logs them and tells the hook.
func (mt *maintainer) countRepaired(ctx context.Context, kind string, ids ...string) {
	if err := mt.db.CountRepairs(ctx, kind, len(ids)); err != nil && ctx.Err() == nil {
		mt.log.Warn("counting a repair failed", "kind", kind, "err", err)
	}
	mt.repaired(ctx, kind, ids)
}
