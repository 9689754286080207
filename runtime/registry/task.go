package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// TaskInterface is implemented by every task and job type. Handle runs one
// fire of the task; ctx carries the task's timeout as its deadline and the
// fire's details (see FireTime, TaskName and Attempt in package runtime). A
// returned error or a panic marks the run failed.
type TaskInterface interface {
	Handle(ctx context.Context) error
}

// Status is the state of a task, kept in the `status` field of its hash. An
// operator may change it with a plain HSET; the scheduler honours it at once.
type Status string

// The task statuses.
const (
	// StatusActive tasks fire on their schedule. It is the default.
	StatusActive Status = "active"
	// StatusPaused tasks keep their place in the queue but skip every fire;
	// back to active, they resume from the next future instant.
	StatusPaused Status = "paused"
	// StatusDisabled tasks are taken out of the queue.
	StatusDisabled Status = "disabled"
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusActive, StatusPaused, StatusDisabled:
		return true
	}
	return false
}

// Misfire is what the scheduler does with instants that passed while no
// process ran (after downtime).
type Misfire string

// The misfire policies.
const (
	// MisfireOnce fires one catch-up run for all missed instants, then
	// continues with the next future instant. It is the default.
	MisfireOnce Misfire = "once"
	// MisfireSkip drops missed instants and continues with the next future one.
	MisfireSkip Misfire = "skip"
)

// Valid reports whether m is one of the known policies.
func (m Misfire) Valid() bool { return m == MisfireOnce || m == MisfireSkip }

// DefaultTimeout is the timeout of a task whose TaskConfig.Timeout is zero:
// its handler's deadline and the TTL of its lock.
const DefaultTimeout = 300 * time.Second

// MaxRetryLimit is the largest retry count accepted.
const MaxRetryLimit = 100

// TaskConfig describes one task or job type to a Registry. crontabgen writes
// one per annotated type; run-time tasks are built from one too.
type TaskConfig struct {
	// Name identifies the task; it is unique in a registry and names the
	// task's Redis keys. Required.
	Name string
	// Class is the Go type path of the task, such as
	// "example.com/app/tasks.CleanLogs". Informational: stored in the task
	// hash for operators. Empty means the registry fills it from New.
	Class string
	// Expression is the schedule (see schedule.Parse). Empty makes a job type: it
	// never fires on its own and runs only when enqueued.
	Expression string
	// Status is the initial status written when the task is first
	// registered; an operator's later change survives redeploys. Empty means
	// StatusActive.
	Status Status
	// Timeout bounds one run: the handler's ctx deadline and the lock TTL.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// Concurrent lets fires overlap. False (the default) skips a fire, and
	// records the skip, while the previous run of the task still runs.
	Concurrent bool
	// TZ is the IANA zone the schedule is computed in. Empty means UTC.
	TZ string
	// Misfire is the policy for instants missed during downtime. Empty
	// means MisfireOnce.
	Misfire Misfire
	// Retries is how many extra attempts a failed job gets, with
	// exponential backoff. Zero means none.
	Retries int
	// MaxRunning caps the runs of the type in progress at once across every
	// process sharing the namespace: jobs over the cap wait in the queue,
	// fires over it are skipped and recorded, as for a held lock. Zero
	// means no cap; at most MaxMaxRunning.
	MaxRunning int
	// Rate caps the starts of a job type across every process: at most
	// Rate.N in any window of length Rate.Per (a sliding window, on Redis
	// server time); jobs over it wait in the queue. The zero Rate means no
	// limit. See ParseRate. A scheduled task (an Expression) with a Rate is
	// an error: its fires are not rate-limited yet.
	Rate Rate
	// Priority orders the due jobs of a job type against other types'
	// when they back up: an integer from MinPriority to MaxPriority, 0 by
	// default, higher first, but weighted rather than strict, so a lower
	// priority is never starved. While jobs of several priorities are
	// due, each process claims them by smooth weighted round robin, a
	// priority's weight being its value minus the lowest due priority, plus
	// one: of every W jobs claimed (W the sum of the weights of the
	// priorities with due jobs), each priority gets its weight. Priorities
	// 0 and 2 take 1 and 3 jobs of every 4; 0 and 10, 1 and 11 of every
	// 12. Within a priority, the oldest due first. A scheduled task (an
	// Expression) with a Priority is an error: its fires run at their
	// instant; only jobs queue.
	Priority int
	// Jitter spreads the fires of a scheduled task: each instant of its
	// Expression is moved later by a stable offset in [0, Jitter) derived
	// from the task's name (schedule.JitterOffset: FNV-64a of the name
	// modulo Jitter in ms), the same in every process and release, so
	// tasks with one expression do not all fire at the same instant. Zero
	// means none; at most schedule.MaxJitter (24h), in whole milliseconds.
	// A job type (no Expression) with a Jitter is an error.
	Jitter time.Duration
	// New returns a new zero value of the task's type, as a pointer (so a
	// job's JSON payload can be decoded into it). Required.
	New func() TaskInterface
}

// withDefaults returns c with every zero field given its documented default.
func (c TaskConfig) withDefaults() TaskConfig {
	if c.Status == "" {
		c.Status = StatusActive
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.TZ == "" {
		c.TZ = "UTC"
	}
	if c.Misfire == "" {
		c.Misfire = MisfireOnce
	}
	return c
}

// validate checks a config that has its defaults applied.
func (c TaskConfig) validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("task config: empty name")
	case c.New == nil:
		return fmt.Errorf("task %q: New is nil", c.Name)
	case !c.Status.Valid():
		return fmt.Errorf("task %q: status %q: want active, paused or disabled", c.Name, c.Status)
	case c.Timeout < 0:
		return fmt.Errorf("task %q: timeout %v: must be positive", c.Name, c.Timeout)
	case !c.Misfire.Valid():
		return fmt.Errorf("task %q: misfire %q: want once or skip", c.Name, c.Misfire)
	case c.Retries < 0 || c.Retries > MaxRetryLimit:
		return fmt.Errorf("task %q: retries %d: want 0 to %d", c.Name, c.Retries, MaxRetryLimit)
	case c.MaxRunning < 0 || c.MaxRunning > MaxMaxRunning:
		return fmt.Errorf("task %q: max_running %d: want 0 (no cap) to %d", c.Name, c.MaxRunning, MaxMaxRunning)
	case c.Priority < MinPriority || c.Priority > MaxPriority:
		return fmt.Errorf("task %q: priority %d: want %d to %d", c.Name, c.Priority, MinPriority, MaxPriority)
	}
	if err := c.Rate.Validate(); err != nil {
		return fmt.Errorf("task %q: %w", c.Name, err)
	}
	if err := schedule.ValidateJitter(c.Jitter); err != nil {
		return fmt.Errorf("task %q: %w", c.Name, err)
	}
	switch {
	case c.Jitter != 0 && c.Expression == "":
		return fmt.Errorf("task %q: jitter %v: only scheduled tasks (an Expression) have a jitter; a job runs when it is due", c.Name, c.Jitter)
	case !c.Rate.IsZero() && c.Expression != "":
		return fmt.Errorf("task %q: rate %v: only job types (no Expression) are rate-limited; the fires of a scheduled task are not yet", c.Name, c.Rate)
	case c.Priority != 0 && c.Expression != "":
		return fmt.Errorf("task %q: priority %d: only job types (no Expression) have a priority; the fires of a scheduled task run at their instant", c.Name, c.Priority)
	}
	return nil
}
