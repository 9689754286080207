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

// FireTime returns the scheduled instant of the run ctx belongs to, or the
// zero Time outside a handler. Together with TaskName it makes an
// idempotency key.
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
