package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// Record is one entry of a task's run history.
type Record struct {
	// Task is the task's name.
	Task string
	// JobID is set for enqueued jobs.
	JobID string
	// Fire is the scheduled instant (RunInfo.Fire: a job's first due time, the
	// same on every attempt).
	Fire time.Time
	// Start and End bound the handler's run (Redis server time); both equal
	// the claim time for a skipped fire.
	Start, End time.Time
	// Outcome is how the run ended.
	Outcome Outcome
	// Error is the handler's error, or why the fire was skipped or abandoned.
	Error string
	// Process is the id of the process that ran (or skipped) it.
	Process string
	// Attempt counts from 1; 0 for a skipped fire.
	Attempt int
}

// encode returns r as stored (rdb.Record).
func (r Record) encode() string { return r.wire().Encode() }

// wire is r in its stored form, times in unix ms.
func (r Record) wire() rdb.Record {
	return rdb.Record{Task: r.Task, JobID: r.JobID, Fire: ms(r.Fire), Start: ms(r.Start), End: ms(r.End),
		Outcome: string(r.Outcome), Error: r.Error, Process: r.Process, Attempt: r.Attempt}
}

func decodeRecord(s string) (Record, error) {
	w, err := rdb.DecodeRecord(s)
	if err != nil {
		return Record{}, err
	}
	return Record{Task: w.Task, JobID: w.JobID, Fire: fromMS(w.Fire), Start: fromMS(w.Start), End: fromMS(w.End),
		Outcome: Outcome(w.Outcome), Error: w.Error, Process: w.Process, Attempt: w.Attempt}, nil
}

// History returns up to limit of the task's most recent run records,
// newest first (limit <= 0 means all that are kept). Records that do not
// decode are skipped.
func (s *Scheduler) History(ctx context.Context, task string, limit int) ([]Record, error) {
	return readHistory(ctx, s.db, task, limit)
}

func readHistory(ctx context.Context, db *rdb.RDB, task string, limit int) ([]Record, error) {
	raw, err := db.History(ctx, task, limit)
	if err != nil {
		return nil, fmt.Errorf("crontab: read history of %q: %w", task, err)
	}
	out := make([]Record, 0, len(raw))
	for _, r := range raw {
		if rec, err := decodeRecord(r); err == nil {
			out = append(out, rec)
		}
	}
	return out, nil
}
