package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Record is one entry of a task's run history.
type Record struct {
	// Task is the task's name.
	Task string
	// JobID is set for enqueued jobs.
	JobID string
	// Fire is the scheduled instant.
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

// wireRecord is the JSON form of a Record in Redis, times in unix ms. The
// Lua scripts write the same shape.
type wireRecord struct {
	Task    string `json:"task"`
	JobID   string `json:"job,omitempty"`
	Fire    int64  `json:"fire"`
	Start   int64  `json:"start_ms"`
	End     int64  `json:"end_ms"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	Process string `json:"process"`
	Attempt int    `json:"attempt"`
}

// encode returns r's wire form, byte for byte what encoding/json writes for
// its wireRecord, without reflection: a burst of jobs encodes a record per
// ack that the history keeps.
func (r Record) encode() string {
	b := make([]byte, 0, 160+len(r.Error))
	b = append(b, `{"task":`...)
	b = appendJSONString(b, r.Task)
	if r.JobID != "" {
		b = append(b, `,"job":`...)
		b = appendJSONString(b, r.JobID)
	}
	b = append(b, `,"fire":`...)
	b = strconv.AppendInt(b, ms(r.Fire), 10)
	b = append(b, `,"start_ms":`...)
	b = strconv.AppendInt(b, ms(r.Start), 10)
	b = append(b, `,"end_ms":`...)
	b = strconv.AppendInt(b, ms(r.End), 10)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, string(r.Outcome))
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	b = append(b, `,"process":`...)
	b = appendJSONString(b, r.Process)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(r.Attempt), 10)
	b = append(b, '}')
	return string(b)
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// that needs no escape is copied, anything else is left to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func decodeRecord(s string) (Record, error) {
	var w wireRecord
	if err := json.Unmarshal([]byte(s), &w); err != nil {
		return Record{}, err
	}
	return Record{Task: w.Task, JobID: w.JobID, Fire: fromMS(w.Fire), Start: fromMS(w.Start), End: fromMS(w.End),
		Outcome: Outcome(w.Outcome), Error: w.Error, Process: w.Process, Attempt: w.Attempt}, nil
}

// History returns up to limit of the task's most recent run records,
// newest first (limit <= 0 means all that are kept). Records that do not
// decode are skipped.
func (s *Scheduler) History(ctx context.Context, task string, limit int) ([]Record, error) {
	return readHistory(ctx, s.rdb, s.keys, task, limit)
}

func readHistory(ctx context.Context, rdb redis.UniversalClient, k keys, task string, limit int) ([]Record, error) {
	stop := int64(limit) - 1
	if limit <= 0 {
		stop = -1
	}
	raw, err := rdb.LRange(ctx, k.History(task), 0, stop).Result()
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
