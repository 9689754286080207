package runtime

import (
	"context"

	"github.com/gocrontab/crontab/internal/rdb"
)

// restoreRuns writes again, after Redis lost its data, the state of this
// process's runs in progress: each run's lock (so that no fire of a
// non-concurrent task starts beside a run that is still going), lease (its
// field of the runs hash, which the master's reap reads) and run lease (so
// that its renewals find it, and a peer takes the lock over and records
// the run abandoned if this process dies before the run ends). A run that finished meanwhile gives back
// what was written for it.
func (tr *taskRunner) restoreRuns(ctx context.Context) {
	leases := tr.runLeases()
	for _, r := range tr.runsInFlight() {
		run := rdb.RunRestore{Task: r.task, RunID: r.runID, LockValue: r.lockValue, Lease: r.lease, TTL: r.ttl}
		if _, err := tr.db.RestoreRun(ctx, run, leases); err != nil {
			tr.log.Warn("could not write again the lock and lease of a running task", "task", r.task, "err", err)
			continue
		}
		// finished is set before the run's finish script is sent: if that
		// script ran before ours, what we just wrote is nobody's.
		if r.finished.Load() {
			if err := tr.db.DropRestored(ctx, run); err != nil {
				tr.log.Warn("could not take back the lock and lease of a finished run", "task", r.task, "err", err)
			}
		}
	}
}

// hasSchedules reports whether the registry holds a scheduled task (not
// only job types): only then does registration write the namespace's meta.
func (e *engine) hasSchedules() bool {
	for _, reg := range e.reg.Entries() {
		if reg.Schedule() != nil {
			return true
		}
	}
	return false
}
