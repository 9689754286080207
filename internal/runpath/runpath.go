// Package runpath lets package crontabtest run a handler through the
// scheduler's one run path (runtime/run.go: the handler's ctx with its
// RunInfo and deadline, the BeforeExecute hook, the middleware, panic
// recovery, the timeout's error text, then the Executed or Failed hook and
// the listeners) without a Scheduler, without Redis, and without package
// runtime exporting that path. Package runtime sets New in an init func;
// crontabtest is its only caller.
package runpath

import (
	"context"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
)

// Run is one handler call, as a scheduler starts it.
type Run struct {
	// Entry is the task's registered type: its name and Timeout.
	Entry *registry.Entry
	// Task is the handler value, called as it is.
	Task registry.TaskInterface
	// JobID, Fire and Attempt are the run's RunInfo fields. A zero Fire is
	// now (the runner's clock). Fire is truncated to the millisecond in the
	// Local zone, as an instant read from Redis is.
	JobID   string
	Fire    time.Time
	Attempt int
}

// Outcome is how one run ended.
type Outcome struct {
	// Fire is the instant the handler saw (Run.Fire normalized); Process
	// the runner's process id.
	Fire    time.Time
	Process string
	// Start is when the handler started; Cost how long it ran.
	Start time.Time
	Cost  time.Duration
	// Err is the handler's error, a panic turned into one, or the timeout.
	Err error
}

// Func runs one handler through the run path and returns its outcome.
type Func func(ctx context.Context, r Run) Outcome

// New returns a Func that runs handlers the way a Scheduler built with
// options (a []runtime.Option) does, or the error NewScheduler returns for
// those options. Package runtime sets it.
var New func(options any) (Func, error)
