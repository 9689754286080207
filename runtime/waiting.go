package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// WaitReason is why a due pending job is not claimed yet (Wait.Reason).
type WaitReason string

// The wait reasons, in the order ExplainWaiting tests them.
const (
	// WaitNoProcess: no live process runs the job's type (none registers
	// it, or every one that does is dead or limited by WithTasks to
	// others).
	WaitNoProcess WaitReason = "no process"
	// WaitMaxRunning: its type's max_running cap is full.
	WaitMaxRunning WaitReason = "max_running"
	// WaitRate: its type's rate window is full, or, for a job enqueued
	// with RateKey, its key's.
	WaitRate WaitReason = "rate"
	// WaitPriority: jobs of higher priorities are due (TaskConfig.Priority):
	// the claims take them first, weighted.
	WaitPriority WaitReason = "priority"
	// WaitDue: nothing above holds it; it waits for a free worker of a
	// process that runs its type (or for the next claim).
	WaitDue WaitReason = "due"
)

// Wait is why a due pending job waits (JobInfo.Waiting), as
// Inspector.ExplainWaiting finds it. The zero Wait is a job that is not
// due, or that was not looked at.
type Wait struct {
	// Reason is the first reason that holds the job.
	Reason WaitReason
	// Detail is the limit that holds it, with its use: "50/50" (running
	// and cap) for max_running; the rate, "100/1s", for rate, or
	// "key tenant-7 5/1m0s" for a rate key's window; for priority, the
	// job's priority and the due jobs of higher ones, "0 (1500 due
	// higher)"; "" otherwise.
	Detail string
}

// String is the reason and its detail: "max_running 50/50",
// "rate key tenant-7 5/1m0s", "no process", "due"; "" for the zero Wait.
func (w Wait) String() string {
	if w.Detail == "" {
		return string(w.Reason)
	}
	return string(w.Reason) + " " + w.Detail
}

// waitInput is what classifyWait knows of one due pending job.
type waitInput struct {
	job JobInfo
	// runs is true when some live process runs the job's type (or one
	// that does not publish the types it runs is alive).
	runs bool
	// flow is its type's TypeFlow: the limits the live processes publish
	// and their use (zero: none publishes limits for it).
	flow TypeFlow
	// keyStarts counts the starts in the window of the job's rate key (set
	// only when it has one and its type a rate).
	keyStarts int64
	// higherDue counts the due jobs of priorities above its type's (in
	// the indexes of the priorities live processes publish).
	higherDue int64
}

// waitChecks are the reasons a due pending job waits, each with the test
// that says whether it holds and the detail it shows, in the order the
// claim meets them: the first that holds is the job's reason; none, and
// it is WaitDue. A new reason is one entry here (with, if it needs them,
// its inputs in waitInput, read once per type in ExplainWaiting).
var waitChecks = []struct {
	reason WaitReason
	holds  func(w waitInput) (detail string, ok bool)
}{
	{WaitNoProcess, func(w waitInput) (string, bool) { return "", !w.runs }},
	{WaitMaxRunning, func(w waitInput) (string, bool) {
		f := w.flow
		return strconv.FormatInt(f.Running, 10) + "/" + strconv.Itoa(f.MaxRunning),
			f.MaxRunning > 0 && f.Running >= int64(f.MaxRunning)
	}},
	{WaitRate, func(w waitInput) (string, bool) {
		f := w.flow
		switch {
		case f.Rate.IsZero():
			return "", false
		case w.job.RateKey != "": // the key has the type's whole rate, instead of the type's window
			return "key " + w.job.RateKey + " " + f.Rate.String(), w.keyStarts >= int64(f.Rate.N)
		}
		return f.Rate.String(), f.Starts >= int64(f.Rate.N)
	}},
	{WaitPriority, func(w waitInput) (string, bool) {
		return strconv.Itoa(w.flow.Priority) + " (" + strconv.FormatInt(w.higherDue, 10) + " due higher)", w.higherDue > 0
	}},
}

// classifyWait returns why the due pending job of w waits.
func classifyWait(w waitInput) Wait {
	for _, c := range waitChecks {
		if detail, ok := c.holds(w); ok {
			return Wait{Reason: c.reason, Detail: detail}
		}
	}
	return Wait{Reason: WaitDue}
}

// WaitReasons returns every WaitReason, in the order ExplainWaiting tests
// them, WaitDue last: the label values of a metric by reason, say.
func WaitReasons() []WaitReason {
	out := make([]WaitReason, 0, len(waitChecks)+1)
	for _, c := range waitChecks {
		out = append(out, c.reason)
	}
	return append(out, WaitDue)
}

// ExplainWaiting sets the Waiting of each job of jobs (as Jobs returns
// them) that is pending and due at the Redis time now but not claimed:
// why it waits (see Wait and the WaitReason constants); the others' it
// leaves zero, as it does a job whose data does not decode (task "?"). The
// limits are those the live processes publish (TypeFlow), and a process
// runs a type when the task_names of its process hash name it.
//
// The work is bounded by the jobs given: one read of the Redis time and
// the processes, one rdb.JobFlow per type with limits among the due jobs,
// and one pipeline for the windows of their rate keys. It writes nothing;
// the use it reads is a moment's, and a claim may change it meanwhile.
func (in *Inspector) ExplainWaiting(ctx context.Context, jobs []JobInfo) error {
	if in.err != nil {
		return in.err
	}
	now, live, err := in.liveProcesses(ctx)
	if err != nil {
		return fmt.Errorf("crontab: jobs waiting: %w", err)
	}
	var due []int
	for i, j := range jobs {
		if j.State == JobPending && j.Task != "?" && !j.Due.After(now) {
			due = append(due, i)
		}
	}
	if len(due) == 0 {
		return nil
	}
	runsAny := false // a live process that does not say which types it runs
	runs := map[string]bool{}
	for _, p := range live {
		names, known := rdb.ParseTaskNames(p.Hash[rdb.FieldTaskNames])
		runsAny = runsAny || !known
		for _, n := range names {
			runs[n] = true
		}
	}
	flows := map[string]TypeFlow{}
	type key struct{ typ, key string }
	keyAt := map[key]int{}
	var windows []rdb.RateWindow
	for _, i := range due {
		j := jobs[i]
		f, seen := flows[j.Task]
		if !seen {
			if f, _, err = in.typeFlow(ctx, j.Task, live); err != nil {
				return wrapErr(err, "jobs waiting: type %q", j.Task)
			}
			flows[j.Task] = f
		}
		k := key{j.Task, j.RateKey}
		if _, ok := keyAt[k]; !ok && j.RateKey != "" && !f.Rate.IsZero() {
			keyAt[k] = len(windows)
			windows = append(windows, rdb.RateWindow{Type: j.Task, Key: j.RateKey, Per: f.Rate.Per})
		}
	}
	starts, err := in.db.RateKeyStarts(ctx, windows, ms(now))
	if err != nil {
		return fmt.Errorf("crontab: jobs waiting: rate keys: %w", err)
	}
	higher, err := in.dueAbove(ctx, live, now)
	if err != nil {
		return fmt.Errorf("crontab: jobs waiting: %w", err)
	}
	for _, i := range due {
		j := &jobs[i]
		w := waitInput{job: *j, runs: runsAny || runs[j.Task], flow: flows[j.Task]}
		w.higherDue = higher(w.flow.Priority)
		if at, ok := keyAt[key{j.Task, j.RateKey}]; ok {
			w.keyStarts = starts[at]
		}
		j.Waiting = classifyWait(w)
	}
	return nil
}

// dueAbove returns a function that counts the due jobs (at now) of the
// priorities above a given one, among the priorities the live processes
// publish with their limits (with 0, the default's), read in one pipeline
// of the level indexes; without any priority published, it counts 0.
func (in *Inspector) dueAbove(ctx context.Context, live []rdb.ProcessRead, now time.Time) (func(p int) int64, error) {
	set := map[int]bool{}
	for _, p := range live {
		limits, err := rdb.ParseLimits(p.Hash[rdb.FieldLimits])
		if err != nil {
			return nil, fmt.Errorf("process %s: %w", p.ID, err)
		}
		for _, l := range limits {
			if l.Priority != 0 {
				set[l.Priority] = true
			}
		}
	}
	if len(set) == 0 {
		return func(int) int64 { return 0 }, nil
	}
	set[0] = true
	levels := slices.Sorted(maps.Keys(set))
	due, err := in.db.LevelDue(ctx, levels, ms(now))
	if err != nil {
		return nil, err
	}
	return func(p int) int64 {
		var n int64
		for i, l := range levels {
			if l > p {
				n += due[i]
			}
		}
		return n
	}, nil
}
