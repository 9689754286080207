package runtime

import (
	"context"
	"time"
)

type runKey struct{}

// runContext is a ctx carrying a run's RunInfo: one allocation where
// context.WithValue takes two (the ctx and the boxed RunInfo), for every
// handler's ctx and every report's.
type runContext struct {
	context.Context
	info RunInfo
}

// Value returns the run's RunInfo (a *RunInfo, see Run) for runKey, and
// asks the parent for any other key.
func (c *runContext) Value(key any) any {
	if _, ok := key.(runKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// withRun returns ctx carrying run for FireTime, TaskName, JobID and Attempt.
func withRun(ctx context.Context, run RunInfo) context.Context {
	return &runContext{Context: ctx, info: run}
}

// Run returns the RunInfo of the run ctx belongs to, and false outside a
// handler.
func Run(ctx context.Context) (RunInfo, bool) {
	if run, ok := ctx.Value(runKey{}).(*RunInfo); ok {
		return *run, true
	}
	return RunInfo{}, false
}

// FireTime returns the scheduled instant of the run ctx belongs to
// (RunInfo.Fire), or the zero Time outside a handler. It is the same for
// every attempt of the run (a job's retries and redeliveries, the retry of
// a scheduled fire), so together with TaskName it makes an idempotency
// key. When the attempt became due is RunInfo.Due (see Run).
func FireTime(ctx context.Context) time.Time {
	run, _ := Run(ctx)
	return run.Fire
}

// TaskName returns the name of the task ctx's run belongs to, or "".
func TaskName(ctx context.Context) string {
	run, _ := Run(ctx)
	return run.Task
}

// Attempt returns the attempt number (from 1) of the run ctx belongs to, or 0
// outside a handler.
func Attempt(ctx context.Context) int {
	run, _ := Run(ctx)
	return run.Attempt
}
