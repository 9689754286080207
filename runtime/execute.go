package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// taskRunner is the task runner component: it runs the fires the
// dispatcher won, keeps them in flight (their locks and leases renewed by
// the maintainer) until their finishes are written in batches
// (finishbatch.go), and retries failed fires that have retries.
type taskRunner struct {
	*engine
	mu       sync.Mutex
	inflight map[string]*inflightRun // by run id; guarded by mu
	finishes batchQueue[*runEnd]     // batched finishes (finishbatch.go)
	// goroutines run the handlers, reused from run to run (run.go).
	goroutines *handlerGoroutines[*runEnd]
}

func newTaskRunner(e *engine) *taskRunner {
	tr := &taskRunner{engine: e, inflight: make(map[string]*inflightRun)}
	tr.goroutines = newHandlerGoroutines(e, tr.execute)
	tr.finishes.linger, tr.finishes.write = finishLinger, tr.flushFinishes
	return tr
}

// inflightRun is a run in progress in this process, whose lock and lease
// maintenance renews until it finishes.
type inflightRun struct {
	task, runID string
	lockValue   string // rdb.LockValue: released only by its holder
	lease       string // rdb.Lease, encoded
	ttl         time.Duration
	slots       string      // the task's type when it holds a fire slot (its type has max_running), else ""
	finished    atomic.Bool // set before the run is recorded (see restoreRuns)
}

// count returns how many runs are in flight in this process.
func (tr *taskRunner) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.inflight)
}

// runsInFlight returns the runs in progress in this process.
func (tr *taskRunner) runsInFlight() []*inflightRun {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Collect(maps.Values(tr.inflight))
}

// leaseValue is a run's lease, its field's value in runs: who runs what.
func leaseValue(process, task string, fireMS, startMS int64) string {
	return rdb.Lease{Process: process, Task: task, Fire: fireMS, Start: startMS}.Encode()
}

// startRun runs f's handler on a handler goroutine (an idle one, or a new
// one: see handlerGoroutines); the dispatch loop already holds a worker
// slot for it, which the goroutine gives back when the handler returns
// (its finish is then written in the next batch).
func (tr *taskRunner) startRun(f *fire) {
	m := f.state.Member
	run := &inflightRun{
		task:      m,
		runID:     f.runID,
		lockValue: rdb.LockValue(tr.id, ms(f.at)),
		lease:     f.lease,
		ttl:       f.runTimeout(),
		slots:     fireSlots(f),
	}
	tr.mu.Lock()
	tr.inflight[f.runID] = run
	tr.mu.Unlock()
	tr.goroutines.start(&runEnd{f: f, run: run})
}

// execute runs one fire's handler, gives its worker slot back and queues
// its outcome for the next batch of finishes; once that is written the run
// leaves the runs in flight, a failed run is retried, and the hooks and
// listeners are told (flushFinishes, run.go).
func (tr *taskRunner) execute(e *runEnd) {
	f := e.f
	rep, rec := tr.runHandler(tr.runCtx, handlerRun{
		info:    RunInfo{Task: f.state.Member, Fire: f.at, Due: f.at, Attempt: 1, Process: tr.id},
		entry:   f.reg,
		timeout: f.runTimeout(),
		build:   func() (TaskInterface, error) { return tr.newTask(f) },
	})
	e.run.finished.Store(true)
	e.rec, e.cost, e.report = rec, rep.cost, rep
	if rep.err != nil {
		e.retries = f.reg.Config().Retries
	}
	tr.finish(e)
}

// retryFire re-runs a failed or abandoned fire of a scheduled task as a
// one-off job of the task's type (with its parameters), after the first
// backoff and with retries-1 further attempts. The schedule does not move.
// The job's id is derived from the run id, so a fire is retried once even
// if two processes decide to retry it; its envelope carries the fire's
// instant, which its runs report as RunInfo.Fire (their Due is the
// backoff's end).
func (tr *taskRunner) retryFire(typ, params string, retries int, runID string, fire time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := Client{db: tr.db, reg: tr.all, opts: tr.opts}
	_, err := c.EnqueueRaw(ctx, typ, json.RawMessage(params), In(tr.backoff(1)), MaxRetries(retries-1), WithID(runID+"/retry"),
		scheduledAt(fire))
	if err != nil && !errors.Is(err, ErrDuplicate) {
		tr.log.Error("could not schedule the retry of a failed run", "run", runID, "err", err)
		return
	}
	tr.log.Info("failed run will be retried", "run", runID, "retries", retries)
}

// newTask builds the handler value: a fresh copy of the type's provided
// value (Provide) or a new value of the registered type, with the run-time
// task's parameters decoded into it.
func (tr *taskRunner) newTask(f *fire) (TaskInterface, error) {
	task := tr.newValue(f.reg)
	if f.state.Params != "" {
		if err := json.Unmarshal([]byte(f.state.Params), task); err != nil {
			return nil, fmt.Errorf("decode params of task %q into %s: %w", f.state.Member, f.reg.Config().Class, err)
		}
	}
	return task, nil
}

// finish queues the run's finish for the next batch (finishbatch.go) and
// gives the worker slot back. Until the finish is written the run stays in
// flight here and its lock and lease are renewed; the batch's writer then
// takes it out of the runs in flight, retries it if it failed, and reports
// it. Redis being away is retried for a while, so a finished run is not
// reported abandoned.
func (tr *taskRunner) finish(e *runEnd) {
	tr.running.Add(1) // done once the finish is written and reported
	tr.finishes.add(e)
	tr.slots <- struct{}{} // the handler is done: the worker may take the next fire
}
