package runtime

// Paging for operators at scale: a page of tasks (a scan of the task
// indexes: the tasks set, the queue, the unqueued set) or of one state's jobs (a rank range of its ZSET, or HSCAN of the jobs in
// flight), reading only the page's data. ListTasks and Jobs read them all.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// The bounds of a page's Limit.
const (
	// DefaultPageLimit is the Limit of a TaskQuery or JobQuery that sets
	// none.
	DefaultPageLimit = 50
	// MaxPageLimit is the largest Limit.
	MaxPageLimit = 1000
)

// pageBudget bounds the task keys (or job ids) one TaskPage (JobPage with
// a Type) examines while it filters: a sparse filter returns a short page
// with a NextCursor rather than read on.
const pageBudget = 20000

// maxScanStep bounds the COUNT of one scan step (SSCAN, ZSCAN or HSCAN) of
// a filtered page.
const maxScanStep = 1000

// ErrBadCursor is what TaskPage and JobPage wrap when the query's Cursor
// is not the NextCursor of a page: not a number, or (for tasks) one that
// names no task index.
var ErrBadCursor = errors.New("not the NextCursor of a page")

// TaskQuery selects a page of tasks for TaskPage.
type TaskQuery struct {
	// Cursor is the NextCursor of the previous page; "" starts.
	Cursor string
	// Limit is about how many tasks the page holds (see TaskPage): 1 to
	// MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// Match keeps the tasks whose name matches this Redis glob pattern
	// (*, ?, [abc], \ escapes; the MATCH of SSCAN and ZSCAN); "" keeps all.
	Match string
	// Status keeps the tasks with this status; "" keeps all.
	Status Status
	// Type keeps the tasks run by this registered type; "" keeps all.
	Type string
}

// TaskPage is one page of tasks.
type TaskPage struct {
	// Tasks are the page's tasks, sorted by name (the order across pages
	// is the indexes' scan order, not names').
	Tasks []TaskInfo
	// NextCursor continues after this page; "" when it is the last.
	NextCursor string
}

// TaskPage returns one page of tasks, reading only that page: it walks the
// task indexes from q.Cursor (the tasks set of declared tasks, then the
// queue, then the unqueued set, with SSCAN and ZSCAN, MATCH q.Match:
// rdb.ScanTaskNames) and reads the hashes of the tasks it keeps in one
// pipeline (with q.Status or q.Type, it reads the state fields of each
// step's tasks first, one pipeline a step, and the full hashes of those
// that pass). Following NextCursor from "" to "" visits every task that
// exists for the whole walk at least once, and, when the indexes do not
// grow or shrink meanwhile, exactly once (a task disabled or enabled again
// during the walk moves from one index to another and may be missed or
// listed twice).
//
// A page is not cut inside a scan step, so it may hold more than q.Limit
// tasks: a step returns about the COUNT asked (q.Limit, minus what the
// page has), and Redis returns a small collection, one kept as a
// listpack, whole in one step: a queue of up to 128 tasks (so a namespace
// of that many comes on one page), and from Redis 7.2 on a set of up to
// 128. It holds fewer when the
// walk ends, or when a filter is sparse: a page examines at most 20000
// task keys, then returns what it has with a NextCursor. Job types (which
// never fire) are not tasks.
func (in *Inspector) TaskPage(ctx context.Context, q TaskQuery) (TaskPage, error) {
	if in.err != nil {
		return TaskPage{}, in.err
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return TaskPage{}, fmt.Errorf("crontab: task page: %w", err)
	}
	if q.Status != "" && !q.Status.Valid() {
		return TaskPage{}, fmt.Errorf("crontab: task page: Status %q: want active, paused, disabled or empty (all)", q.Status)
	}
	var cursor uint64
	if q.Cursor != "" {
		if cursor, err = strconv.ParseUint(q.Cursor, 10, 64); err != nil || !rdb.TaskCursorValid(cursor) {
			return TaskPage{}, fmt.Errorf("crontab: task page: Cursor %q: %w (or empty, to start)", q.Cursor, ErrBadCursor)
		}
	}
	filter := q.Status != "" || q.Type != ""
	var names []string
	step := int64(max(limit, 10))
	for examined := int64(0); ; {
		batch, next, err := in.db.ScanTaskNames(ctx, cursor, q.Match, step)
		if err != nil {
			return TaskPage{}, fmt.Errorf("crontab: task page at cursor %d: %w", cursor, err)
		}
		cursor = next
		examined += step
		kept := batch
		if filter && len(batch) > 0 {
			if kept, err = in.filterTasks(ctx, batch, q.Status, q.Type); err != nil {
				return TaskPage{}, fmt.Errorf("crontab: task page: %w", err)
			}
		}
		names = append(names, kept...)
		if len(names) >= limit || cursor == 0 || examined >= pageBudget {
			break
		}
		// The next step asks for what the page still needs at the density
		// seen so far (a filter or MATCH keeps only some), within bounds.
		need := int64(limit - len(names))
		if len(names) == 0 {
			step = min(2*step, maxScanStep)
		} else {
			step = min(max(need*examined/int64(len(names)), 10), maxScanStep)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names) // a scan may return a key twice while a set is rehashed
	tasks, err := in.readTasks(ctx, names)
	if err != nil {
		return TaskPage{}, fmt.Errorf("crontab: task page: %w", err)
	}
	if filter { // the state read and the full read are not atomic
		tasks = slices.DeleteFunc(tasks, func(t TaskInfo) bool {
			return (q.Status != "" && t.Status != q.Status) || (q.Type != "" && t.Type != q.Type)
		})
	}
	page := TaskPage{Tasks: tasks}
	if cursor != 0 {
		page.NextCursor = strconv.FormatUint(cursor, 10)
	}
	return page, nil
}

// filterTasks keeps the tasks of names whose status and type are st and
// typ (each "" for any), from their state fields. A task whose hash is
// gone or corrupt is left out.
func (in *Inspector) filterTasks(ctx context.Context, names []string, st Status, typ string) ([]string, error) {
	reads, err := in.db.ReadTaskStates(ctx, names)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, r := range reads {
		if r.Missing || r.Err != nil {
			continue
		}
		if (st == "" || Status(r.State.Status) == st) && (typ == "" || r.State.Type == typ) {
			out = append(out, names[i])
		}
	}
	return out, nil
}

func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageLimit, nil
	case n < 0 || n > MaxPageLimit:
		return 0, fmt.Errorf("Limit %d: want 1 to %d, or 0 for %d", n, MaxPageLimit, DefaultPageLimit)
	}
	return n, nil
}

// JobQuery selects a page of one state's jobs for JobPage.
type JobQuery struct {
	// State is the jobs' state: pending, running or dead. Required.
	State JobState
	// Cursor is the NextCursor of the previous page; "" starts.
	Cursor string
	// Limit is how many jobs the page holds at most (running jobs: about
	// that many, see JobPage): 1 to MaxPageLimit; 0 means
	// DefaultPageLimit.
	Limit int
	// Type keeps the jobs of this job type; "" keeps all.
	Type string
}

// JobPage is one page of jobs.
type JobPage struct {
	// Jobs are the page's jobs, in the order of Jobs: pending ones by due
	// time, dead ones most recent first, running ones in HSCAN order.
	Jobs []JobInfo
	// NextCursor continues after this page; "" when it is the last.
	NextCursor string
}

// JobPage returns one page of one state's jobs, reading only that page's
// job data (one pipeline per step of at most q.Limit ids, more steps only
// with q.Type). Pending and dead pages are rank ranges of their ZSETs: the
// cursor is the rank the next page starts at, so a job that leaves the
// state before it shifts it (a page may then skip or repeat a job). Running
// pages are HSCAN steps of the jobs in flight, which may hold a few more
// than q.Limit. With q.Type, a page examines at most 20000 jobs, then
// returns what it has with a NextCursor.
func (in *Inspector) JobPage(ctx context.Context, q JobQuery) (JobPage, error) {
	if in.err != nil {
		return JobPage{}, in.err
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return JobPage{}, fmt.Errorf("crontab: job page: %w", err)
	}
	if q.State != JobPending && q.State != JobRunning && q.State != JobDead {
		return JobPage{}, fmt.Errorf("crontab: job page: State %q: want pending, running or dead", q.State)
	}
	var cursor uint64
	if q.Cursor != "" {
		if cursor, err = strconv.ParseUint(q.Cursor, 10, 64); err != nil {
			return JobPage{}, fmt.Errorf("crontab: job page: Cursor %q: %w (or empty, to start)", q.Cursor, ErrBadCursor)
		}
	}
	var page JobPage
	step := int64(limit)
	if q.Type != "" {
		step = min(max(step, 100), maxScanStep)
	}
	for examined := 0; ; {
		var refs []rdb.JobRef
		var next uint64
		switch q.State {
		case JobPending:
			refs, err = in.db.PendingJobs(ctx, int64(cursor), step)
		case JobDead:
			refs, err = in.db.DeadJobRefs(ctx, int64(cursor), step)
		case JobRunning:
			refs, next, err = in.db.RunningJobs(ctx, cursor, step)
		}
		if err != nil {
			return JobPage{}, fmt.Errorf("crontab: job page at cursor %d: %w", cursor, err)
		}
		examined += len(refs)
		jobs, err := in.readJobs(ctx, q.State, refs)
		if err != nil {
			return JobPage{}, fmt.Errorf("crontab: job page: %w", err)
		}
		if q.State == JobRunning {
			for _, j := range jobs {
				if q.Type == "" || j.Task == q.Type {
					page.Jobs = append(page.Jobs, j)
				}
			}
			cursor = next
			if cursor == 0 || len(page.Jobs) >= limit || examined >= pageBudget {
				break
			}
			continue
		}
		// Ranks: the page ends exactly after its limit-th job.
		byID := make(map[string]JobInfo, len(jobs))
		for _, j := range jobs {
			byID[j.ID] = j
		}
		used := 0
		for _, r := range refs {
			if len(page.Jobs) == limit {
				break
			}
			used++
			if j, ok := byID[r.ID]; ok && (q.Type == "" || j.Task == q.Type) {
				page.Jobs = append(page.Jobs, j)
			}
		}
		cursor += uint64(used)
		if int64(len(refs)) < step && used == len(refs) {
			cursor = 0 // the end
			break
		}
		if len(page.Jobs) >= limit || examined >= pageBudget {
			break
		}
	}
	if cursor != 0 {
		page.NextCursor = strconv.FormatUint(cursor, 10)
	}
	return page, nil
}

// MinuteStat is one minute's counts of the namespace's work, from the
// per-minute counters the finish of each batch of task runs and of job
// attempts adds to (they keep the last hour only).
type MinuteStat struct {
	// Minute is the minute's start (Redis server time).
	Minute time.Time
	// Fires counts the task runs that finished in the minute; Failed
	// those of them that failed or were abandoned.
	Fires, Failed int64
	// LagAvg and LagMax are the mean and the largest delay of their
	// starts after their scheduled instants (zero without fires).
	LagAvg, LagMax time.Duration
	// JobRuns counts the job attempts that finished in the minute (ok,
	// retried or dead); JobFailed those of them that failed.
	JobRuns, JobFailed int64
}

// MinuteStats returns the counts of the last 60 minutes, the current one
// last (it is still counting), oldest first. It reads one hash of at most
// 420 fields, whatever the number of tasks and jobs.
func (in *Inspector) MinuteStats(ctx context.Context) ([]MinuteStat, error) {
	if in.err != nil {
		return nil, in.err
	}
	now, err := in.db.Time(ctx)
	if err != nil {
		return nil, fmt.Errorf("crontab: minute stats: %w", err)
	}
	raw, err := in.db.ReadMinuteStats(ctx, ms(now))
	if err != nil {
		return nil, fmt.Errorf("crontab: minute stats: %w", err)
	}
	out := make([]MinuteStat, len(raw))
	for i, m := range raw {
		out[i] = MinuteStat{Minute: fromMS(m.Minute * 60000), Fires: m.Fires, Failed: m.Failed,
			LagMax: time.Duration(m.LagMaxMS) * time.Millisecond, JobRuns: m.JobRuns, JobFailed: m.JobFailed}
		if m.Fires > 0 {
			out[i].LagAvg = time.Duration(m.LagSumMS/m.Fires) * time.Millisecond
		}
	}
	return out, nil
}
