package runtime

import (
	"context"
	"time"
)

// Outcome is how a run ended.
type Outcome string

// The run outcomes recorded in history.
const (
	// OutcomeOK is a run whose handler returned nil.
	OutcomeOK Outcome = "ok"
	// OutcomeFailed is a run whose handler returned an error, panicked or
	// overran its timeout.
	OutcomeFailed Outcome = "failed"
	// OutcomeSkipped is a fire that did not run: the task was paused, or a
	// non-concurrent task was still running, or the misfire policy skipped it.
	OutcomeSkipped Outcome = "skipped"
	// OutcomeAbandoned is a run whose process died before it finished.
	OutcomeAbandoned Outcome = "abandoned"
)

// RunInfo describes one run to hooks and listeners.
type RunInfo struct {
	// Task is the task's name.
	Task string
	// JobID is the job's id for an enqueued job, empty for a scheduled fire.
	JobID string
	// Fire is the scheduled instant: for a scheduled fire its instant; for
	// an enqueued job when it was first due (its enqueue's due time, kept
	// across releases, retries and redeliveries, and a retry from the dead
	// letters); for the job that retries a failed or abandoned scheduled
	// fire, that fire's instant. It is the same for every attempt of a run,
	// so with Task (and JobID) it makes an idempotency key (FireTime).
	Fire time.Time
	// Due is when this attempt became due: the queue score a job was
	// claimed at (a retry's backoff end, the moment a job was given back or
	// redelivered, the moment it was retried from the dead letters); equal
	// to Fire for a first attempt and for a scheduled fire. Due minus Fire
	// is how long retries and redeliveries delayed the run; the handler's
	// start minus Due is its lag.
	Due time.Time
	// Attempt counts from 1.
	Attempt int
	// Process is the id of the process that runs it.
	Process string
}

// Result is a completed run, as told to a Listener.
type Result struct {
	RunInfo
	// Start is when the handler started (Redis server time).
	Start time.Time
	// Cost is how long the handler ran.
	Cost time.Duration
	// OK is true when the handler returned nil.
	OK bool
	// Err is the handler's error, or the panic turned into one; nil when OK.
	Err error
}

// Hooks are called around every run. A nil field is not called. Hooks must
// be quick, must not panic, and must be safe for concurrent use: the runs
// of one instant or one batch run at once, and so are reported. Scheduled fires and jobs go through one run
// path (run.go), so the timing is the same for both: BeforeExecute is called
// on the goroutine that runs the handler, just before it, with the
// handler's ctx (its deadline included). Executed and Failed, like the
// listeners, are called once the run's outcome is recorded in Redis (a
// fire's finish, a job's ack, both written in batches), on a goroutine that
// reports the runs of one written batch in order, with a ctx that carries
// the RunInfo but not the handler's deadline. Run returns after every
// finished run has been reported.
type Hooks struct {
	// BeforeExecute is called just before the handler starts.
	BeforeExecute func(ctx context.Context, run RunInfo)
	// Executed is called after a handler returned nil, with its duration.
	Executed func(ctx context.Context, run RunInfo, cost time.Duration)
	// Failed is called after a handler failed, with the error.
	Failed func(ctx context.Context, run RunInfo, err error)
	// Skipped is called, on the dispatch goroutine, for a scheduled fire
	// that did not run, with the reason.
	Skipped func(ctx context.Context, run RunInfo, reason SkipReason)
	// Abandoned is called once for a run whose process died before it
	// finished: run.Process is the dead process. The run is recorded with
	// OutcomeAbandoned and its lock released. It is called in the process
	// whose claim of the task's next instant found the lock held by a run
	// whose run lease expired (see WithRunLease), on a goroutine of its
	// own, or else in the process doing the namespace's housekeeping (the
	// master), once the dead process's heartbeat is a process TTL old.
	Abandoned func(ctx context.Context, run RunInfo)
	// Redelivered is called, in the master, for a job whose lease expired
	// (its process died or stalled) and that was put back in the queue to
	// be delivered again; process is the one that had claimed it.
	Redelivered func(ctx context.Context, jobID, process string)
	// Repaired is called, in the master, after its invariant sweep (or,
	// for RepairRunning, its reap of abandoned runs) repaired n > 0 broken
	// states of one kind (RepairJob, RepairClaim, RepairLease,
	// RepairRunning, RepairLock, RepairQueue, RepairDue, RepairIndex), each
	// already counted in Overview.Repaired.
	Repaired func(ctx context.Context, kind string, n int)
}

// SkipReason says why a scheduled fire did not run.
type SkipReason string

// The reasons a fire is skipped.
const (
	// SkipRunning: the task is not concurrent and its previous run still runs.
	SkipRunning SkipReason = "running"
	// SkipPaused: the task is paused.
	SkipPaused SkipReason = "paused"
	// SkipMisfire: the instant was missed during downtime and the task's
	// misfire policy is skip.
	SkipMisfire SkipReason = "misfire"
	// SkipMaxRunning: the task's type has a max_running cap (TaskConfig.MaxRunning,
	// taken from the registry of the process that claims the fire) and that
	// many runs of its scheduled tasks are in progress across the cluster.
	SkipMaxRunning SkipReason = "max_running"
)

// Middleware wraps every handler call, for tracing, metrics or recovery of
// the user's own. It must call next (with ctx or a ctx derived from it) to
// run the handler, and return its error or one of its own.
type Middleware func(ctx context.Context, run RunInfo, next func(context.Context) error) error

// Listener is told of every completed run (the completion listener of the
// Java seed design): its cost, whether it was ok, and its error.
type Listener interface {
	OnComplete(ctx context.Context, r Result)
}

// ListenerFunc adapts a function to a Listener.
type ListenerFunc func(ctx context.Context, r Result)

// OnComplete calls f.
func (f ListenerFunc) OnComplete(ctx context.Context, r Result) { f(ctx, r) }
