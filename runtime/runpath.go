package runtime

import (
	"context"

	"github.com/gocrontab/crontab/internal/runpath"
)

// The bridge to package crontabtest: its Runner runs a handler through the
// one run path (run.go) with an engine that has the options of a Scheduler
// and nothing else (no Redis: its clock is the local one). The outcome is
// reported at once, on the calling goroutine, where a scheduler reports it
// once it is written.
func init() { runpath.New = newRunPath }

// newRunPath returns the run path of a Scheduler built with options (a
// []Option), or NewScheduler's error for them.
func newRunPath(options any) (runpath.Func, error) {
	opts, _ := options.([]Option)
	o, err := buildOptions(scopeScheduler, opts)
	if err != nil {
		return nil, err
	}
	if o.processID == "" {
		o.processID = defaultProcessID()
	}
	e := &engine{
		opts:  o,
		log:   o.logger.With("process", o.processID),
		clock: newServerClock(nil, o.localClock), // never synced: local time
		id:    o.processID,
	}
	return e.runOne, nil
}

// runOne runs r's handler as a fire or a delivered job runs and reports it.
func (e *engine) runOne(ctx context.Context, r runpath.Run) runpath.Outcome {
	fire := r.Fire
	if fire.IsZero() {
		fire = e.clock.Now()
	}
	at := fromMS(ms(fire))
	info := RunInfo{Task: r.Entry.Config().Name, JobID: r.JobID, Fire: at, Due: at, Attempt: r.Attempt, Process: e.id}
	rep, _ := e.runHandler(ctx, handlerRun{
		info:  info,
		entry: r.Entry,
		build: func() (TaskInterface, error) { return r.Task, nil },
	})
	e.report(withRun(ctx, info), rep)
	return runpath.Outcome{Fire: info.Fire, Process: e.id, Start: rep.start, Cost: rep.cost, Err: rep.err}
}
