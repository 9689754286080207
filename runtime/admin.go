package runtime

// The operator's API, the Inspector: what the crontab command line, the
// dashboard and the metrics collector read and change. Everything here works
// on Redis alone; none of it needs the task code.

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
	"github.com/redis/go-redis/v9"
)

// Inspector reads and changes a namespace the way an operator does: tasks
// and their status and history, triggering a fire, jobs and dead letters,
// processes and the namespace's counts. It needs no task code. Producers use
// a Client; an Inspector enqueues nothing. It is safe for concurrent use.
type Inspector struct {
	db   *rdb.RDB // every read goes through the data model
	opts options
	err  error // a bad option or a nil client: every method returns it
}

// NewInspector returns an inspector of the namespace on client. It takes
// the options a Scheduler and a Client share (WithNamespace, WithLogger,
// WithProcessTTL, which says when a process counts as dead); any other, or
// a bad value, makes every method return an error that names it (see Err).
func NewInspector(client redis.UniversalClient, opts ...Option) *Inspector {
	o, err := buildOptions(scopeInspector, opts)
	if client == nil {
		err = errors.Join(errors.New("crontab: nil redis client"), err)
	}
	return &Inspector{db: rdb.New(client, o.namespace), opts: o, err: err}
}

// Cancel removes a pending job, as Client.Cancel does: an operator's
// action on a job that should not run.
func (in *Inspector) Cancel(ctx context.Context, id string) error {
	if in.err != nil {
		return in.err
	}
	return cancelJob(ctx, in.db, id)
}

// Err returns the error that every method of in returns: a bad option given
// to NewInspector, or a nil Redis client. It is nil for a usable inspector.
func (in *Inspector) Err() error { return in.err }

// ErrNotActive is wrapped by the error of a Trigger of a task that is
// paused or disabled.
var ErrNotActive = errors.New("task is not active")

// ErrRunning is wrapped by the error of a Trigger of a non-concurrent task
// whose previous run still runs.
var ErrRunning = errors.New("task is running")

// Source says where a task was declared.
type Source string

// The task sources.
const (
	// SourceStatic tasks are declared in code (crontabgen or Registry.Add).
	SourceStatic Source = sourceStatic
	// SourceDynamic tasks were added at run time with Client.SetTask.
	SourceDynamic Source = sourceDynamic
)

// TaskInfo is a task as an operator sees it: its hash, its place in the
// queue and whether it runs.
type TaskInfo struct {
	// Name is the task's name (the key of its hash).
	Name string
	// Type is the registered type that runs it; Class its Go type path (a
	// run-time task's is its type's, from the namespace's classes hash: the
	// task's hash does not store it).
	Type, Class string
	// Source is static (declared in code) or dynamic (added at run time).
	Source Source
	// Status is active, paused or disabled.
	Status Status
	// Expression is the schedule; TZ the zone it is computed in (UTC when
	// the hash has none); Interval its readable description (a run-time
	// task's is computed here from Expression, TZ and Jitter: its hash does
	// not store it).
	Expression, TZ, Interval string
	// Timeout bounds each run (0: the type's, for a run-time task that has
	// none of its own); Concurrent lets runs overlap; Misfire is the policy
	// after downtime (once when the hash has none).
	Timeout    time.Duration
	Concurrent bool
	Misfire    Misfire
	// Params are a run-time task's parameters (JSON); nil for static tasks.
	Params json.RawMessage
	// MaxRunning is the task's cap of runs in progress at once across the
	// cluster (0: no cap), Rate its start rate (zero: none) and Priority
	// its priority (default 0), as its declaration or TaskSpec set them.
	MaxRunning int
	Rate       Rate
	Priority   int
	// Jitter is the task's jitter (0: none) and JitterOffset the effective
	// offset of its instants from its expression's (JitterOffset of its
	// name: schedule.JitterOffset), in [0, Jitter).
	Jitter, JitterOffset time.Duration
	// Next is when it fires next: its score in the queue, or the zero Time
	// when it is not queued (disabled, or no instant left).
	Next time.Time
	// Last is the scheduled instant of its last run; zero before the first.
	Last time.Time
	// Created is when the task was first written to Redis.
	Created time.Time
	// LastOutcome, LastError and LastDuration describe the last completed
	// run; LastOutcome is empty before the first.
	LastOutcome  Outcome
	LastError    string
	LastDuration time.Duration
	// Runs counts completed runs (ok, failed and abandoned); Failures the
	// failed and abandoned ones; Skips the fires that did not run.
	Runs, Failures, Skips int64
	// Running counts runs in progress now, across all processes.
	Running int
	// LockedBy is the process holding the task's lock (a non-concurrent
	// run in progress), or "".
	LockedBy string
}

// ListTasks returns every task of the namespace, sorted by name. Job types
// (which have no schedule and never fire on their own) are not tasks; see
// Jobs.
func (in *Inspector) ListTasks(ctx context.Context) ([]TaskInfo, error) {
	if in.err != nil {
		return nil, in.err
	}

	names, err := in.db.TaskNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("crontab: list tasks: %w", err)
	}
	slices.Sort(names)
	out, err := in.readTasks(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("crontab: list tasks: %w", err)
	}
	return out, nil
}

// Task returns one task. The error wraps ErrNotFound when there is none.
func (in *Inspector) Task(ctx context.Context, name string) (TaskInfo, error) {
	if in.err != nil {
		return TaskInfo{}, in.err
	}

	out, err := in.readTasks(ctx, []string{name})
	if err != nil {
		return TaskInfo{}, fmt.Errorf("crontab: task %q: %w", name, err)
	}
	if len(out) == 0 {
		return TaskInfo{}, fmt.Errorf("crontab: task %q: %w", name, ErrNotFound)
	}
	return out[0], nil
}

// readTasks reads the tasks named, in order, skipping those without a hash.
func (in *Inspector) readTasks(ctx context.Context, names []string) ([]TaskInfo, error) {
	reads, runs, err := in.db.ReadTasks(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]TaskInfo, 0, len(names))
	var classless []int // run-time tasks whose class is their type's
	for i, n := range names {
		read := reads[i]
		if len(read.Hash) == 0 {
			continue
		}
		t := taskInfo(n, read.Hash)
		if t.Class == "" && t.Type != "" && t.Source == SourceDynamic {
			classless = append(classless, len(out))
		}
		if read.Queued {
			t.Next = fromMS(read.Next)
		}
		if read.Lock != "" {
			if process, _, ok := rdb.ParseLockValue(read.Lock); ok {
				t.LockedBy = process
			} else {
				t.LockedBy = read.Lock // not a lock this engine wrote: shown as it is
			}
		}
		t.Running = runs[n]
		out = append(out, t)
	}
	if len(classless) > 0 {
		types := make([]string, len(classless))
		for i, j := range classless {
			types[i] = out[j].Type
		}
		classes, err := in.db.TypeClasses(ctx, types)
		if err != nil {
			return nil, err
		}
		for _, j := range classless {
			out[j].Class = classes[out[j].Type]
		}
	}
	return out, nil
}

// taskInfo decodes a task hash. Fields that are missing or bad are left
// zero: this is for display, and bad data is never an error here.
func taskInfo(name string, h map[string]string) TaskInfo {
	num := func(f string) int64 {
		n, _ := strconv.ParseInt(h[f], 10, 64)
		return n
	}
	t := TaskInfo{
		Name:         name,
		Type:         h[fieldType],
		Class:        h["class"],
		Source:       Source(h["source"]),
		Status:       Status(h[fieldStatus]),
		Expression:   h[fieldExpression],
		TZ:           h[fieldTZ],
		Interval:     h["interval"],
		Timeout:      time.Duration(num(fieldTimeout)) * time.Millisecond,
		Concurrent:   h["concurrent"] == "1",
		Misfire:      Misfire(h[fieldMisfire]),
		Last:         fromMS(num("last_run")),
		Created:      fromMS(num("created_at")),
		LastOutcome:  Outcome(h["last_result"]),
		LastError:    h["last_error"],
		LastDuration: time.Duration(num("last_duration")) * time.Millisecond,
		Runs:         num("runs"),
		Failures:     num("failures"),
		Skips:        num("skips"),
	}
	if p := h[fieldParams]; p != "" && json.Valid([]byte(p)) {
		t.Params = json.RawMessage(p)
	}
	t.MaxRunning = int(num(rdb.FieldMaxRunning))
	t.Priority = int(num(rdb.FieldPriority))
	if j, err := rdb.ParseJitter(name, h[rdb.FieldJitter]); err == nil {
		t.Jitter, t.JitterOffset = j, schedule.JitterOffset(name, j)
	}
	if r := (Rate{N: int(num(rdb.FieldRateN)), Per: time.Duration(num(rdb.FieldRatePerMS)) * time.Millisecond}); r.Validate() == nil {
		t.Rate = r
	}
	// The defaults a run-time task's hash does not store (luaTaskWrite):
	// a task hash without source is a run-time task (a declared task's
	// always has source static), without status an active one.
	if t.Source == "" && t.Expression != "" {
		t.Source = SourceDynamic
	}
	if t.Status == "" && t.Expression != "" {
		t.Status = StatusActive
	}
	if t.TZ == "" && t.Expression != "" {
		t.TZ = "UTC"
	}
	if t.Misfire == "" && t.Expression != "" {
		t.Misfire = MisfireOnce
	}
	if t.Source == SourceDynamic {
		t.Interval = ""
		if sched, err := inspectorSchedules.Get(t.Expression, t.TZ); err == nil {
			t.Interval = schedule.Describe(jittered(sched, name, t.Jitter))
		}
	}
	return t
}

// Pause makes a task skip its fires (each skip is counted) while keeping
// its place in the queue. The error wraps ErrNotFound when there is no
// such task.
func (in *Inspector) Pause(ctx context.Context, name string) error {
	if in.err != nil {
		return in.err
	}

	return in.SetStatus(ctx, name, StatusPaused)
}

// Resume makes a paused task active again: it fires from its next future
// instant. It is the same as Enable, and either works from any status.
func (in *Inspector) Resume(ctx context.Context, name string) error {
	if in.err != nil {
		return in.err
	}

	return in.SetStatus(ctx, name, StatusActive)
}

// Disable takes a task out of the queue until it is enabled again.
func (in *Inspector) Disable(ctx context.Context, name string) error {
	if in.err != nil {
		return in.err
	}

	return in.SetStatus(ctx, name, StatusDisabled)
}

// Enable makes a disabled task active again, queued at its next future
// instant. It is the same as Resume.
func (in *Inspector) Enable(ctx context.Context, name string) error {
	if in.err != nil {
		return in.err
	}

	return in.SetStatus(ctx, name, StatusActive)
}

// SetStatus writes a task's status, as an operator's plain HSET would, and
// applies it at once: disabled takes the task out of the queue; active or
// paused puts a task that is not queued back at its next future instant
// (computed from the expression and zone in its hash) and wakes the
// schedulers. The error wraps ErrNotFound when there is no such task.
func (in *Inspector) SetStatus(ctx context.Context, name string, st Status) error {
	if in.err != nil {
		return in.err
	}

	if !st.Valid() {
		return fmt.Errorf("crontab: set status of %q: %q: want active, paused or disabled", name, st)
	}
	found, err := in.db.SetStatus(ctx, name, string(st))
	if err != nil {
		return fmt.Errorf("crontab: set status of %q: %w", name, err)
	}
	if !found {
		return fmt.Errorf("crontab: set status of %q: %w", name, ErrNotFound)
	}
	if st == StatusDisabled {
		return nil
	}
	if err := in.ensureQueued(ctx, name); err != nil {
		return fmt.Errorf("crontab: set status of %q: %w", name, err)
	}
	return nil
}

// ensureQueued puts an active or paused task that is not in the queue back
// at its next future instant, with the requeue script the master's
// maintenance uses, and wakes the schedulers.
func (in *Inspector) ensureQueued(ctx context.Context, name string) error {
	expr, tz, jitter, err := in.db.TaskSchedule(ctx, name)
	if err != nil {
		return err
	}
	if expr == "" {
		return nil // a bad hash: nothing to schedule
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return fmt.Errorf("tz %q: %w", tz, err)
	}
	sched, err := schedule.Parse(expr, loc)
	if err != nil {
		return fmt.Errorf("expression %q: %w", expr, err)
	}
	now, err := in.db.Time(ctx)
	if err != nil {
		return err
	}
	next := ms(jittered(sched, name, jitter).Next(now))
	queued, err := in.db.Requeue(ctx, name, next)
	if err != nil {
		return err
	}
	if queued && next != 0 {
		return in.db.Wake(ctx, "requeue")
	}
	return nil
}

// Trigger fires a task once, now, without moving its schedule, and returns
// the instant of that fire (Redis server time).
//
// The triggered fire is an ordinary fire of the task at an instant that is
// not on its schedule: Trigger sets the hash's next_run to now and queues
// the task now, and the process that claims it computes the instant after
// it from the expression, which is the instant the task was queued at
// before. So the run goes through the same claim as any fire: it runs once,
// on one process, with the task's parameters and timeout, and it is
// recorded in the task's history and counters like a scheduled run.
//
// A non-concurrent task takes its lock as always, so a triggered run never
// overlaps another run of the task: Trigger fails with an error wrapping
// ErrRunning while a run is in progress, and if a run starts between the
// trigger and the claim, the triggered fire is skipped and recorded as such.
// A paused or disabled task is not triggered (ErrNotActive); a missing one
// is ErrNotFound. When the task is already due (its next instant has come
// and a scheduler is about to claim it), Trigger changes nothing and
// returns that instant: the run about to start is the triggered one.
func (in *Inspector) Trigger(ctx context.Context, name string) (time.Time, error) {
	if in.err != nil {
		return time.Time{}, in.err
	}

	state, at, err := in.db.Trigger(ctx, name)
	if err != nil {
		return time.Time{}, fmt.Errorf("crontab: trigger %q: %w", name, err)
	}
	switch state {
	case "ok", "due":
		return fromMS(at), nil
	case "missing":
		return time.Time{}, fmt.Errorf("crontab: trigger %q: %w", name, ErrNotFound)
	case "paused", "disabled":
		return time.Time{}, fmt.Errorf("crontab: trigger %q: it is %s: %w", name, state, ErrNotActive)
	case "running":
		return time.Time{}, fmt.Errorf("crontab: trigger %q: its previous run still runs (not concurrent): %w", name, ErrRunning)
	case "done":
		return time.Time{}, fmt.Errorf("crontab: trigger %q: it has no instant left to fire", name)
	}
	return time.Time{}, fmt.Errorf("crontab: trigger %q: unexpected reply %q", name, state)
}

// JobState is where a job is.
type JobState string

// The job states.
const (
	// JobPending jobs wait in the queue for their due time (a failed job
	// waiting for its retry is pending too, with Attempts > 0).
	JobPending JobState = "pending"
	// JobRunning jobs are claimed by a process and run now.
	JobRunning JobState = "running"
	// JobDead jobs failed on their last allowed attempt.
	JobDead JobState = "dead"
)

// JobInfo is one job as an operator sees it.
type JobInfo struct {
	// ID is the job's id; Task its registered type name.
	ID, Task string
	// State is pending, running or dead.
	State JobState
	// Payload is the job's JSON payload.
	Payload json.RawMessage
	// Retries is the job's own retry count, or -1 for the type's default.
	Retries int
	// Due is when a pending job is due (this attempt's due time: a retry's
	// backoff end, a redelivery's moment).
	Due time.Time
	// FirstDue is when the job was first due: the scheduled instant its
	// runs report as RunInfo.Fire, kept across releases, retries,
	// redeliveries and a retry from the dead letters (for the retry of a
	// scheduled fire, the fire's instant). Job sets it; Jobs leaves it zero
	// except where the job's envelope carries it.
	FirstDue time.Time
	// Attempts counts the attempts made so far, a running job's own
	// included.
	Attempts int
	// Owner is the process running a running job; LeaseUntil when its
	// lease ends unless renewed.
	Owner      string
	LeaseUntil time.Time
	// Error and Failed are a dead job's last error and when it failed.
	Error  string
	Failed time.Time
	// Unique is the job's unique identity (Unique, UniqueKey, Debounce;
	// see UniqueIdentity), "" for a job enqueued without one.
	Unique string
	// RateKey is the job's rate key (RateKey), "" for none.
	RateKey string
	// Waiting is why a pending job that is due is not claimed yet, set
	// only by ExplainWaiting (Jobs and Job leave it zero).
	Waiting Wait
}

// JobFilter selects jobs for Jobs. The zero filter selects every job.
type JobFilter struct {
	// State selects one state; empty means all three.
	State JobState
	// Task selects one job type; empty means all.
	Task string
	// Limit caps how many jobs of each state are returned; zero or less
	// means no cap.
	Limit int
}

// jobPage is how many ids Jobs reads at a time while it filters.
const jobPage = 500

// Jobs lists jobs: pending ones by due time, then running ones by lease
// deadline, then dead ones most recent first.
func (in *Inspector) Jobs(ctx context.Context, f JobFilter) ([]JobInfo, error) {
	if in.err != nil {
		return nil, in.err
	}

	if f.State != "" && f.State != JobPending && f.State != JobRunning && f.State != JobDead {
		return nil, fmt.Errorf("crontab: jobs: state %q: want pending, running or dead", f.State)
	}
	var out []JobInfo
	for _, st := range []JobState{JobPending, JobRunning, JobDead} {
		if f.State != "" && f.State != st {
			continue
		}
		jobs, err := in.scanJobs(ctx, st, f.Task, f.Limit)
		if err != nil {
			return nil, fmt.Errorf("crontab: jobs: %w", err)
		}
		out = append(out, jobs...)
	}
	return out, nil
}

// scanJobs pages through one state's jobs (the pending and dead ZSETs by
// rank, the owners of running jobs with HSCAN), keeping the jobs of task
// (all when empty), up to limit.
func (in *Inspector) scanJobs(ctx context.Context, st JobState, task string, limit int) ([]JobInfo, error) {
	var out []JobInfo
	cursor := uint64(0)
	for start := int64(0); ; start += jobPage {
		var zs []rdb.JobRef
		var err error
		switch st {
		case JobPending:
			zs, err = in.db.PendingJobs(ctx, start, jobPage)
		case JobRunning:
			zs, cursor, err = in.db.RunningJobs(ctx, cursor, jobPage)
		case JobDead:
			zs, err = in.db.DeadJobRefs(ctx, start, jobPage)
		}
		if err != nil {
			return nil, err
		}
		jobs, err := in.readJobs(ctx, st, zs)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if task != "" && j.Task != task {
				continue
			}
			out = append(out, j)
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
		if (st == JobRunning && cursor == 0) || (st != JobRunning && len(zs) < jobPage) {
			return out, nil
		}
	}
}

// readJobs reads the data of jobs in one state, in order; ids whose data
// is gone (the job just finished) are left out.
func (in *Inspector) readJobs(ctx context.Context, st JobState, zs []rdb.JobRef) ([]JobInfo, error) {
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i] = z.ID
	}
	data, err := in.db.ReadJobData(ctx, ids, st == JobDead, st == JobRunning)
	if err != nil {
		return nil, err
	}
	out := make([]JobInfo, 0, len(ids))
	for i, id := range ids {
		if !data[i].OK {
			continue
		}
		j := jobInfo(id, st, data[i].Envelope)
		switch st {
		case JobPending:
			j.Due = fromMS(zs[i].Score)
		case JobRunning:
			j.LeaseUntil = fromMS(zs[i].Score)
			j.Owner = rdb.ClaimProcess(data[i].Claim)
		}
		if st != JobDead {
			j.Attempts = int(data[i].Attempts)
			if st == JobRunning {
				j.Attempts++ // the one under way
			}
		}
		out = append(out, j)
	}
	return out, nil
}

// jobInfo decodes a job envelope; one that does not decode is shown with
// its raw text as payload and task "?".
func jobInfo(id string, st JobState, raw string) JobInfo {
	j := JobInfo{ID: id, State: st, Retries: -1}
	var env envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		j.Task = "?"
		j.Payload, _ = json.Marshal(raw)
		j.Error = "bad job data: " + err.Error()
		return j
	}
	j.Task, j.Payload, j.Unique, j.RateKey = env.Task, env.Payload, env.Unique, env.RateKey
	if env.Fire > 0 {
		j.FirstDue = fromMS(env.Fire)
	}
	if env.Retries != nil {
		j.Retries = *env.Retries
	}
	if st == JobDead {
		j.Error, j.Failed, j.Attempts = env.Error, fromMS(env.Failed), env.Attempts
	}
	return j
}

// Job returns one job, pending, running or dead. The error wraps
// ErrNotFound when there is none (it ran, was cancelled or never existed).
func (in *Inspector) Job(ctx context.Context, id string) (JobInfo, error) {
	if in.err != nil {
		return JobInfo{}, in.err
	}

	read, found, err := in.db.ReadJob(ctx, id)
	switch {
	case err != nil:
		return JobInfo{}, fmt.Errorf("crontab: job %q: %w", id, err)
	case !found:
		return JobInfo{}, fmt.Errorf("crontab: job %q: %w", id, ErrNotFound)
	case read.Pending:
		j := jobInfo(id, JobPending, read.Envelope)
		j.Due, j.Attempts = fromMS(read.DueMS), int(read.Attempts)
		j.setFirstDue(read)
		return j, nil
	case read.Running:
		j := jobInfo(id, JobRunning, read.Envelope)
		j.Owner, j.Attempts = rdb.ClaimProcess(read.Claim), int(read.Attempts)+1
		j.LeaseUntil = fromMS(read.LeaseMS)
		j.setFirstDue(read)
		return j, nil
	}
	return jobInfo(id, JobDead, read.Envelope), nil
}

// setFirstDue sets a pending or running job's FirstDue, unless its envelope
// gave it: the first due kept when it was put back, else the due it is
// pending at or was claimed at.
func (j *JobInfo) setFirstDue(read rdb.JobRead) {
	switch {
	case !j.FirstDue.IsZero():
	case read.FirstDueMS > 0:
		j.FirstDue = fromMS(read.FirstDueMS)
	case read.DueMS > 0:
		j.FirstDue = fromMS(read.DueMS)
	}
}

// ProcessInfo is one scheduler process, from its heartbeat.
type ProcessInfo struct {
	// ID is the process id (WithProcessID).
	ID string
	// Host, PID and Version describe it (Version is WithVersion's).
	Host    string
	PID     int
	Version string
	// Started is when it started; LastBeat its last heartbeat.
	Started, LastBeat time.Time
	// Running counts the handlers it runs now; Tasks the task and job
	// types it knows.
	Running, Tasks int
	// Alive is true while its last heartbeat is younger than the process
	// TTL (the client's WithProcessTTL, default 5s: give the client the
	// schedulers' value). Dead processes are listed until the master
	// forgets them, ten TTLs after their last beat.
	Alive bool
	// Master is true for the process that does the namespace's
	// housekeeping (it holds lock:master).
	Master bool
	// Names are the task and job types it runs (its role: all those of its
	// registry, or those WithTasks names), sorted; nil when its heartbeat
	// does not publish them (an older version).
	Names []string
}

// Processes lists the scheduler processes that sent a heartbeat recently,
// most recent beat first.
func (in *Inspector) Processes(ctx context.Context) ([]ProcessInfo, error) {
	if in.err != nil {
		return nil, in.err
	}

	now, err := in.db.Time(ctx)
	if err != nil {
		return nil, fmt.Errorf("crontab: processes: %w", err)
	}
	beats, master, err := in.db.ReadProcesses(ctx)
	if err != nil {
		return nil, fmt.Errorf("crontab: processes: %w", err)
	}
	deadline := ms(now) - in.opts.processTTL.Milliseconds()
	out := make([]ProcessInfo, 0, len(beats))
	for _, b := range beats {
		id, h := b.ID, b.Hash
		num := func(f string) int64 {
			n, _ := strconv.ParseInt(h[f], 10, 64)
			return n
		}
		names, _ := rdb.ParseTaskNames(h[rdb.FieldTaskNames])
		out = append(out, ProcessInfo{
			ID: id, Host: h["host"], PID: int(num("pid")), Version: h["version"],
			Started: fromMS(num("started")), LastBeat: fromMS(b.BeatMS),
			Running: int(num("running")), Tasks: int(num("tasks")),
			Alive: b.BeatMS >= deadline, Master: master == id, Names: names,
		})
	}
	return out, nil
}

// Overview counts what is queued and running in the namespace at one
// instant: what a dashboard's header or a metrics collector shows.
type Overview struct {
	// Now is the Redis server time of the counts.
	Now time.Time
	// Tasks counts tasks (those queued plus those not queued: disabled, or
	// with no instant left; two O(1) counts at any number of tasks);
	// Queued those in the queue; Due those whose instant has come but
	// that no process has claimed yet; Running the task runs in progress.
	Tasks, Queued, Due, Running int64
	// JobsPending counts pending jobs; JobsDue those due but unclaimed;
	// JobsRunning those claimed; JobsDead the dead letters.
	JobsPending, JobsDue, JobsRunning, JobsDead int64
	// Processes counts processes with a recent heartbeat (see
	// ProcessInfo.Alive).
	Processes int64
	// Repaired counts, by kind (RepairJob, RepairClaim, RepairLease,
	// RepairRunning, RepairLock, RepairQueue, RepairDue, RepairIndex), the
	// broken states the
	// master's invariant sweep has repaired in the namespace since its
	// counters were created: totals that only grow, every kind present (0
	// when none was found). Anything but 0 points at a fault or a bug
	// (see RELIABILITY.md).
	Repaired map[string]int64
}

// Overview returns the namespace's counts (ZCARD and ZCOUNT of its ZSETs,
// and the sweep's counters).
func (in *Inspector) Overview(ctx context.Context) (Overview, error) {
	if in.err != nil {
		return Overview{}, in.err
	}

	now, err := in.db.Time(ctx)
	if err != nil {
		return Overview{}, fmt.Errorf("crontab: overview: %w", err)
	}
	n, err := in.db.ReadCounts(ctx, ms(now), ms(now)-in.opts.processTTL.Milliseconds())
	if err != nil {
		return Overview{}, fmt.Errorf("crontab: overview: %w", err)
	}
	return Overview{Now: now, Tasks: n.Tasks, Queued: n.Queued, Due: n.Due, Running: n.Running,
		JobsPending: n.JobsPending, JobsDue: n.JobsDue, JobsRunning: n.JobsRunning, JobsDead: n.JobsDead,
		Processes: n.Processes, Repaired: n.Repaired}, nil
}
