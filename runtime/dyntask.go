package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
	// Timeout bounds each run. Zero means the type's timeout, as the
	// process that runs it has it (nothing is stored); negative is an
	// error.
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
	// Jitter spreads the task's fires (the directive key jitter): each
	// instant of Expression is moved later by a stable offset in [0,
	// Jitter) derived from Key (schedule.JitterOffset: FNV-64a of the key
	// modulo Jitter in ms), the same in every process. Zero means none; at
	// most MaxJitter (24h), in whole milliseconds. A changed Jitter
	// reschedules the task.
	Jitter time.Duration
}

// MaxJitter is the largest TaskSpec.Jitter and TaskConfig.Jitter (24h).
const MaxJitter = schedule.MaxJitter

// jittered is sched moved later by the stable offset of the task key for
// jitter (schedule.Offset of schedule.JitterOffset): the schedule a task
// fires on. The parse stays per expression and zone (schedule.Cache).
func jittered(sched schedule.Schedule, key string, jitter time.Duration) schedule.Schedule {
	return schedule.Offset(sched, schedule.JitterOffset(key, jitter))
}

// SetTask adds or updates a run-time task. A changed expression, zone or
// jitter reschedules it from now; otherwise its schedule is kept.
func (c *Client) SetTask(ctx context.Context, spec TaskSpec) error {
	if c.err != nil {
		return c.err
	}
	d, sched, err := c.taskDecl(spec)
	if err != nil {
		return err
	}
	now, err := c.db.Time(ctx)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	d.NextMS = ms(sched.Next(now))
	res, err := c.db.SetTask(ctx, ms(now), d)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if res == rdb.TaskDeclaredErr {
		return fmt.Errorf("crontab: set task %q: a task declared in code has that name", spec.Key)
	}
	return nil
}

// taskDecl validates spec and returns what SetTask writes (but NextMS)
// and the task's schedule (with its jitter's offset). Its error names the
// key and the field at fault.
func (c *Client) taskDecl(spec TaskSpec) (rdb.TaskDecl, schedule.Schedule, error) {
	reg := c.reg.Entry(spec.Type)
	switch {
	case spec.Key == "":
		return rdb.TaskDecl{}, nil, errors.New("crontab: set task: empty key")
	case reg == nil:
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: type %q is not registered", spec.Key, spec.Type)
	case spec.Expression == "":
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: empty expression", spec.Key)
	case spec.Status != "" && !spec.Status.Valid():
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: status %q: want active, paused or disabled", spec.Key, spec.Status)
	case spec.Misfire != "" && !spec.Misfire.Valid():
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: misfire %q: want once or skip", spec.Key, spec.Misfire)
	case spec.MaxRunning < 0 || spec.MaxRunning > MaxMaxRunning:
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: max_running %d: want 0 (no cap) to %d", spec.Key, spec.MaxRunning, MaxMaxRunning)
	case spec.MaxRunning > 1 && !spec.Concurrent:
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: max_running %d needs Concurrent: a task that is not concurrent runs at most once at a time", spec.Key, spec.MaxRunning)
	case spec.Priority < MinPriority || spec.Priority > MaxPriority:
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: priority %d: want %d to %d", spec.Key, spec.Priority, MinPriority, MaxPriority)
	}
	switch {
	case !spec.Rate.IsZero():
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: rate %v: the fires of a scheduled task are not rate-limited yet; cap the task with MaxRunning", spec.Key, spec.Rate)
	case spec.Priority != 0:
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: priority %d: a task's fires run at their instant; priority orders queued jobs (TaskConfig.Priority of a job type)", spec.Key, spec.Priority)
	}
	if err := spec.Rate.Validate(); err != nil {
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if err := schedule.ValidateJitter(spec.Jitter); err != nil {
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if spec.TZ == "" {
		spec.TZ = "UTC"
	}
	if spec.Misfire == "" {
		spec.Misfire = MisfireOnce
	}
	if spec.Timeout < 0 {
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: timeout %v: want 0 (the type's) or more", spec.Key, spec.Timeout)
	}
	sched, err := c.cache.Get(spec.Expression, spec.TZ)
	if err != nil {
		return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	sched = jittered(sched, spec.Key, spec.Jitter)
	params := []byte{}
	if spec.Params != nil {
		if params, err = json.Marshal(spec.Params); err != nil {
			return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: encode params: %w", spec.Key, err)
		}
		if err := json.Unmarshal(params, reg.Config().New()); err != nil {
			return rdb.TaskDecl{}, nil, fmt.Errorf("crontab: set task %q: params do not decode into %s: %w", spec.Key, reg.Config().Class, err)
		}
	}
	return rdb.TaskDecl{Key: spec.Key, Class: reg.Config().Class, Type: spec.Type,
		Expression: spec.Expression, TZ: spec.TZ, Status: string(spec.Status),
		Timeout: spec.Timeout, Concurrent: spec.Concurrent, Misfire: string(spec.Misfire),
		Params: string(params), MaxRunning: spec.MaxRunning, Rate: spec.Rate, Priority: spec.Priority,
		Jitter: spec.Jitter}, sched, nil
}

// TaskResult is what SetTasks did with one task.
type TaskResult int

// The results of SetTasks. The zero value is TaskFailed.
const (
	TaskFailed      TaskResult = iota // not written: its error is in the *TasksError
	TaskCreated                       // a new task, queued at its first instant
	TaskRescheduled                   // its expression, zone or jitter changed: rescheduled from now
	TaskUpdated                       // updated in place, its schedule kept
	TaskSuperseded                    // a later entry of the call has the same key and was written instead
)

// String names the result: failed, created, rescheduled, updated,
// superseded.
func (r TaskResult) String() string {
	switch r {
	case TaskFailed:
		return "failed"
	case TaskCreated:
		return "created"
	case TaskRescheduled:
		return "rescheduled"
	case TaskUpdated:
		return "updated"
	case TaskSuperseded:
		return "superseded"
	}
	return fmt.Sprintf("TaskResult(%d)", int(r))
}

// TasksError is the error of a SetTasks or RemoveTasks some of whose
// tasks failed; the others were written. Errs has one entry per task (or
// key), in order: nil for a task written, else its error, which names the
// task's key (and the field at fault for an invalid spec). errors.Is and
// errors.As see every task's error.
type TasksError struct {
	// Op is "set tasks" or "remove tasks".
	Op   string
	Errs []error
}

// Error counts the tasks that failed and lists the first ten.
func (e *TasksError) Error() string {
	var b []byte
	n := 0
	for i, err := range e.Errs {
		if err == nil {
			continue
		}
		if n++; n <= 10 {
			b = fmt.Appendf(b, "; entry %d: %v", i, err)
		}
	}
	if n > 10 {
		b = append(b, "; ..."...)
	}
	return fmt.Sprintf("crontab: %s: %d of %d failed%s", e.Op, n, len(e.Errs), b)
}

// Unwrap returns the errors of the tasks that failed.
func (e *TasksError) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// SetTasks adds or updates many run-time tasks, each as SetTask would,
// and returns one result per spec, in order.
//
// Each spec is validated first, on its own: an invalid one is reported and
// not written, and the others still are. The valid ones are written in
// batches of DefaultTaskBatch tasks per script call (500; all keys of a
// namespace share one Redis Cluster slot), several calls per round trip.
// A call that fails (a foreign value in one of its task keys, Redis
// unreachable) fails the tasks of its batch only: a call writes all its
// tasks or none (an unreachable Redis may have run it: a retry is
// idempotent). When a key appears more than once, the last entry wins:
// the earlier ones are TaskSuperseded, not written and not an error (even
// when the last one is invalid and so not written either).
//
// The error is nil when every task was written, a *TasksError with an
// error per task (nil for those written) when some were not, or the
// client's error (see Err).
func (c *Client) SetTasks(ctx context.Context, specs []TaskSpec) ([]TaskResult, error) {
	if c.err != nil {
		return nil, c.err
	}
	results := make([]TaskResult, len(specs))
	errs := make([]error, len(specs))
	last := make(map[string]int, len(specs))
	for i, s := range specs {
		last[s.Key] = i
	}
	// Validation here and the writes in bulkWriters overlap: a chunk is
	// written while the next is validated.
	type chunk struct {
		idx    []int
		scheds []schedule.Schedule
		decls  []rdb.TaskDecl
	}
	chunks := make(chan chunk, bulkWriters)
	var wg sync.WaitGroup
	for range bulkWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range chunks {
				now, err := c.db.Time(ctx)
				var out []rdb.SetTaskOutcome
				if err == nil {
					for j := range ch.decls {
						ch.decls[j].NextMS = ms(ch.scheds[j].Next(now))
					}
					out, _ = c.db.SetTasks(ctx, ms(now), ch.decls, 0)
				}
				for j, i := range ch.idx {
					switch {
					case err != nil:
						errs[i] = fmt.Errorf("crontab: set task %q: %w", specs[i].Key, err)
					case out[j].Err != nil:
						errs[i] = fmt.Errorf("crontab: set task %q: %w", specs[i].Key, out[j].Err)
					case out[j].Result == rdb.TaskDeclaredErr:
						errs[i] = fmt.Errorf("crontab: set task %q: a task declared in code has that name", specs[i].Key)
					case out[j].Result == rdb.TaskCreated:
						results[i] = TaskCreated
					case out[j].Result == rdb.TaskScheduled:
						results[i] = TaskRescheduled
					default:
						results[i] = TaskUpdated
					}
				}
			}
		}()
	}
	var ch chunk
	for i, s := range specs {
		if last[s.Key] != i {
			results[i] = TaskSuperseded
			continue
		}
		d, sched, err := c.taskDecl(s)
		if err != nil {
			errs[i] = err
			continue
		}
		ch.idx, ch.scheds, ch.decls = append(ch.idx, i), append(ch.scheds, sched), append(ch.decls, d)
		if len(ch.idx) == bulkChunk {
			chunks <- ch
			ch = chunk{}
		}
	}
	if len(ch.idx) > 0 {
		chunks <- ch
	}
	close(chunks)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return results, &TasksError{Op: "set tasks", Errs: errs}
		}
	}
	return results, nil
}

// bulkChunk is how many tasks SetTasks and RemoveTasks hand to a writer
// at once (a few batches: rdb.SetTasks pipelines them), and bulkWriters
// how many writers run at once, so that one encodes or decodes while
// Redis runs another's calls.
const (
	bulkChunk   = 4 * rdb.DefaultTaskBatch
	bulkWriters = 2
)

// RemoveTasks removes many run-time tasks, each as RemoveTask would, in
// batches of DefaultTaskBatch keys per script call, several calls per
// round trip. The error is nil when every task was removed, else a
// *TasksError with an error per key (nil for those removed): one wrapping
// ErrNotFound for a key with no task, one for a task declared in code
// (left alone), or the error of its batch's call (a batch with a foreign
// value in one of its task keys removes none of them). A key given more
// than once is removed once, and each of its entries reports that.
func (c *Client) RemoveTasks(ctx context.Context, keys []string) error {
	if c.err != nil {
		return c.err
	}
	// A key given more than once is sent once; its other entries share
	// the outcome of its first.
	first := make(map[string]int, len(keys))
	uniq := make([]int, 0, len(keys))
	for i, k := range keys {
		if _, dup := first[k]; !dup {
			first[k] = i
			uniq = append(uniq, i)
		}
	}
	errs := make([]error, len(keys))
	next := make(chan int, bulkWriters)
	var wg sync.WaitGroup
	for range bulkWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				part := uniq[lo:min(lo+bulkChunk, len(uniq))]
				ks := make([]string, len(part))
				for j, i := range part {
					ks[j] = keys[i]
				}
				out, _ := c.db.RemoveTasks(ctx, ks, 0)
				for j, o := range out {
					i := part[j]
					switch {
					case o.Err != nil:
						errs[i] = fmt.Errorf("crontab: remove task %q: %w", keys[i], o.Err)
					case o.Result < 0:
						errs[i] = fmt.Errorf("crontab: remove task %q: it is declared in code; disable it instead", keys[i])
					case o.Result == 0:
						errs[i] = fmt.Errorf("crontab: remove task %q: %w", keys[i], ErrNotFound)
					}
				}
			}
		}()
	}
	for lo := 0; lo < len(uniq); lo += bulkChunk {
		next <- lo
	}
	close(next)
	wg.Wait()
	failed := false
	for i, k := range keys {
		errs[i] = errs[first[k]]
		failed = failed || errs[i] != nil
	}
	if failed {
		return &TasksError{Op: "remove tasks", Errs: errs}
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
