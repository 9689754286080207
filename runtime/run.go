package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
)

// The one run path. A scheduled fire (execute.go) and a delivered job
// (jobrun.go) differ in how they are claimed and how their outcome is
// written (a batched finish, a batched ack); everything between is here:
// the handler value, its ctx and deadline, the BeforeExecute hook, the
// middleware, panic recovery, the timeout's error text, the history record,
// and, once the outcome is written, the hooks and listeners.
//
// Hook timing, the same for both: BeforeExecute is called on the goroutine
// that runs the handler, just before it, with the handler's ctx. Executed or
// Failed, then the listeners, are called once the run's outcome is written
// to Redis, on a goroutine that reports the runs of one written batch in
// order, with a ctx that carries the RunInfo but not the handler's
// deadline.

// handlerGoroutineIdle is how long a handler goroutine waits for the next
// run before it exits. Reusing goroutines keeps their grown stacks: a new
// one per run spends more time growing its stack (decoding the parameters,
// the ctx, the middleware) than running a small handler.
const handlerGoroutineIdle = time.Second

// handlerGoroutines runs the handlers of one kind of run (fires, jobs) on
// reused goroutines: a run goes to an idle one, or to a new one when none
// is idle. A goroutine exits once idle for handlerGoroutineIdle, or when
// the handlers' ctx ends. Each run holds a count of Scheduler.running
// until its handler's outcome is queued.
//
// A goroutine gives its worker slot back just before it returns to idle,
// so the next run is often started while it is on its way there: counting
// it idle from then on, not from when it waits, hands that run to it
// instead of to a new goroutine (whose stack grows again).
type handlerGoroutines[T any] struct {
	e    *engine
	run  func(T) // runs one item: its handler, and the queueing of its outcome
	idle chan T  // unbuffered: the handoff to an idle goroutine
	mu   sync.Mutex
	// free counts the goroutines done with their run and not exiting,
	// less the runs being handed to them: a start that takes one sends
	// its run on idle, which one of them then receives.
	free int
}

func newHandlerGoroutines[T any](e *engine, run func(T)) *handlerGoroutines[T] {
	return &handlerGoroutines[T]{e: e, run: run, idle: make(chan T)}
}

// start runs item on an idle goroutine, or a new one.
func (g *handlerGoroutines[T]) start(item T) {
	g.e.running.Add(1)
	g.mu.Lock()
	reuse := g.free > 0
	if reuse {
		g.free--
	}
	g.mu.Unlock()
	if reuse {
		g.idle <- item // a goroutine counted free receives it
		return
	}
	go g.loop(item)
}

// loop runs item, then the items handed to it while idle, until it has
// been idle for handlerGoroutineIdle or the handlers' ctx ended.
func (g *handlerGoroutines[T]) loop(item T) {
	e := g.e
	timer := time.NewTimer(handlerGoroutineIdle)
	defer timer.Stop()
	for {
		g.run(item)
		e.running.Done()
		g.mu.Lock()
		g.free++
		g.mu.Unlock()
		timer.Reset(handlerGoroutineIdle)
		select {
		case item = <-g.idle:
			continue
		case <-timer.C:
		case <-e.runCtx.Done():
		}
		g.mu.Lock()
		exit := g.free > 0 // else a start counted on this goroutine: its run is on the way
		if exit {
			g.free--
		}
		g.mu.Unlock()
		if exit {
			return
		}
		item = <-g.idle
	}
}

// handlerRun is one call of a handler.
type handlerRun struct {
	info  RunInfo
	entry *registry.Entry
	// timeout bounds the run; 0 is the entry's (a run-time task with a
	// timeout of its own passes that).
	timeout time.Duration
	// build returns the handler value: a new value of the type or a fresh
	// copy of its provided value (provide.go), with the run-time task's
	// parameters or the job's payload decoded into it.
	build func() (TaskInterface, error)
}

// runReport is what the hooks and listeners are told of a run once its
// outcome is written.
type runReport struct {
	info  RunInfo
	start time.Time
	cost  time.Duration
	err   error
}

// runHandler runs h's handler with a ctx derived from parent (a
// scheduler's runCtx) and returns its report and history record.
func (e *engine) runHandler(parent context.Context, h handlerRun) (*runReport, Record) {
	timeout := h.timeout
	if timeout <= 0 {
		timeout = h.entry.Config().Timeout
	}
	ctx, cancel := context.WithTimeout(withRun(parent, h.info), timeout)
	defer cancel()
	start := e.clock.Now()
	task, err := h.build()
	if err == nil {
		if hook := e.opts.hooks.BeforeExecute; hook != nil {
			hook(ctx, h.info)
		}
		err = e.call(ctx, h.info, task)
	}
	end := e.clock.Now()
	if err != nil && errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timeout %v exceeded: %w", timeout, err)
	}
	rec := Record{Task: h.info.Task, JobID: h.info.JobID, Fire: h.info.Fire, Start: start, End: end,
		Outcome: OutcomeOK, Process: e.id, Attempt: h.info.Attempt}
	if err != nil {
		rec.Outcome, rec.Error = OutcomeFailed, err.Error()
	}
	return &runReport{info: h.info, start: start, cost: end.Sub(start), err: err}, rec
}

// call runs task's handler through the middleware chain; a panic anywhere
// in it is a failed run.
func (e *engine) call(ctx context.Context, info RunInfo, task TaskInterface) error {
	if len(e.opts.middleware) == 0 {
		return safeHandle(ctx, task)
	}
	next := task.Handle
	for i := len(e.opts.middleware) - 1; i >= 0; i-- {
		m, inner := e.opts.middleware[i], next
		next = func(ctx context.Context) error { return m(ctx, info, inner) }
	}
	return safeHandle(ctx, handlerFunc(next))
}

// handlerFunc adapts a function to a TaskInterface.
type handlerFunc func(context.Context) error

// Handle calls f.
func (f handlerFunc) Handle(ctx context.Context) error { return f(ctx) }

// safeHandle calls Handle, turning a panic into an error.
func safeHandle(ctx context.Context, task TaskInterface) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return task.Handle(ctx)
}

// reportRuns tells the hooks and listeners of runs whose outcome is
// written, in order; each report holds a count of Scheduler.running, done
// once it is told.
func (e *engine) reportRuns(reports []*runReport) {
	for _, r := range reports {
		e.report(withRun(e.runCtx, r.info), r)
		e.running.Done()
	}
}

// report calls the hooks and listeners of a finished run.
func (e *engine) report(ctx context.Context, r *runReport) {
	info := r.info
	if r.err != nil {
		e.log.Warn("run failed", "task", info.Task, "job", info.JobID, "fire", info.Fire, "attempt", info.Attempt, "err", r.err)
		if h := e.opts.hooks.Failed; h != nil {
			h(ctx, info, r.err)
		}
	} else {
		if e.log.Enabled(ctx, slog.LevelDebug) { // the arguments cost allocations even when not logged
			e.log.Debug("run ok", "task", info.Task, "job", info.JobID, "fire", info.Fire, "cost", r.cost.String())
		}
		if h := e.opts.hooks.Executed; h != nil {
			h(ctx, info, r.cost)
		}
	}
	res := Result{RunInfo: info, Start: r.start, Cost: r.cost, OK: r.err == nil, Err: r.err}
	for _, l := range e.opts.listeners {
		l.OnComplete(ctx, res)
	}
}
