package crontabtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/runpath"
	crontab "github.com/gocrontab/crontab/runtime"
	"github.com/gocrontab/crontab/runtime/registry"
)

// NewRegistry returns a registry with the tasks each register func adds:
// the Register funcs crontabgen writes. It fails tb when one returns an
// error.
func NewRegistry(tb testing.TB, register ...func(*crontab.Registry) error) *crontab.Registry {
	tb.Helper()
	reg := crontab.NewRegistry()
	for i, f := range register {
		if f == nil {
			tb.Fatalf("crontabtest: NewRegistry: register func %d is nil", i)
		}
		if err := f(reg); err != nil {
			tb.Fatalf("crontabtest: NewRegistry: register func %d: %v", i, err)
		}
	}
	return reg
}

// Runner runs the handlers of a registry's tasks the way a Scheduler with
// the same options does, without a Scheduler and without Redis: through the
// scheduler's own run path, so a handler gets the ctx a real run gets. A
// Runner is safe for concurrent use.
type Runner struct {
	reg *crontab.Registry
	run runpath.Func
}

// NewRunner returns a runner for the tasks of reg with a Scheduler's
// options: those a run uses are crontab.WithMiddleware, WithHooks
// (BeforeExecute, Executed, Failed), WithListener, WithProcessID, WithLogger
// and WithLocalClock (the runner's clock; there is no Redis time); the
// others are accepted and unused. It fails tb when reg is nil, or with
// NewScheduler's error for an option it would reject (a bad value, or a
// Client's option).
func NewRunner(tb testing.TB, reg *crontab.Registry, opts ...crontab.Option) *Runner {
	tb.Helper()
	if reg == nil {
		tb.Fatalf("crontabtest: NewRunner: nil registry")
	}
	run, err := runpath.New(opts)
	if err != nil {
		tb.Fatalf("crontabtest: NewRunner: %v", err)
	}
	return &Runner{reg: reg, run: run}
}

// RunOption sets a detail of the run Runner.Run starts.
type RunOption func(*runOptions)

type runOptions struct {
	fire    time.Time
	attempt int
	jobID   *string
}

// WithFireTime sets the run's scheduled instant, what crontab.FireTime(ctx)
// returns: truncated to the millisecond and in the Local zone, like an
// instant a scheduler reads from Redis (compare it with Time.Equal). The
// default is now (the runner's clock, see crontab.WithLocalClock), so
// truncated.
func WithFireTime(t time.Time) RunOption { return func(o *runOptions) { o.fire = t } }

// WithAttempt sets the run's attempt number, what crontab.Attempt(ctx)
// returns: 2 is a job's first retry. The default is 1; it must be at
// least 1.
func WithAttempt(n int) RunOption { return func(o *runOptions) { o.attempt = n } }

// WithJobID sets the run's job id, what crontab.Run(ctx) returns in
// RunInfo.JobID. The default is a random id (as Client.Enqueue gives) for a
// job type (a task without an expression), and "" (a scheduled fire) for a
// task with a schedule; WithJobID("") makes any run a scheduled fire.
func WithJobID(id string) RunOption { return func(o *runOptions) { o.jobID = &id } }

// Run calls task's handler once, the way a scheduler runs a fire or a job
// of task's registered type, and returns its error. The handler's ctx is
// derived from ctx and carries the run's crontab.RunInfo (FireTime,
// TaskName, Attempt, JobID, the runner's process id) and the task's
// deadline (its TaskConfig.Timeout: a handler that overruns it fails with
// "timeout <Timeout> exceeded: context deadline exceeded"). The
// BeforeExecute hook is called just before the handler, on the calling
// goroutine, with the handler's ctx; the middleware wraps the handler, the
// first given the outermost; a panic in the handler goes up through the
// middleware (which may recover it) and is then the error
// "panic: <value>" with its stack, as is a panic in a middleware. Once the handler returned, the Executed
// or Failed hook and the listeners are told (a scheduler tells them once
// the outcome is written to Redis), on the calling goroutine.
//
// task is called as it is (not a copy, not decoded from JSON), so the
// test can read what the handler left in it; its dependencies are the
// test's. Run fails tb when task is nil or its type is not registered, or
// on a bad option: those are mistakes in the test, never the handler's
// error.
func (r *Runner) Run(ctx context.Context, tb testing.TB, task crontab.TaskInterface, opts ...RunOption) error {
	tb.Helper()
	entry := r.entry(tb, "Run", task)
	o := runOptions{attempt: 1}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.attempt < 1 {
		tb.Fatalf("crontabtest: Run: WithAttempt(%d): the attempt counts from 1", o.attempt)
	}
	id := ""
	switch {
	case o.jobID != nil:
		id = *o.jobID
	case entry.Schedule() == nil:
		id = newJobID()
	}
	return r.run(ctx, runpath.Run{Entry: entry, Task: task, JobID: id, Fire: o.fire, Attempt: o.attempt}).Err
}

// FireNext fires task's next n scheduled instants after from (strictly),
// now and one after another, without waiting for them: each instant
// computed from the task's registered schedule in its zone (Schedule.Next,
// as a scheduler computes them), each run as Run runs a scheduled fire
// (attempt 1, no job id) with that instant as its FireTime. A zero from is
// now. It returns one crontab.Result per fire, in order; fewer than n when
// the schedule has no instant left (an at: schedule).
//
// As a scheduler does, each fire calls a value of its own: a shallow copy
// of task (a pointer's target is copied), so a handler that keeps state in
// its value does not see the last fire's; give task the dependencies a
// scheduler would be given (crontab.Provide). FireNext fails tb when task
// is nil, its type is not registered or has no schedule (a job type), or n
// is negative.
func (r *Runner) FireNext(ctx context.Context, tb testing.TB, task crontab.TaskInterface, n int, from time.Time) []crontab.Result {
	tb.Helper()
	entry := r.entry(tb, "FireNext", task)
	sched := entry.Schedule()
	if sched == nil {
		tb.Fatalf("crontabtest: FireNext: %q is a job type: it has no schedule to fire (use Run)", entry.Config().Name)
	}
	if n < 0 {
		tb.Fatalf("crontabtest: FireNext: n is %d: want 0 or more", n)
	}
	if from.IsZero() {
		from = time.Now()
	}
	var out []crontab.Result
	at := from
	for range n {
		if at = sched.Next(at); at.IsZero() {
			break
		}
		res := r.run(ctx, runpath.Run{Entry: entry, Task: shallowCopy(task), Fire: at, Attempt: 1})
		out = append(out, crontab.Result{
			RunInfo: crontab.RunInfo{Task: entry.Config().Name, Fire: res.Fire, Due: res.Fire, Attempt: 1, Process: res.Process},
			Start:   res.Start, Cost: res.Cost, OK: res.Err == nil, Err: res.Err,
		})
	}
	return out
}

// entry returns task's registered entry, failing tb when there is none.
func (r *Runner) entry(tb testing.TB, caller string, task crontab.TaskInterface) *registry.Entry {
	tb.Helper()
	if task == nil || reflect.ValueOf(task).Kind() == reflect.Pointer && reflect.ValueOf(task).IsNil() {
		tb.Fatalf("crontabtest: %s: the task is nil", caller)
	}
	name, ok := r.reg.NameOf(task)
	if !ok {
		tb.Fatalf("crontabtest: %s: %T is not registered (a scheduler runs only registered types; annotate it and run go generate)", caller, task)
	}
	return r.reg.Entry(name)
}

// shallowCopy returns a copy of task's value: of the pointed-to value for
// a pointer.
func shallowCopy(task crontab.TaskInterface) crontab.TaskInterface {
	v := reflect.ValueOf(task)
	if v.Kind() != reflect.Pointer {
		return task // an interface holds its own copy of a value
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(crontab.TaskInterface)
}

// newJobID returns a random job id of the form Client.Enqueue gives.
func newJobID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
