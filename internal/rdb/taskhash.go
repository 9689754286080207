package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// The fields of a task hash that the engine reads. The seed design's fields
// (class, name, expression, next_run, last_run, status, interval,
// created_at) are all present in a declared task's hash; the rest are this
// engine's. A run-time task's hash (SetTask, SetTasks: luaTaskWrite) holds
// only what is its own, RunTimeTaskFields, and stores a field only when it
// differs from the default (absent: status active, tz UTC, timeout the
// type's, not concurrent, misfire once, no params, no cap, no jitter;
// last_run and the counters 0 before the first fire). Its name is its key,
// its class its type's (the classes hash, Keys.Classes), its interval is
// computed from the expression when read (Inspector), and it has no
// source field: absent source is a run-time task ("dynamic"; a declared
// task's hash always has source static). A hash an older release wrote
// (status and source always) is read the same.
const (
	FieldType       = "type"       // the registered type name that runs it
	FieldExpression = "expression" // the schedule expression
	FieldTZ         = "tz"         // the zone the schedule is computed in; absent: UTC
	FieldNextRun    = "next_run"   // the next scheduled instant, unix ms; 0 means none
	FieldStatus     = "status"     // active, paused or disabled; absent: active (a run-time task)
	FieldMisfire    = "misfire"    // once or skip; absent: once
	FieldParams     = "params"     // JSON parameters of a run-time task; absent: none
	FieldTimeout    = "timeout"    // ms; absent: the type's (the claiming process's registry)
	FieldRetries    = "retries"    // one-off re-runs of a failed or abandoned fire
)

// The flow-control fields of a task hash, each present only when set (a
// task without them has a hash as before they existed): decimal integers,
// written by Register and SetTask and removed when the declaration drops
// them. Nothing is enforced by writing them; the claims read them.
const (
	FieldMaxRunning = "max_running" // cap of runs in progress at once; absent: no cap
	FieldRateN      = "rate_n"      // starts allowed per window; absent: no rate
	FieldRatePerMS  = "rate_per_ms" // the rate's sliding window, ms; with rate_n
	FieldPriority   = "priority"    // absent: 0
	// FieldJitter is the bound of the task's stable offset, ms (TaskSpec.Jitter,
	// TaskConfig.Jitter): its instants are the expression's plus
	// schedule.JitterOffset(key, jitter). Absent: 0, no offset.
	FieldJitter = "jitter"
)

// RunTimeTaskFields are the fields a run-time task's hash may hold, in
// the order an operator reads them: the first four always, the others only
// when not the default, and the result fields from the first fire on.
// Source is not one: a hash without it is a run-time task's (one an older
// release wrote may still have source dynamic, and status active).
var RunTimeTaskFields = []string{FieldType, FieldExpression, FieldNextRun, "created_at", FieldStatus,
	FieldTZ, FieldTimeout, "concurrent", FieldMisfire, FieldParams, FieldMaxRunning, FieldRateN, FieldRatePerMS,
	FieldPriority, FieldJitter, "last_run", "last_result", "last_error", "last_duration", "runs", "failures", "skips"}

// TaskState is what the dispatcher reads of a due task.
type TaskState struct {
	Member     string
	Type       string
	Expression string
	TZ         string
	NextRun    int64
	Status     registry.Status
	Misfire    registry.Misfire
	Params     string
	// MaxRunning, Rate and Priority are the task's flow-control fields
	// (FieldMaxRunning, FieldRateN and FieldRatePerMS, FieldPriority); zero
	// when absent.
	MaxRunning int
	Rate       registry.Rate
	Priority   int
	// Jitter is the task's FieldJitter: its instants are its expression's
	// plus schedule.JitterOffset(Member, Jitter). Zero when absent.
	Jitter time.Duration
	// Timeout is the task's FieldTimeout; zero when absent (a run-time
	// task of its type's timeout).
	Timeout time.Duration
}

// TaskStateFields lists the fields ParseTaskState expects, in order.
var TaskStateFields = []string{FieldType, FieldExpression, FieldTZ, FieldNextRun, FieldStatus, FieldMisfire, FieldParams,
	FieldMaxRunning, FieldRateN, FieldRatePerMS, FieldPriority, FieldJitter, FieldTimeout}

// taskStateArgs is TaskStateFields as command arguments, boxed once.
var taskStateArgs = func() []any {
	a := make([]any, len(TaskStateFields))
	for i, f := range TaskStateFields {
		a[i] = f
	}
	return a
}()

// ParseTaskState decodes an HMGET of TaskStateFields. It fails on a hash
// that is missing or corrupt, naming the field.
func ParseTaskState(member string, vals []any) (TaskState, error) {
	if len(vals) != len(TaskStateFields) {
		return TaskState{}, fmt.Errorf("task %q: got %d fields, want %d", member, len(vals), len(TaskStateFields))
	}
	str := func(i int) (string, bool) {
		s, ok := vals[i].(string)
		return s, ok
	}
	st := TaskState{Member: member}
	var ok bool
	if st.Type, ok = str(0); !ok {
		if AllNil(vals) {
			return st, fmt.Errorf("task %q: no task hash", member)
		}
		return st, fmt.Errorf("task %q: field %s is missing", member, FieldType)
	}
	st.Expression, _ = str(1)
	if st.TZ, _ = str(2); st.TZ == "" {
		st.TZ = "UTC" // a run-time task in UTC stores no zone
	}
	next, _ := str(3)
	n, err := strconv.ParseInt(next, 10, 64)
	if err != nil || n < 0 {
		return st, fmt.Errorf("task %q: field %s: bad value %q", member, FieldNextRun, next)
	}
	st.NextRun = n
	status, _ := str(4)
	if st.Status = registry.Status(status); status == "" {
		st.Status = registry.StatusActive // a run-time task stores no status when active
	}
	misfire, _ := str(5)
	st.Misfire = registry.Misfire(misfire)
	if !st.Misfire.Valid() {
		st.Misfire = registry.MisfireOnce
	}
	st.Params, _ = str(6)
	flow, err := parseFlow(member, vals[7:11])
	if err != nil {
		return st, err
	}
	st.MaxRunning, st.Rate, st.Priority = flow.MaxRunning, flow.Rate, flow.Priority
	if st.Jitter, err = ParseJitter(member, vals[11]); err != nil {
		return st, err
	}
	if t, _ := vals[12].(string); t != "" {
		ms, err := strconv.ParseInt(t, 10, 64)
		if err != nil || ms < 0 {
			return st, fmt.Errorf("task %q: field %s: bad value %q: want a whole number of ms", member, FieldTimeout, t)
		}
		st.Timeout = time.Duration(ms) * time.Millisecond
	}
	return st, nil
}

// ParseJitter decodes a task hash's FieldJitter value (nil or "" meaning
// absent: 0). It fails naming the field on a value that is not a whole
// number of ms from 0 to schedule.MaxJitter.
func ParseJitter(member string, v any) (time.Duration, error) {
	s, _ := v.(string)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > schedule.MaxJitter.Milliseconds() {
		return 0, fmt.Errorf("task %q: field %s: bad value %q: want 0 to %d (ms)", member, FieldJitter, s, schedule.MaxJitter.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Flow is a task's flow-control fields as its hash stores them.
type Flow struct {
	MaxRunning int
	Rate       registry.Rate
	Priority   int
}

// flowArgs returns the values of FieldMaxRunning, FieldRateN,
// FieldRatePerMS and FieldPriority for a script, "0" for each that is
// not set (the scripts delete those fields).
func flowArgs(maxRunning int, rate registry.Rate, priority int) []any {
	return []any{maxRunning, rate.N, rate.Per.Milliseconds(), priority}
}

// parseFlow decodes the values of FieldMaxRunning, FieldRateN,
// FieldRatePerMS and FieldPriority, nil meaning absent. It fails naming
// the field whose value is not an integer in its range.
func parseFlow(member string, vals []any) (Flow, error) {
	var n [4]int
	names := [4]string{FieldMaxRunning, FieldRateN, FieldRatePerMS, FieldPriority}
	for i, v := range vals {
		if v == nil {
			continue
		}
		s, _ := v.(string)
		x, err := strconv.Atoi(s)
		if err != nil {
			return Flow{}, fmt.Errorf("task %q: field %s: bad value %q", member, names[i], s)
		}
		n[i] = x
	}
	f := Flow{MaxRunning: n[0], Rate: registry.Rate{N: n[1], Per: time.Duration(n[2]) * time.Millisecond}, Priority: n[3]}
	switch {
	case f.MaxRunning < 0 || f.MaxRunning > registry.MaxMaxRunning:
		return Flow{}, fmt.Errorf("task %q: field %s: bad value %d: want 0 to %d", member, FieldMaxRunning, f.MaxRunning, registry.MaxMaxRunning)
	case f.Priority < registry.MinPriority || f.Priority > registry.MaxPriority:
		return Flow{}, fmt.Errorf("task %q: field %s: bad value %d: want %d to %d", member, FieldPriority, f.Priority, registry.MinPriority, registry.MaxPriority)
	}
	if err := f.Rate.Validate(); err != nil {
		return Flow{}, fmt.Errorf("task %q: fields %s and %s: %w", member, FieldRateN, FieldRatePerMS, err)
	}
	return f, nil
}

// AllNil reports whether every value of an HMGET reply is nil: none of
// the fields exists (for a hash, the hash itself may not).
func AllNil(vals []any) bool {
	for _, v := range vals {
		if v != nil {
			return false
		}
	}
	return true
}

// TaskStateRead is one task's state as ReadTaskStates found it: its state;
// or Missing, there is no task hash (a queue member without one); or Err,
// the key is not a hash (a reply error) or the hash is corrupt.
type TaskStateRead struct {
	State   TaskState
	Missing bool
	Err     error
}

// ReadTaskStates reads the states of tasks in one pipeline. The error is
// a failure to reach Redis; bad data is reported per task.
func (r *RDB) ReadTaskStates(ctx context.Context, tasks []string) ([]TaskStateRead, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.Cmd {
		// One backing array for every command's arguments, the field
		// names boxed once (taskStateArgs): pipe.HMGet boxed 13 names per
		// task, an eighth of a fire's allocations.
		w := 2 + len(taskStateArgs)
		args := make([]any, w*len(tasks))
		cmds := make([]*redis.Cmd, len(tasks))
		for i, m := range tasks {
			a := args[i*w : (i+1)*w : (i+1)*w]
			a[0], a[1] = "hmget", r.k.Task(m)
			copy(a[2:], taskStateArgs)
			cmds[i] = pipe.Do(ctx, a...)
		}
		return cmds
	})
	if err != nil && !errors.Is(err, redis.Nil) && !IsReplyError(err) {
		return nil, err
	}
	out := make([]TaskStateRead, len(tasks))
	for i, m := range tasks {
		vals, err := cmds[i].Slice()
		if err != nil && !errors.Is(err, redis.Nil) {
			out[i].Err = err // not a hash: WRONGTYPE
			continue
		}
		if AllNil(vals) {
			out[i] = TaskStateRead{State: TaskState{Member: m}, Missing: true}
			continue
		}
		out[i].State, out[i].Err = ParseTaskState(m, vals)
	}
	return out, nil
}
