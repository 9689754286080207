package dashboard

import (
	"encoding/json"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// The JSON shapes of the API, which the crontab command's -o json prints
// too. Times are RFC 3339 and left out when unknown; durations are
// milliseconds.

// Task is a task as the API shows it.
type Task struct {
	Name           string          `json:"name"`
	Type           string          `json:"type"`
	Class          string          `json:"class,omitempty"`
	Source         string          `json:"source"`
	Status         string          `json:"status"`
	Expression     string          `json:"expression"`
	TZ             string          `json:"tz"`
	Interval       string          `json:"interval,omitempty"`
	TimeoutMS      int64           `json:"timeout_ms"`
	Concurrent     bool            `json:"concurrent"`
	Misfire        string          `json:"misfire,omitempty"`
	Params         json.RawMessage `json:"params,omitempty"`
	NextRun        time.Time       `json:"next_run,omitzero"`
	LastRun        time.Time       `json:"last_run,omitzero"`
	CreatedAt      time.Time       `json:"created_at,omitzero"`
	LastOutcome    string          `json:"last_outcome,omitempty"`
	LastError      string          `json:"last_error,omitempty"`
	LastDurationMS int64           `json:"last_duration_ms"`
	Runs           int64           `json:"runs"`
	Failures       int64           `json:"failures"`
	Skips          int64           `json:"skips"`
	Running        int             `json:"running"`
	LockedBy       string          `json:"locked_by,omitempty"`
	// MaxRunning, Rate ("N/D", as crontab.ParseRate reads it) and Priority
	// are the task's flow-control settings, left out when not set.
	MaxRunning int    `json:"max_running,omitempty"`
	Rate       string `json:"rate,omitempty"`
	Priority   int    `json:"priority,omitempty"`
	// JitterMS is the task's jitter and JitterOffsetMS the effective offset
	// of its instants (crontab.TaskInfo.JitterOffset), left out when it has
	// none.
	JitterMS       int64 `json:"jitter_ms,omitempty"`
	JitterOffsetMS int64 `json:"jitter_offset_ms,omitempty"`
	// Recent are the durations of the latest completed runs, oldest
	// first, for a sparkline (/api/overview and /api/page/tasks only).
	Recent []Point `json:"recent,omitempty"`
}

// Point is one completed run in a task's sparkline.
type Point struct {
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
}

// TaskView converts a task for the API.
func TaskView(t crontab.TaskInfo) Task {
	return Task{
		Name: t.Name, Type: t.Type, Class: t.Class, Source: string(t.Source), Status: string(t.Status),
		Expression: t.Expression, TZ: t.TZ, Interval: t.Interval, TimeoutMS: t.Timeout.Milliseconds(),
		Concurrent: t.Concurrent, Misfire: string(t.Misfire), Params: t.Params,
		NextRun: t.Next, LastRun: t.Last, CreatedAt: t.Created,
		LastOutcome: string(t.LastOutcome), LastError: t.LastError, LastDurationMS: t.LastDuration.Milliseconds(),
		Runs: t.Runs, Failures: t.Failures, Skips: t.Skips, Running: t.Running, LockedBy: t.LockedBy,
		MaxRunning: t.MaxRunning, Rate: t.Rate.String(), Priority: t.Priority,
		JitterMS: t.Jitter.Milliseconds(), JitterOffsetMS: t.JitterOffset.Milliseconds(),
	}
}

// Run is one history record as the API shows it.
type Run struct {
	Task       string    `json:"task"`
	JobID      string    `json:"job_id,omitempty"`
	Fire       time.Time `json:"fire,omitzero"`
	Start      time.Time `json:"start,omitzero"`
	End        time.Time `json:"end,omitzero"`
	DurationMS int64     `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	Error      string    `json:"error,omitempty"`
	Process    string    `json:"process,omitempty"`
	Attempt    int       `json:"attempt"`
}

// RunView converts a history record for the API.
func RunView(r crontab.Record) Run {
	return Run{Task: r.Task, JobID: r.JobID, Fire: r.Fire, Start: r.Start, End: r.End,
		DurationMS: r.End.Sub(r.Start).Milliseconds(), Outcome: string(r.Outcome), Error: r.Error,
		Process: r.Process, Attempt: r.Attempt}
}

// Job is one job as the API shows it.
type Job struct {
	ID         string          `json:"id"`
	Task       string          `json:"task"`
	State      string          `json:"state"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Retries    int             `json:"retries"`
	Due        time.Time       `json:"due,omitzero"`
	Attempts   int             `json:"attempts"`
	Owner      string          `json:"owner,omitempty"`
	LeaseUntil time.Time       `json:"lease_until,omitzero"`
	Error      string          `json:"error,omitempty"`
	Failed     time.Time       `json:"failed,omitzero"`
	Unique     string          `json:"unique,omitempty"` // its unique identity (crontab.Unique), if any
	RateKey    string          `json:"rate_key,omitempty"`
	// Waiting is why a due pending job is not claimed yet
	// (crontab.Wait.String: "max_running 50/50", "rate 100/1s",
	// "rate key tenant-7 5/1m0s", "no process" or "due"), left out for the
	// others and where it was not looked at (Inspector.ExplainWaiting).
	Waiting string `json:"waiting,omitempty"`
}

// JobView converts a job for the API.
func JobView(j crontab.JobInfo) Job {
	return Job{ID: j.ID, Task: j.Task, State: string(j.State), Payload: j.Payload, Retries: j.Retries, Due: j.Due,
		Attempts: j.Attempts, Owner: j.Owner, LeaseUntil: j.LeaseUntil, Error: j.Error, Failed: j.Failed, Unique: j.Unique,
		RateKey: j.RateKey, Waiting: j.Waiting.String()}
}

// Process is one scheduler process as the API shows it.
type Process struct {
	ID       string    `json:"id"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Version  string    `json:"version,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	LastBeat time.Time `json:"last_beat,omitzero"`
	Running  int       `json:"running"`
	Tasks    int       `json:"tasks"`
	Alive    bool      `json:"alive"`
	Master   bool      `json:"master"`
	// Types are the task and job types it runs (its role,
	// crontab.ProcessInfo.Names), left out when it does not publish them.
	Types []string `json:"types,omitempty"`
}

// ProcessView converts a process for the API.
func ProcessView(p crontab.ProcessInfo) Process {
	return Process{ID: p.ID, Host: p.Host, PID: p.PID, Version: p.Version, Started: p.Started, LastBeat: p.LastBeat,
		Running: p.Running, Tasks: p.Tasks, Alive: p.Alive, Master: p.Master, Types: p.Names}
}

// Counts are the namespace's counts as the API shows them.
type Counts struct {
	Now         time.Time `json:"now"`
	Tasks       int64     `json:"tasks"`
	Queued      int64     `json:"queued"`
	Due         int64     `json:"due"`
	Running     int64     `json:"running"`
	JobsPending int64     `json:"jobs_pending"`
	JobsDue     int64     `json:"jobs_due"`
	JobsRunning int64     `json:"jobs_running"`
	JobsDead    int64     `json:"jobs_dead"`
	Processes   int64     `json:"processes"`
	// Repaired is Overview.Repaired: the invariant sweep's totals by kind.
	Repaired map[string]int64 `json:"repaired"`
}

// CountsView converts an overview for the API.
func CountsView(o crontab.Overview) Counts {
	return Counts{Now: o.Now, Tasks: o.Tasks, Queued: o.Queued, Due: o.Due, Running: o.Running,
		JobsPending: o.JobsPending, JobsDue: o.JobsDue, JobsRunning: o.JobsRunning, JobsDead: o.JobsDead,
		Processes: o.Processes, Repaired: o.Repaired}
}
