// Package tasks holds the tasks and the job type that the chaos soak's
// worker processes run, and the journal in which every handler records its
// start and its end for the checker (internal/chaos).
package tasks

import (
	"context"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

// Journal, set by the worker's main before the scheduler runs, gets a line
// at every handler start and end. Nil records nothing.
var Journal *Writer

// Tick fires every second and returns at once.
//
//crontab:name="tick" expression="every:1s" timeout=20s
type Tick struct{}

// Handle records the run.
func (Tick) Handle(ctx context.Context) error {
	defer begin(ctx)()
	return nil
}

// Short fires every second and runs for 300 ms.
//
//crontab:name="short" expression="every:1s" timeout=20s
type Short struct{}

// Handle records the run and lasts 300 ms.
func (Short) Handle(ctx context.Context) error {
	defer begin(ctx)()
	return sleep(ctx, 300*time.Millisecond)
}

// Slow fires every second and runs for 1.3 s, so it is still running at
// every other instant: those fires are skipped and recorded, and a run in
// a stopped or killed process tests the lock.
//
//crontab:name="slow" expression="every:1s" timeout=20s
type Slow struct{}

// Handle records the run and lasts 1.3 s.
func (Slow) Handle(ctx context.Context) error {
	defer begin(ctx)()
	return sleep(ctx, 1300*time.Millisecond)
}

// Par fires every second, runs for 1.5 s and is concurrent: its runs
// overlap by design.
//
//crontab:name="par" expression="every:1s" timeout=20s concurrent=true
type Par struct{}

// Handle records the run and lasts 1.5 s.
func (Par) Handle(ctx context.Context) error {
	defer begin(ctx)()
	return sleep(ctx, 1500*time.Millisecond)
}

// Job is the soak's delayed job: the producer enqueues it with an id of its
// own and a due time, and cancels some.
//
//crontab:name="job" timeout=20s
type Job struct {
	// N numbers the job (the producer's count).
	N int `json:"n"`
	// Sleep is how long the run lasts.
	Sleep time.Duration `json:"sleep,omitempty"`
}

// Handle records the run and lasts j.Sleep.
func (j Job) Handle(ctx context.Context) error {
	defer begin(ctx)()
	return sleep(ctx, j.Sleep)
}

// begin writes the start of the run in ctx to the journal and returns the
// function that writes its end.
func begin(ctx context.Context) (end func()) {
	run, _ := crontab.Run(ctx)
	Journal.write(Start, run)
	return func() { Journal.write(End, run) }
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
