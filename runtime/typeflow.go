package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// TypeFlow is the flow control of a job type as operators see it: the
// limits that the live processes running it publish (each process passes
// its own registry's limits to the claim scripts), and their use now.
type TypeFlow struct {
	// Type is the job type's name.
	Type string
	// MaxRunning and Rate are its limits (zero: none), as the first live
	// process publishing it, in process id order, has them.
	MaxRunning int
	Rate       Rate
	// Priority is its priority (TaskConfig.Priority), as published with
	// the limits.
	Priority int
	// Processes counts the live processes that publish limits for it;
	// Disagree is true when they publish different ones (a deploy in
	// progress: each enforces its own on the jobs it claims).
	Processes int
	Disagree  bool
	// Running counts the running slots its processes hold now (jobs
	// running or about to start; a dead process's until its lease
	// expires, a finished job's until its process's next claim);
	// Starts its starts in the rate window now (the type's own window,
	// not those of RateKey keys).
	Running, Starts int64
}

// TypeFlow returns the flow control of the job type name, and false when
// no live process publishes limits for it (it has none, or no process
// that runs it is alive).
func (in *Inspector) TypeFlow(ctx context.Context, name string) (TypeFlow, bool, error) {
	if in.err != nil {
		return TypeFlow{}, false, in.err
	}
	_, live, err := in.liveProcesses(ctx)
	if err != nil {
		return TypeFlow{}, false, fmt.Errorf("crontab: type %q: %w", name, err)
	}
	f, ok, err := in.typeFlow(ctx, name, live)
	if err != nil {
		return TypeFlow{}, false, fmt.Errorf("crontab: type %q: %w", name, err)
	}
	return f, ok, nil
}

// liveProcesses returns the Redis time and the processes alive then (a
// heartbeat younger than the process TTL), in process id order.
func (in *Inspector) liveProcesses(ctx context.Context) (time.Time, []rdb.ProcessRead, error) {
	now, err := in.db.Time(ctx)
	if err != nil {
		return time.Time{}, nil, err
	}
	procs, _, err := in.db.ReadProcesses(ctx)
	if err != nil {
		return time.Time{}, nil, err
	}
	deadline := ms(now) - in.opts.processTTL.Milliseconds()
	procs = slices.DeleteFunc(procs, func(p rdb.ProcessRead) bool { return p.BeatMS < deadline })
	slices.SortFunc(procs, func(a, b rdb.ProcessRead) int { return strings.Compare(a.ID, b.ID) })
	return now, procs, nil
}

// typeFlow is TypeFlow of the live processes live (liveProcesses): the
// limits they publish for name, and, when some do, their use now (one
// rdb.JobFlow read).
func (in *Inspector) typeFlow(ctx context.Context, name string, live []rdb.ProcessRead) (TypeFlow, bool, error) {
	f := TypeFlow{Type: name}
	for _, p := range live {
		limits, err := rdb.ParseLimits(p.Hash[rdb.FieldLimits])
		if err != nil {
			return TypeFlow{}, false, fmt.Errorf("process %s: %w", p.ID, err)
		}
		for _, l := range limits {
			if l.Type != name {
				continue
			}
			r := Rate{N: l.RateN, Per: time.Duration(l.RatePerMS) * time.Millisecond}
			if f.Processes == 0 {
				f.MaxRunning, f.Rate, f.Priority = l.MaxRunning, r, l.Priority
			} else if l.MaxRunning != f.MaxRunning || r != f.Rate || l.Priority != f.Priority {
				f.Disagree = true
			}
			f.Processes++
		}
	}
	if f.Processes == 0 {
		return TypeFlow{}, false, nil
	}
	use, err := in.db.JobFlow(ctx, name, f.Rate.Per)
	if err != nil {
		return TypeFlow{}, false, err
	}
	f.Running, f.Starts = use.Running, use.Starts
	return f, true, nil
}

// FireSlotsRunning returns the runs in progress now that count against
// the max_running cap of the scheduled task t (as Task returns it): the
// runs of its type's tasks, or, for a run-time task with a cap of its own
// (TaskSpec.MaxRunning), its own runs, whose run lease has not passed; 0
// for a task without a cap.
func (in *Inspector) FireSlotsRunning(ctx context.Context, t TaskInfo) (int64, error) {
	if in.err != nil {
		return 0, in.err
	}
	if t.MaxRunning == 0 {
		return 0, nil
	}
	group := t.Type
	if ownFireSlots(t.Name, t.Type, t.MaxRunning) {
		group = rdb.FireSlotsOfTask(t.Name)
	}
	now, err := in.db.Time(ctx)
	if err != nil {
		return 0, fmt.Errorf("crontab: task %q: fire slots: %w", t.Name, err)
	}
	n, err := in.db.FireSlotsRunning(ctx, group, ms(now))
	if err != nil {
		return 0, fmt.Errorf("crontab: task %q: fire slots: %w", t.Name, err)
	}
	return n, nil
}
