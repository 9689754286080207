package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// Process roles: WithTasks limits a process to some of the registered
// tasks and job types, so that one build (one package of annotated types)
// runs as several fleets: say, a few processes that fire the periodic tasks
// and many that run the jobs. A process registers, declares, claims and
// runs only the tasks of its set; a run-time task (SetTask) counts by its
// type. Everything else in the namespace it leaves exactly as it is: the
// dispatcher passes over due tasks of other types without a record (they
// are left for the processes that run them), the job claim takes only jobs
// of its types (rdb.ClaimJobsOf), the instant split is among the live
// processes that run each fire's type (share.go), and the data-loss check
// registers only its own tasks again. The master's duties are the
// namespace's and need no task's code (abandoned runs, redelivery, the
// sweep), and a task of this build outside the set is still declared, so
// the master does not prune it while the build runs.

// WithTasks limits this process to the tasks and job types with these
// directive names (TaskConfig.Name); Scheduler. It registers, claims and
// runs only those, and a run-time task only if its type is one of them;
// the other tasks and jobs are left, untouched, to processes that run them
// (one build, started with different sets, gives e.g. a scheduler fleet and
// a worker fleet). The default runs every registered task. An empty list,
// a name given twice, or a name the registry lacks is an error from
// NewScheduler. A handler's own enqueues (a task's retry) may name any
// registered type.
func WithTasks(names ...string) Option {
	names = slices.Clone(names)
	return func(o *options) {
		seen := make(map[string]bool, len(names))
		for _, n := range names {
			if seen[n] {
				o.use("WithTasks", scopeScheduler, "task %q is given twice", n)
				return
			}
			seen[n] = true
		}
		if len(names) == 0 {
			o.use("WithTasks", scopeScheduler, "no task names")
			return
		}
		if o.tasksGiven {
			o.use("WithTasks", scopeScheduler, "given twice")
			return
		}
		o.use("WithTasks", scopeScheduler, "")
		o.tasks, o.tasksGiven = names, true
	}
}

// maxListedNames is how many registered names an unknown name's error
// lists.
const maxListedNames = 20

// runSet returns the registry of the tasks this process runs: all of
// reg's, or the WithTasks names of it. An unknown name is an error naming
// the option and the name.
func runSet(reg *Registry, o options) (*Registry, error) {
	if !o.tasksGiven {
		return reg, nil
	}
	run := NewRegistry()
	var unknown []string
	for _, n := range o.tasks {
		e := reg.Entry(n)
		if e == nil {
			unknown = append(unknown, n)
			continue
		}
		if err := run.Add(e.Config()); err != nil {
			return nil, fmt.Errorf("crontab: WithTasks: task %q: %w", n, err)
		}
	}
	if len(unknown) == 0 {
		return run, nil
	}
	var known []string
	for _, e := range reg.Entries() {
		known = append(known, fmt.Sprintf("%q", e.Config().Name))
	}
	quoted := make([]string, len(unknown))
	for i, n := range unknown {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	msg := fmt.Sprintf("crontab: WithTasks: %s not registered", strings.Join(quoted, ", "))
	switch {
	case len(known) == 0:
		msg += " (the registry is empty)"
	case len(known) <= maxListedNames:
		msg += " (registered: " + strings.Join(known, ", ") + ")"
	default:
		msg += fmt.Sprintf(" (%d tasks are registered)", len(known))
	}
	return nil, fmt.Errorf("%s", msg)
}

// runNames returns the names of the tasks and job types of reg, sorted.
func runNames(reg *Registry) []string {
	entries := reg.Entries()
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Config().Name
	}
	return names
}

// jobTypes returns the names this process claims jobs of: nil when it runs
// every registered task (it claims every job, and gives back one of a type
// it lacks, see jobRunner.releaseJob), else its WithTasks set (a task's
// retry is a job of the task's type).
func (e *engine) jobTypes() []string {
	if !e.opts.tasksGiven {
		return nil
	}
	return e.runTypes
}

// leftOut reports whether typ is a type of this build that WithTasks
// leaves out of this process: its tasks are another fleet's, not a
// mistake.
func (e *engine) leftOut(typ string) bool {
	return e.opts.tasksGiven && e.all.Entry(typ) != nil
}
