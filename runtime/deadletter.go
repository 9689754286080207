package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// DeadJob is a job that failed on its last allowed attempt.
type DeadJob struct {
	// ID is the job's id.
	ID string
	// Task is the job's registered type name.
	Task string
	// Payload is the job's JSON payload.
	Payload json.RawMessage
	// Attempts is how many attempts were made.
	Attempts int
	// Error is the last attempt's error.
	Error string
	// Failed is when the last attempt ended.
	Failed time.Time
}

// DeadJobs returns up to limit dead jobs, most recent first (limit <= 0
// means all that are kept).
func (in *Inspector) DeadJobs(ctx context.Context, limit int) ([]DeadJob, error) {
	if in.err != nil {
		return nil, in.err
	}

	refs, err := in.db.DeadJobRefs(ctx, 0, int64(limit))
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	data, err := in.db.ReadJobData(ctx, ids, true, false)
	if err != nil {
		return nil, fmt.Errorf("crontab: read dead jobs: %w", err)
	}
	out := make([]DeadJob, 0, len(ids))
	for i, id := range ids {
		var env envelope
		if !data[i].OK || json.Unmarshal([]byte(data[i].Envelope), &env) != nil {
			continue
		}
		out = append(out, DeadJob{ID: id, Task: env.Task, Payload: env.Payload, Attempts: env.Attempts,
			Error: env.Error, Failed: fromMS(env.Failed)})
	}
	return out, nil
}

// RetryDead moves a dead job back to the queue, due now, with its attempts
// reset. It returns an error wrapping ErrNotFound when no dead job has id.
//
// A unique job (Unique, UniqueKey, Debounce) takes its identity again when
// no other job holds it, so a duplicate enqueue is refused while it is
// pending or running again; its ttl is not counted again (it counts from
// the enqueue): the identity is free once the retried job ends, or at the
// old expiry if that is later. When another job holds the identity now (one
// enqueued after the dead job's identity was freed), the retried job runs
// without one: JobInfo.Unique of it is "" and it is nobody's duplicate.
func (in *Inspector) RetryDead(ctx context.Context, id string) error {
	if in.err != nil {
		return in.err
	}

	raw, found, err := in.db.DeadLetter(ctx, id)
	if err != nil {
		return fmt.Errorf("crontab: retry %q: %w", id, err)
	} else if !found {
		return fmt.Errorf("crontab: retry %q: no dead job: %w", id, ErrNotFound)
	}
	var env envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		return fmt.Errorf("crontab: retry %q: bad dead job data: %w", id, err)
	}
	env.Error, env.Failed, env.Attempts = "", 0, 0
	b, _ := json.Marshal(env)
	var alone []byte
	if env.Unique != "" {
		ident := env.Unique
		env.Unique = ""
		alone, _ = json.Marshal(env)
		env.Unique = ident
	}
	res, err := in.db.RetryDead(ctx, id, string(b), env.Unique, string(alone))
	if err != nil {
		return fmt.Errorf("crontab: retry %q: %w", id, err)
	}
	if res == rdb.RetryDeadNotFound {
		return fmt.Errorf("crontab: retry %q: no dead job: %w", id, ErrNotFound)
	}
	_ = in.db.Wake(ctx, "retry") // the job is queued; a scheduler looks at the queue within its max sleep anyway
	return nil
}

// Stats are the run totals of a task or job type.
type Stats struct {
	// Runs counts completed runs (ok, failed and abandoned).
	Runs int64 `json:"total"`
	// Failures counts failed and abandoned runs.
	Failures int64 `json:"fail"`
}

// Stats returns the totals of a scheduled task or of a job type, like the
// seed design's {"total":N,"fail":M}.
func (in *Inspector) Stats(ctx context.Context, name string) (Stats, error) {
	if in.err != nil {
		return Stats{}, in.err
	}

	runs, failures, err := in.db.RunTotals(ctx, name)
	if err != nil {
		return Stats{}, fmt.Errorf("crontab: stats of %q: %w", name, err)
	}
	return Stats{Runs: runs, Failures: failures}, nil
}

// History returns up to limit of the most recent run records of a task or
// job type, newest first (limit <= 0 means all that are kept).
func (in *Inspector) History(ctx context.Context, name string, limit int) ([]Record, error) {
	if in.err != nil {
		return nil, in.err
	}

	return readHistory(ctx, in.db, name, limit)
}
