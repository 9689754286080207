package runtime

import "context"

// retakeLocks takes again the locks of this process's runs in progress
// after Redis lost its data, so that no fire of a non-concurrent task
// starts beside a run that is still going. A run that finished meanwhile
// gives its lock back.
func (tr *taskRunner) retakeLocks(ctx context.Context) {
	runs := tr.runsInFlight()
	for _, r := range runs {
		took, err := tr.db.RetakeLock(ctx, r.task, r.lockValue, r.ttl)
		if err != nil {
			tr.log.Warn("could not take the lock of a running task again", "task", r.task, "err", err)
			continue
		}
		// finished is set before the run's finish script is sent: if that
		// script ran before ours, the lock we just took is nobody'tr.
		if took && r.finished.Load() {
			_ = tr.db.ReleaseLock(ctx, r.task, r.lockValue)
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
