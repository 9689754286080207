package runtime

import (
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// This file keeps, as aliases and thin wrappers, the names that live in
// Redis-free packages so that tools (crontabgen) need not link the engine:
// schedule expressions in runtime/schedule, task configs and the registry
// in runtime/registry. Code written against crontab.X keeps compiling.

// Schedule tells when a task fires; it is schedule.Schedule. Next returns
// the first fire strictly after t, or the zero Time when there is none.
type Schedule = schedule.Schedule

// Parse parses a schedule expression; times are computed in loc (nil means
// UTC). It is schedule.Parse, whose package documentation describes the
// expression grammar.
func Parse(expression string, loc *time.Location) (Schedule, error) {
	return schedule.Parse(expression, loc)
}

// Describe explains s in English words, as stored in a task's interval
// field, such as "every 30s", "at 03:00 every day (Europe/London)" or
// "at 09:00 on the third Friday of the month", and "" for nil. It is
// schedule.Describe.
func Describe(s Schedule) string { return schedule.Describe(s) }

// IsOnce reports whether s fires only once (an at: schedule); the scheduler
// removes such a task after it ran. It is false for nil and for schedules
// not returned by Parse. It is schedule.IsOnce.
func IsOnce(s Schedule) bool { return schedule.IsOnce(s) }

// TaskInterface is implemented by every task and job type; it is
// registry.TaskInterface. Handle runs one fire of the task; ctx carries the
// task's timeout as its deadline and the fire's details (see FireTime,
// TaskName and Attempt). A returned error or a panic marks the run failed.
type TaskInterface = registry.TaskInterface

// TaskConfig describes one task or job type to a Registry; it is
// registry.TaskConfig, whose fields document their defaults. crontabgen
// writes one per annotated type.
type TaskConfig = registry.TaskConfig

// Registry holds the task and job types a process knows; it is
// registry.Registry. The zero Registry is empty and ready to use.
type Registry = registry.Registry

// NewRegistry returns an empty registry; it is registry.NewRegistry.
func NewRegistry() *Registry { return registry.NewRegistry() }

// Status is the state of a task, kept in the `status` field of its hash; it
// is registry.Status. Empty means StatusActive.
type Status = registry.Status

// The task statuses (see registry.StatusActive and the others).
const (
	// StatusActive tasks fire on their schedule. It is the default.
	StatusActive = registry.StatusActive
	// StatusPaused tasks keep their place in the queue but skip every fire.
	StatusPaused = registry.StatusPaused
	// StatusDisabled tasks are taken out of the queue.
	StatusDisabled = registry.StatusDisabled
)

// Misfire is what the scheduler does with instants that passed while no
// process ran; it is registry.Misfire. Empty means MisfireOnce.
type Misfire = registry.Misfire

// The misfire policies (see registry.MisfireOnce and MisfireSkip).
const (
	// MisfireOnce fires one catch-up run for all missed instants. It is the default.
	MisfireOnce = registry.MisfireOnce
	// MisfireSkip drops missed instants and continues with the next future one.
	MisfireSkip = registry.MisfireSkip
)

// DefaultTimeout is the timeout of a task whose TaskConfig.Timeout is zero:
// its handler's deadline and the TTL of its lock (300s).
const DefaultTimeout = registry.DefaultTimeout

// MaxRetryLimit is the largest retry count accepted (100), for
// TaskConfig.Retries and for a job's MaxRetries.
const MaxRetryLimit = registry.MaxRetryLimit

// Rate is a start rate of a task or job type: at most N starts in any
// window of length Per (TaskConfig.Rate, the directive key rate).
type Rate = registry.Rate

// ParseRate reads a rate "N/D", such as "100/s" or "5/1m" (see
// registry.ParseRate).
func ParseRate(s string) (Rate, error) { return registry.ParseRate(s) }

// The ranges of TaskConfig's flow-control fields (max_running, rate and
// priority), from package registry.
const (
	MaxMaxRunning            = registry.MaxMaxRunning
	MaxRateCount             = registry.MaxRateCount
	MinRatePer, MaxRatePer   = registry.MinRatePer, registry.MaxRatePer
	MinPriority, MaxPriority = registry.MinPriority, registry.MaxPriority
)
