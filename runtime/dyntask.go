package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// sourceDynamic marks tasks added at run time with Client.SetTask; they
// are never pruned, only removed with Client.RemoveTask.
const sourceDynamic = "dynamic"

// TaskSpec is a recurring task configured at run time: a registered type,
// its parameters, and a schedule. Every scheduler of the namespace sees it
// within a second; it survives restarts.
type TaskSpec struct {
	// Key names the task (its hash is task:<Key>). Required; it must not be
	// the name of a task declared in code.
	Key string
	// Type is the registered name of the task type that runs it. Required.
	Type string
	// Params is decoded (JSON) into a new value of the type before each
	// run. Nil means the zero value.
	Params any
	// Expression is the schedule (see Parse). Required.
	Expression string
	// TZ is the zone of the schedule. Empty means UTC.
	TZ string
	// Status is written when the task is created; an update keeps the
	// current status unless Status is set. Empty means active on create.
	Status Status
	// Timeout bounds each run. Zero means the type's timeout.
	Timeout time.Duration
	// Concurrent lets runs overlap. False skips a fire while a run is going.
	Concurrent bool
	// Misfire is the policy after downtime. Empty means once.
	Misfire Misfire
	// MaxRunning caps the runs of the task in progress at once across
	// every process (the directive key max_running): fires over it are
	// skipped and recorded. Zero means no cap; at most MaxMaxRunning.
	// Above 1 it needs Concurrent, as a task that is not concurrent runs
	// at most once at a time.
	MaxRunning int
	// Rate is reserved for capping the task's starts (the directive key
	// rate, which limits job types). The fires of a scheduled task are not
	// rate-limited yet: a non-zero Rate is an error from SetTask.
	Rate Rate
	// Priority is the directive key priority's field, which orders a job
	// type's due jobs (TaskConfig.Priority). A run-time task's fires run at
	// their instant, not in a queue: a non-zero value is an error from
	// SetTask.
	Priority int
}

// SetTask adds or updates a run-time task. A changed expression or zone
// reschedules it from now; otherwise its schedule is kept.
func (c *Client) SetTask(ctx context.Context, spec TaskSpec) error {
	if c.err != nil {
		return c.err
	}

	reg := c.reg.Entry(spec.Type)
	switch {
	case spec.Key == "":
		return errors.New("crontab: set task: empty key")
	case reg == nil:
		return fmt.Errorf("crontab: set task %q: type %q is not registered", spec.Key, spec.Type)
	case spec.Expression == "":
		return fmt.Errorf("crontab: set task %q: empty expression", spec.Key)
	case spec.Status != "" && !spec.Status.Valid():
		return fmt.Errorf("crontab: set task %q: status %q: want active, paused or disabled", spec.Key, spec.Status)
	case spec.Misfire != "" && !spec.Misfire.Valid():
		return fmt.Errorf("crontab: set task %q: misfire %q: want once or skip", spec.Key, spec.Misfire)
	case spec.MaxRunning < 0 || spec.MaxRunning > MaxMaxRunning:
		return fmt.Errorf("crontab: set task %q: max_running %d: want 0 (no cap) to %d", spec.Key, spec.MaxRunning, MaxMaxRunning)
	case spec.MaxRunning > 1 && !spec.Concurrent:
		return fmt.Errorf("crontab: set task %q: max_running %d needs Concurrent: a task that is not concurrent runs at most once at a time", spec.Key, spec.MaxRunning)
	case spec.Priority < MinPriority || spec.Priority > MaxPriority:
		return fmt.Errorf("crontab: set task %q: priority %d: want %d to %d", spec.Key, spec.Priority, MinPriority, MaxPriority)
	}
	switch {
	case !spec.Rate.IsZero():
		return fmt.Errorf("crontab: set task %q: rate %v: the fires of a scheduled task are not rate-limited yet; cap the task with MaxRunning", spec.Key, spec.Rate)
	case spec.Priority != 0:
		return fmt.Errorf("crontab: set task %q: priority %d: a task's fires run at their instant; priority orders queued jobs (TaskConfig.Priority of a job type)", spec.Key, spec.Priority)
	}
	if err := spec.Rate.Validate(); err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if spec.TZ == "" {
		spec.TZ = "UTC"
	}
	if spec.Misfire == "" {
		spec.Misfire = MisfireOnce
	}
	if spec.Timeout <= 0 {
		spec.Timeout = reg.Config().Timeout
	}
	loc, err := time.LoadLocation(spec.TZ)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: tz %q: %w", spec.Key, spec.TZ, err)
	}
	sched, err := schedule.Parse(spec.Expression, loc)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: expression %q: %w", spec.Key, spec.Expression, err)
	}
	params := []byte{}
	if spec.Params != nil {
		if params, err = json.Marshal(spec.Params); err != nil {
			return fmt.Errorf("crontab: set task %q: encode params: %w", spec.Key, err)
		}
		if err := json.Unmarshal(params, reg.Config().New()); err != nil {
			return fmt.Errorf("crontab: set task %q: params do not decode into %s: %w", spec.Key, reg.Config().Class, err)
		}
	}
	now, err := c.db.Time(ctx)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	res, err := c.db.SetTask(ctx, ms(now), rdb.TaskDecl{Key: spec.Key, Class: reg.Config().Class, Type: spec.Type,
		Expression: spec.Expression, TZ: spec.TZ, Interval: schedule.Describe(sched), Status: string(spec.Status),
		NextMS: ms(sched.Next(now)), Timeout: spec.Timeout, Concurrent: spec.Concurrent, Misfire: string(spec.Misfire),
		Params: string(params), MaxRunning: spec.MaxRunning, Rate: spec.Rate, Priority: spec.Priority})
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if res == rdb.TaskDeclaredErr {
		return fmt.Errorf("crontab: set task %q: a task declared in code has that name", spec.Key)
	}
	return nil
}

// RemoveTask removes a run-time task. It returns an error wrapping
// ErrNotFound when there is none; tasks declared in code cannot be removed
// (disable them instead).
func (c *Client) RemoveTask(ctx context.Context, key string) error {
	if c.err != nil {
		return c.err
	}

	n, err := c.db.RemoveTask(ctx, key)
	switch {
	case err != nil:
		return fmt.Errorf("crontab: remove task %q: %w", key, err)
	case n < 0:
		return fmt.Errorf("crontab: remove task %q: it is declared in code; disable it instead", key)
	case n == 0:
		return fmt.Errorf("crontab: remove task %q: %w", key, ErrNotFound)
	}
	return nil
}
