package runtime

import (
	"context"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// Run leases (internal/rdb/runlease.go has the data model): every run a
// claim wins gets one, which this process renews every TTL/6 with one call
// for all its runs in progress (runLeaseRenewer, a goroutine of its own, so
// neither a slow heartbeat nor a busy dispatch loop delays it). A claim of
// the task's next instant that finds the lock held by a run whose run
// lease expired, while the namespace's pulse was steady for a whole TTL,
// records that run abandoned and takes the lock over, in one script call.
//
// The timing budget, with the default TTL of 1.5 s (renewals every 250 ms,
// pulses steady while at most 750 ms apart):
//
//   - kill -> lease expired: at most the TTL after the last renewal that
//     landed, so at most 1.5 s after the kill (1.25-1.5 s);
//   - lease expired -> takeover: the claim of the task's next instant
//     that finds the lock held by a run whose lease runs out within a TTL
//     of the instant defers (rdb.FireDeferred: nothing written) until the
//     deadline and claims again (dispatcher.deferClaim), so a
//     millisecond after the expiry;
//   - takeover -> handler start: the claim's own round trip (about a
//     millisecond).
//
// So an every:1s task runs its next instant elsewhere 1.25-1.5 s after the
// kill, wherever in its second the kill lands. A live holder renews past
// the deadline: the deferred claim then skips and records the fire, a
// lease later than without the wait.
//
// Pause tolerance: a run lease that landed at t lasts until t + TTL and
// the next renewal leaves TTL/6 later, so a process stopped for less than
// 5/6 of the TTL (1.25 s) renews in time, whatever it was doing; a stop
// plus a Redis stall the pulse cannot see (up to TTL/2) must stay under
// that too. A Redis stall or outage longer than TTL/2 breaks the pulse:
// then nothing is taken over until pulses came steadily for a TTL, in
// which every live holder renews (a renewal moves a deadline that already
// passed), so a Redis stall of any length loses nothing.

// runLeaseRenewals is how many renewals a run lease gets per TTL: at 6, a
// renewal may be late by 5/6 of the TTL (a stopped process, a slow round
// trip) before its run is lost, and the renewals of a process cost 4
// script calls a second at the default TTL.
const runLeaseRenewals = 6

// runLeases is the run lease settings of this process: its TTL, and the
// largest gap between pulses that still counts as Redis serving steadily,
// half the TTL: three renewal periods, so one process's late pulse does
// not break it, and short enough that a Redis stall the pulse does not
// see leaves a holder more than TTL/3 of its lease to renew.
//
// A run's lease (its field of the runs hash, which the master's reap reads)
// has no TTL: it lasts until the run's finish deletes it, however short the
// run's timeout. (An older release kept it in a key of its own with a TTL
// of the timeout plus a margin of two heartbeats, renewed at each beat, so
// that a run shorter than a heartbeat, still going past its ctx's deadline
// or with its finish on its way, would not lose it and be recorded
// abandoned, and retried, while its process lived: no margin is needed
// now.)
func (e *engine) runLeases() rdb.RunLeases {
	return rdb.RunLeases{TTL: e.opts.runLease, Gap: e.opts.runLease / 2}
}

// runLeaseRenewer renews the run leases of this process's runs in progress
// every TTL/6, and pulses even with none, until ctx ends: Run ends it after
// the handlers finished (or were given up on at shutdown), so a run stays
// this process's for as long as its handler runs.
func (tr *taskRunner) runLeaseRenewer(ctx context.Context) {
	every := tr.opts.runLease / runLeaseRenewals
	tick := time.NewTicker(every)
	defer tick.Stop()
	failing := false
	lost := lostLeases{since: map[string]time.Time{}, warned: map[string]bool{}}
	for {
		runs := tr.runsInFlight()
		ids := make([]string, len(runs))
		var slots []string // nil unless a run holds a fire slot
		for i, r := range runs {
			ids[i] = r.runID
			if r.slots != "" {
				if slots == nil {
					slots = make([]string, len(runs))
				}
				slots[i] = r.slots
			}
		}
		// A call held up by a Redis stall is given up after a TTL: the
		// next one goes on another connection.
		cctx, cancel := context.WithTimeout(ctx, tr.opts.runLease)
		gone, err := tr.db.RenewRunLeases(cctx, tr.runLeases(), ids, slots)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				tr.log.Warn("renewing run leases failed; retrying", "err", err, "every", every.String())
			}
			failing = true
		case err == nil && failing:
			tr.log.Info("renewing run leases works again")
			failing = false
		}
		tr.reportLostLeases(runs, gone, &lost, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// lostLeases follows, in the run lease renewer, the runs in progress whose
// run lease is gone.
type lostLeases struct {
	since  map[string]time.Time // run id -> first renewal that found it gone, since
	warned map[string]bool      // run ids whose lost lease was logged
}

// reportLostLeases logs, once per run, a run in progress whose run lease
// has been gone for two heartbeats at now: another process took its lock
// over (this process was stopped or cut off from Redis for longer than its
// run lease allows). A lease gone for less is not reported: after Redis
// lost its data the maintenance loop writes it again at the heartbeat that
// finds the loss (restoreRuns). A run whose finish was written meanwhile
// is not one.
func (tr *taskRunner) reportLostLeases(runs []*inflightRun, gone []string, l *lostLeases, now time.Time) {
	inflight := make(map[string]*inflightRun, len(runs))
	for _, r := range runs {
		inflight[r.runID] = r
	}
	isGone := make(map[string]bool, len(gone))
	for _, id := range gone {
		isGone[id] = true
	}
	for id := range l.since {
		if !isGone[id] {
			delete(l.since, id) // renewed again: written back, or finished
		}
	}
	for id := range l.warned {
		if inflight[id] == nil {
			delete(l.warned, id)
		}
	}
	for _, id := range gone {
		r := inflight[id]
		if r == nil || r.finished.Load() || l.warned[id] {
			continue
		}
		since, seen := l.since[id]
		if !seen {
			l.since[id] = now
			continue
		}
		if now.Sub(since) < 2*tr.opts.heartbeat {
			continue
		}
		l.warned[id] = true
		tr.log.Error("run lease lost during the run: this process was stopped or cut off from Redis for longer than its run lease; "+
			"another process may run the task meanwhile", "task", r.task, "run", id,
			"run_lease", tr.opts.runLease.String())
	}
}

// tookOver reports the run whose lock f's claim took over (rdb.FireTakeover):
// the claim recorded it abandoned. As the master's reap does, it logs it,
// calls the Abandoned hook and retries the fire if the task has retries;
// the hook and the retry run on a goroutine, off the dispatch loop.
func (mt *maintainer) tookOver(f *fire, h rdb.Holder) {
	task, at := f.state.Member, fromMS(h.FireMS)
	mt.log.Warn("run abandoned: its process stopped renewing its run lease; its lock was taken over",
		"task", task, "fire", at, "process", h.Process, "next_fire", f.at)
	mt.running.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if hook := mt.opts.hooks.Abandoned; hook != nil {
			hook(ctx, RunInfo{Task: task, Fire: at, Due: at, Attempt: 1, Process: h.Process})
		}
		mt.retryAbandoned(ctx, task, rdb.RunID(task, h.FireMS), at)
	})
}
