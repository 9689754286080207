package runtime

// The operator's view of one task's schedule (crontab next) and run-time
// tasks set without the task code (crontab set).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// inspectorSchedules parses the (expression, zone) pairs of the task hashes
// an Inspector reads, once each.
var inspectorSchedules schedule.Cache

// TaskSchedule is a task's schedule as the schedulers compute it: the
// expression and zone in its hash, parsed, with its status and its next
// instant, read at one Redis time.
type TaskSchedule struct {
	// Name is the task's name.
	Name string
	// Expression and TZ are the hash's fields; Location is TZ loaded ("" is
	// UTC) and Schedule the expression parsed in it.
	Expression, TZ string
	Location       *time.Location
	Schedule       Schedule
	// Status is the task's status: a paused task skips its fires, a
	// disabled one is not queued and does not fire.
	Status Status
	// NextRun is the instant the hash's next_run holds (the next fire the
	// schedulers claim; it may be before Now while a fire is due), or the
	// zero Time when it holds none.
	NextRun time.Time
	// Queued is true when the task is in the queue.
	Queued bool
	// Now is Redis time when the task was read.
	Now time.Time
}

// TaskSchedule returns the schedule of the task name (declared in code or
// set at run time), parsed from its hash as the schedulers parse it. The
// error wraps ErrNotFound when there is no such task, and names the field
// when the hash's expression or zone does not parse.
func (in *Inspector) TaskSchedule(ctx context.Context, name string) (TaskSchedule, error) {
	if in.err != nil {
		return TaskSchedule{}, in.err
	}

	reads, _, err := in.db.ReadTasks(ctx, []string{name})
	if err != nil {
		return TaskSchedule{}, fmt.Errorf("crontab: schedule of %q: %w", name, err)
	}
	h := reads[0].Hash
	if len(h) == 0 {
		return TaskSchedule{}, fmt.Errorf("crontab: schedule of %q: %w", name, ErrNotFound)
	}
	now, err := in.db.Time(ctx)
	if err != nil {
		return TaskSchedule{}, fmt.Errorf("crontab: schedule of %q: %w", name, err)
	}
	// taskInfo fills in what a run-time task's hash does not store (its
	// zone UTC, its status active).
	ti := taskInfo(name, h)
	ts := TaskSchedule{Name: name, Expression: ti.Expression, TZ: ti.TZ, Status: ti.Status, Queued: reads[0].Queued, Now: now}
	if ts.Expression == "" {
		return TaskSchedule{}, fmt.Errorf("crontab: schedule of %q: the hash has no %s (a job type has no schedule)", name, fieldExpression)
	}
	if ts.Schedule, err = inspectorSchedules.Get(ts.Expression, ts.TZ); err != nil {
		return TaskSchedule{}, fmt.Errorf("crontab: schedule of %q: %w", name, err)
	}
	ts.Location, _ = time.LoadLocation(ts.TZ) // Get loaded it already
	if v, err := strconv.ParseInt(h[rdb.FieldNextRun], 10, 64); err == nil && v > 0 {
		ts.NextRun = fromMS(v).In(ts.Location)
	}
	return ts, nil
}

// classUnknown is the class of a run-time task set by Inspector.SetTask
// when Redis tells nothing of its type's Go type.
const classUnknown = "unknown: set without the task code"

// SetTask adds or updates a run-time task as Client.SetTask does, for an
// operator who has no task code: it validates spec with Client.SetTask
// itself (the same checks, errors and write), against a registry holding
// only spec.Type, and only when a live process runs that type (the
// task_names its heartbeat publishes); otherwise the error is SetTask's
// for a type that is not registered. Without the type's code, Params are
// checked to be JSON, not decoded into the type: a process that cannot
// decode them records each run failed. The hash's class is that of the
// task being updated, or of the task declared in code under the type's
// name; else it says it is unknown. A zero Timeout is the type's, as
// the processes that run it have it (nothing is stored).
func (in *Inspector) SetTask(ctx context.Context, spec TaskSpec) error {
	if in.err != nil {
		return in.err
	}

	reg := NewRegistry()
	if spec.Type != "" {
		known, cfg, err := in.liveType(ctx, spec.Key, spec.Type)
		if err != nil {
			return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
		}
		if known {
			if err := reg.Add(cfg); err != nil {
				return fmt.Errorf("crontab: set task %q: type %q: %w", spec.Key, spec.Type, err)
			}
		}
	}
	c := &Client{db: in.db, reg: reg, opts: in.opts}
	return c.SetTask(ctx, spec)
}

// liveType reports whether a live process runs the type typ, with a
// config standing for it: its class from the classes hash (written by the
// SetTasks of a client with the code), else from the hash of the task key
// (when it is of that type) or of the task declared in code as typ.
func (in *Inspector) liveType(ctx context.Context, key, typ string) (bool, TaskConfig, error) {
	_, live, err := in.liveProcesses(ctx)
	if err != nil {
		return false, TaskConfig{}, err
	}
	known := false
	for _, p := range live {
		if names, ok := rdb.ParseTaskNames(p.Hash[rdb.FieldTaskNames]); ok && slices.Contains(names, typ) {
			known = true
			break
		}
	}
	if !known {
		return false, TaskConfig{}, nil
	}
	cfg := TaskConfig{Name: typ, Class: classUnknown, New: func() TaskInterface { return new(remoteTask) }}
	classes, err := in.db.TypeClasses(ctx, []string{typ})
	if err != nil {
		return false, TaskConfig{}, err
	}
	if c := classes[typ]; c != "" && c != classUnknown {
		cfg.Class = c
		return true, cfg, nil
	}
	reads, _, err := in.db.ReadTasks(ctx, []string{key, typ})
	if err != nil {
		return false, TaskConfig{}, err
	}
	for i, r := range reads {
		h := r.Hash
		if h[fieldType] != typ || h["class"] == "" || h["class"] == classUnknown {
			continue
		}
		cfg.Class = h["class"]
		if i == 0 {
			break // the task being updated: its class is the one to keep
		}
	}
	return true, cfg, nil
}

// remoteTask stands for a type whose code the Inspector lacks: it takes
// any JSON as its params, and never runs.
type remoteTask struct{}

// UnmarshalJSON accepts any JSON value (json.Unmarshal has checked it).
func (*remoteTask) UnmarshalJSON([]byte) error { return nil }

// Handle fails: the Inspector's registry is only for SetTask's checks.
func (*remoteTask) Handle(context.Context) error {
	return errors.New("crontab: an Inspector does not run tasks")
}

var _ json.Unmarshaler = (*remoteTask)(nil)

// RemoveTask removes a run-time task as Client.RemoveTask does (it needs
// no task code): an error wrapping ErrNotFound when there is none; a task
// declared in code cannot be removed.
func (in *Inspector) RemoveTask(ctx context.Context, key string) error {
	if in.err != nil {
		return in.err
	}
	c := &Client{db: in.db, reg: NewRegistry(), opts: in.opts}
	return c.RemoveTask(ctx, key)
}
