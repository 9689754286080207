package rdb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The stored formats that are not a whole hash or envelope: how a run, a
// lock, a lease and a job claim are named. Each is built and parsed here
// only; the Lua scripts that read them are in this package too.

// RunID names one run of a task: "<task>@<instant ms>". It is the run's
// field of the runs hash and its member of alive (and, for an older
// release's run, its member of the running set and the suffix of its lease
// key).
func RunID(task string, fireMS int64) string {
	return task + "@" + strconv.FormatInt(fireMS, 10)
}

// SkipRunID is the run id a claim passes for a fire it only records as
// skipped (it takes no lease).
func SkipRunID(task string) string { return task + "@skip" }

// ParseRunID splits a run id into its task and instant.
func ParseRunID(id string) (task string, fireMS int64, ok bool) { return cutInstant(id, '@') }

// cutInstant splits s at its last sep into what comes before and the
// instant (unix ms) after it.
func cutInstant(s string, sep byte) (string, int64, bool) {
	i := strings.LastIndexByte(s, sep)
	if i < 0 {
		return "", 0, false
	}
	ms, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return s[:i], ms, true
}

// LockValue is the value of lock:task:<key> while a run of the task holds
// it: "<process>|<instant ms>". A lock is released only by the holder of
// this value (compare-and-delete); the claim script builds the same value.
func LockValue(process string, fireMS int64) string {
	return process + "|" + strconv.FormatInt(fireMS, 10)
}

// ParseLockValue splits a lock value into its process and instant.
func ParseLockValue(v string) (process string, fireMS int64, ok bool) { return cutInstant(v, '|') }

// Lease is the value of a run's field of the runs hash (and of an older
// release's run:<id> key, which expired unless its process renewed it): who
// runs which instant of a task, since when (unix ms).
type Lease struct {
	Process string `json:"process"`
	Task    string `json:"task"`
	Fire    int64  `json:"fire"`
	Start   int64  `json:"start"`
}

// Encode returns the lease as stored, byte for byte what encoding/json
// writes for it, without reflection: every fire claimed encodes one.
func (l Lease) Encode() string {
	b := make([]byte, 0, 64+len(l.Process)+len(l.Task))
	b = append(b, `{"process":`...)
	b = appendJSONString(b, l.Process)
	b = append(b, `,"task":`...)
	b = appendJSONString(b, l.Task)
	b = append(b, `,"fire":`...)
	b = strconv.AppendInt(b, l.Fire, 10)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, l.Start, 10)
	b = append(b, '}')
	return string(b)
}

// ParseLease decodes a stored lease. One that is not this engine's (no
// task) is an error.
func ParseLease(s string) (Lease, error) {
	var l Lease
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return Lease{}, fmt.Errorf("run lease %q: %w", truncate(s, 100), err)
	}
	if l.Task == "" {
		return Lease{}, fmt.Errorf("run lease %q: no task", truncate(s, 100))
	}
	return l, nil
}

// ClaimID names one claim of jobs by a process: "<process>#<n>". It is the
// owner of every job the claim took (jobs:owner) and the member of the
// claim's lease (jobs:lease).
func ClaimID(process string, n uint64) string {
	return process + "#" + strconv.FormatUint(n, 10)
}

// ClaimProcess returns the process of a claim id.
func ClaimProcess(claim string) string {
	if i := strings.LastIndexByte(claim, '#'); i >= 0 {
		return claim[:i]
	}
	return claim
}

// OwnerValue is the value of a job's jobs:owner field while a claim has it
// in flight: "<claim id>|<due ms>", the claim and the queue score the job
// was claimed at, which a redelivery keeps as the job's first due
// (Keys.FirstDue) when the claim's lease expires. The claim script writes
// it (claimJobsScript); this is its Go spelling, for tests and tools.
func OwnerValue(claim string, dueMS int64) string {
	return claim + "|" + strconv.FormatInt(dueMS, 10)
}

// ParseOwner splits an OwnerValue into its claim and due time; a value
// without a due (a bare claim id, as written before the due was kept)
// returns the whole value as the claim and a due of 0.
func ParseOwner(v string) (claim string, dueMS int64) {
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return v, 0
	}
	d, err := strconv.ParseInt(v[i+1:], 10, 64)
	if err != nil || d < 0 || v[i+1] == '+' || v[i+1] == '-' {
		return v, 0
	}
	return v[:i], d
}

// HistoryBound is how much of a task's run history is kept: at most Records
// records, none older than Age.
type HistoryBound struct {
	Records int
	Age     time.Duration
}

// MS converts a time to unix milliseconds; the zero Time is 0.
func MS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMS converts unix milliseconds to a time; 0 is the zero Time.
func FromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
