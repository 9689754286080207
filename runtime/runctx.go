package runtime

import (
	"context"
	"time"
)

type runKey struct{}

// withRun returns ctx carrying run for FireTime, TaskName, JobID and Attempt.
func withRun(ctx context.Context, run RunInfo) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// Run returns the RunInfo of the run ctx belongs to, and false outside a
// handler.
func Run(ctx context.Context) (RunInfo, bool) {
	run, ok := ctx.Value(runKey{}).(RunInfo)
	return run, ok
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
