package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// runEnd is the end of one run of a scheduled task, waiting to be written
// by the finish queue.
type runEnd struct {
	f    *fire
	run  *inflightRun
	rec  Record
	cost time.Duration
	// report is told to the hooks and listeners once written; it holds a
	// count of Scheduler.running.
	report *runReport
	// retries is how many times a failed run is retried (its type's
	// Retries), once its finish is written; 0 for a run that did not fail.
	retries int
	done    chan struct{} // when not nil: closed once written (or given up on)
}

// finishLinger is how long the flusher of run finishes, started by a
// finish in an idle queue, waits before its first call. The runs of one
// instant end within a few milliseconds of each other: waiting lets them go
// in one call instead of a call for the first run and one for the rest, and
// lets the claims that the other processes send at the same instant reach
// Redis first (the lag of the instant's fires waits on claims, not on
// finishes). A run's lock is released, and its record written, that much
// later.
const finishLinger = 3 * time.Millisecond

// flushFinishes writes a batch of run finishes, then takes the runs out of
// the runs in flight, wakes those waiting for them, retries the failed runs
// that have retries, and has the runs reported.
func (tr *taskRunner) flushFinishes(batch []*runEnd) {
	tr.writeFinishes(batch)
	tr.mu.Lock()
	for _, e := range batch {
		delete(tr.inflight, e.f.runID)
	}
	tr.mu.Unlock()
	reports := make([]*runReport, 0, len(batch))
	for _, e := range batch {
		if e.done != nil {
			close(e.done)
		}
		if e.retries > 0 {
			tr.running.Add(1)
			go func() {
				defer tr.running.Done()
				tr.retryFire(e.f.state.Type, e.f.state.Params, e.retries, e.f.runID, e.f.at)
			}()
		}
		if e.report != nil {
			reports = append(reports, e.report)
		}
	}
	if len(reports) > 0 {
		go tr.reportRuns(reports)
	}
}

// writeFinishes records a batch of finished runs with one call of
// finishRunsScript, retrying while Redis is away (for up to 30s; after that
// the runs are reported abandoned by the master). Of each task's history
// only the newest records that the history keeps are sent.
func (tr *taskRunner) writeFinishes(batch []*runEnd) {
	recorded := map[string]int{} // per task: runs in the batch
	for _, e := range batch {
		recorded[e.f.state.Member]++
	}
	runs := make([]rdb.RunFinish, len(batch))
	for i, e := range batch {
		m := e.f.state.Member
		rec := ""
		// LPUSH then LTRIM keeps the newest historyLen records: older
		// ones of this batch would be trimmed at once.
		if recorded[m] <= tr.opts.historyLen {
			rec = e.rec.encode()
		}
		recorded[m]--
		runs[i] = rdb.RunFinish{RunID: e.f.runID, Task: m, LockValue: e.run.lockValue, Outcome: string(e.rec.Outcome),
			Error: e.rec.Error, DurationMS: e.cost.Milliseconds(), Record: rec, Once: e.f.once, Slots: e.run.slots,
			LagMS: lagMS(e.rec)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		foreign, err := tr.db.FinishRuns(ctx, tr.history(), runs)
		if err == nil {
			for i, f := range foreign {
				if f {
					m := batch[i].f.state.Member
					tr.log.Warn("history key holds a foreign value; run not recorded in the history", "task", m, "key", tr.keys.History(m))
				}
			}
			return
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("record %d finished runs: %w", len(batch), err)
			for _, e := range batch {
				tr.log.Error("could not record run; it will be reported abandoned", "task", e.f.state.Member, "fire", e.f.at, "err", err)
			}
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// history is how much of each task's history the scheduler keeps.
func (e *engine) history() rdb.HistoryBound {
	return rdb.HistoryBound{Records: e.opts.historyLen, Age: e.opts.historyAge}
}

// lagMS is how late a run started after its scheduled instant, for the
// per-minute stats: 0 when either is unknown.
func lagMS(r Record) int64 {
	if r.Fire.IsZero() || r.Start.IsZero() {
		return 0
	}
	return max(r.Start.Sub(r.Fire).Milliseconds(), 0)
}
