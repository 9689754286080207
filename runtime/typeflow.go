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
	now, err := in.db.Time(ctx)
	if err != nil {
		return TypeFlow{}, false, fmt.Errorf("crontab: type %q: %w", name, err)
	}
	procs, _, err := in.db.ReadProcesses(ctx)
	if err != nil {
		return TypeFlow{}, false, fmt.Errorf("crontab: type %q: %w", name, err)
	}
	slices.SortFunc(procs, func(a, b rdb.ProcessRead) int { return strings.Compare(a.ID, b.ID) })
	deadline := ms(now) - in.opts.processTTL.Milliseconds()
	f := TypeFlow{Type: name}
	for _, p := range procs {
		if p.BeatMS < deadline {
			continue
		}
		limits, err := rdb.ParseLimits(p.Hash[rdb.FieldLimits])
		if err != nil {
			return TypeFlow{}, false, fmt.Errorf("crontab: type %q: process %s: %w", name, p.ID, err)
		}
		for _, l := range limits {
			if l.Type != name {
				continue
			}
			r := Rate{N: l.RateN, Per: time.Duration(l.RatePerMS) * time.Millisecond}
			if f.Processes == 0 {
				f.MaxRunning, f.Rate = l.MaxRunning, r
			} else if l.MaxRunning != f.MaxRunning || r != f.Rate {
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
		return TypeFlow{}, false, fmt.Errorf("crontab: type %q: %w", name, err)
	}
	f.Running, f.Starts = use.Running, use.Starts
	return f, true, nil
}
