package chaos

import (
	"fmt"
	"slices"
	"time"

	"github.com/gocrontab/crontab/internal/chaos/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

// Slack allowed between clocks that are one clock: the scheduler compares
// Redis TIME (ms) and the journals hold the same machine's wall clock (ns).
const earlySlack = 2 * time.Millisecond

// misfireThreshold mirrors the runtime's: a fire that starts more than this
// after its instant is a catch-up after downtime, and the task's misfire
// policy (once, the default) drops the instants between it and the claim
// without a record (runtime/doc.go, "After downtime ...").
const misfireThreshold = 5 * time.Second

// evidence is everything the checker reads.
type evidence struct {
	tasks     []crontab.TaskConfig
	events    []tasks.Event
	history   map[string][]crontab.Record // periodic task name -> records
	jobs      []jobState
	instances map[string]*instance
	px        *proxies
	// until is the last instant checked: a few seconds before the
	// graceful stop.
	until     time.Time
	leftovers []string
}

// run is one handler run read from the journals.
type run struct {
	start tasks.Event
	end   time.Time // the end line, or the process's exit when there is none
	ended bool      // an end line exists
	inst  *instance
}

// counts are the checker's figures for the summary.
type counts struct {
	// Instants of the periodic tasks, by what became of each.
	instants, runs, skipped, abandoned, failed, misfired int
	// ranAbandoned counts instants that ran and are recorded abandoned: the
	// run's process was judged dead (stopped or cut off past the TTL, or
	// killed) while the handler ran.
	ranAbandoned int
	// excused counts overlaps allowed by the documented limit of fencing.
	excused int

	jobsEnqueued, jobsUncertain, jobsCancelled, jobsCancelUncertain, jobsRan, jobsRedelivered int

	notes []string
}

// check asserts the soak's guarantees on ev and returns the violations.
func check(ev evidence) (counts, []string) {
	var c counts
	var bad []string
	violate := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	runs := pairRuns(ev)
	byTask := map[string][]*run{}
	byJob := map[string][]*run{}
	for _, r := range runs {
		if r.start.JobID != "" {
			byJob[r.start.JobID] = append(byJob[r.start.JobID], r)
		} else {
			byTask[r.start.Task] = append(byTask[r.start.Task], r)
		}
	}
	for _, cfg := range ev.tasks {
		if cfg.Expression == "" {
			continue
		}
		checkTask(ev, cfg, byTask[cfg.Name], &c, violate)
	}
	checkJobs(ev, byJob, &c, violate)
	for _, l := range ev.leftovers {
		violate("after the graceful stop: %s", l)
	}
	return c, bad
}

// pairRuns matches each start line with its end line.
func pairRuns(ev evidence) []*run {
	type key struct {
		task, job, process string
		fire               int64
		attempt            int
	}
	open := map[key]*run{}
	var out []*run
	for _, e := range ev.events {
		k := key{e.Task, e.JobID, e.Process, e.Fire.UnixMilli(), e.Attempt}
		switch e.Kind {
		case tasks.Start:
			r := &run{start: e, inst: ev.instances[e.Process]}
			open[k] = r
			out = append(out, r)
		case tasks.End:
			if r := open[k]; r != nil {
				r.end, r.ended = e.Wall, true
				delete(open, k)
			}
		}
	}
	for _, r := range out {
		if !r.ended {
			r.end = time.Now()
			if r.inst != nil {
				r.end = r.inst.end()
			}
		}
	}
	return out
}

// checkTask checks one periodic task: every instant from its first seen
// (plus 2 s) to ev.until ran once or is recorded skipped, abandoned or
// failed (or was dropped by the misfire policy after downtime); none ran
// twice or early; and, for a non-concurrent task, no two runs overlap
// unless one ran in a process that was stopped or cut off while it ran and
// was recorded abandoned: the documented limit of fencing (RELIABILITY.md,
// "A handler running in a stopped or partitioned process").
func checkTask(ev evidence, cfg crontab.TaskConfig, runs []*run, c *counts, violate func(string, ...any)) {
	sched, err := crontab.Parse(cfg.Expression, time.UTC)
	if err != nil {
		violate("task %s: %v", cfg.Name, err)
		return
	}
	starts := map[int64][]*run{}
	for _, r := range runs {
		starts[r.start.Fire.UnixMilli()] = append(starts[r.start.Fire.UnixMilli()], r)
		if r.start.Wall.Before(r.start.Fire.Add(-earlySlack)) {
			violate("task %s: instant %s started early, at %s (process %s)", cfg.Name, stamp(r.start.Fire), stamp(r.start.Wall), r.start.Process)
		}
	}
	recs := map[int64][]crontab.Record{}
	for _, rec := range ev.history[cfg.Name] {
		recs[rec.Fire.UnixMilli()] = append(recs[rec.Fire.UnixMilli()], rec)
	}
	// Catch-ups: instants in (fire, claim] were dropped by misfire=once.
	type gap struct{ from, to time.Time }
	var catchups []gap
	first := time.Time{}
	note := func(fire, start time.Time) {
		if first.IsZero() || fire.Before(first) {
			first = fire
		}
		if start.Sub(fire) > misfireThreshold {
			catchups = append(catchups, gap{fire, start})
		}
	}
	for _, r := range runs {
		note(r.start.Fire, r.start.Wall)
	}
	for _, rec := range ev.history[cfg.Name] {
		note(rec.Fire, rec.Start)
	}
	if first.IsZero() {
		violate("task %s never ran and has no history", cfg.Name)
		return
	}
	abandoned := func(fire int64) bool {
		for _, rec := range recs[fire] {
			if rec.Outcome == crontab.OutcomeAbandoned {
				return true
			}
		}
		return false
	}
	for i, n := sched.Next(first.Add(2*time.Second-time.Millisecond)), 0; !i.After(ev.until) && n < 10_000_000; i, n = sched.Next(i), n+1 {
		c.instants++
		ms := i.UnixMilli()
		rs := starts[ms]
		outcomes := map[crontab.Outcome]int{}
		for _, rec := range recs[ms] {
			outcomes[rec.Outcome]++
		}
		switch {
		case len(rs) > 1:
			violate("task %s: instant %s ran %d times: %s", cfg.Name, stamp(i), len(rs), describeRuns(rs))
		case len(rs) == 1:
			c.runs++
			if outcomes[crontab.OutcomeAbandoned] > 0 {
				c.ranAbandoned++
			}
			if outcomes[crontab.OutcomeSkipped] > 0 {
				violate("task %s: instant %s ran (process %s) and is recorded skipped", cfg.Name, stamp(i), rs[0].start.Process)
			}
		case outcomes[crontab.OutcomeSkipped] > 0:
			c.skipped++
		case outcomes[crontab.OutcomeAbandoned] > 0:
			c.abandoned++
		case outcomes[crontab.OutcomeFailed] > 0:
			c.failed++
		case slices.ContainsFunc(catchups, func(g gap) bool { return i.After(g.from) && !i.After(g.to) }):
			c.misfired++
		default:
			violate("task %s: instant %s neither ran nor is recorded in the history (%d records)", cfg.Name, stamp(i), len(recs[ms]))
		}
		if len(rs) == 1 && outcomes[crontab.OutcomeAbandoned] > 0 && !faulted(ev, rs[0], true) {
			c.notes = append(c.notes, fmt.Sprintf("task %s: instant %s recorded abandoned though process %s ran it with no fault of its own",
				cfg.Name, stamp(i), rs[0].start.Process))
		}
	}
	if cfg.Concurrent {
		return
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *run) int { return a.start.Wall.Compare(b.start.Wall) })
	for x, a := range sorted {
		for _, b := range sorted[x+1:] {
			if !b.start.Wall.Before(a.end) {
				break
			}
			unfenced := func(r *run) bool { return abandoned(r.start.Fire.UnixMilli()) && faulted(ev, r, false) }
			if unfenced(a) || unfenced(b) {
				c.excused++
				continue
			}
			violate("task %s (not concurrent): runs overlap: %s", cfg.Name, describeRuns([]*run{a, b}))
		}
	}
}

// faulted reports whether r's process was stopped or cut off from Redis
// while r ran (from its instant to its end), or, with killed, SIGKILLed.
func faulted(ev evidence, r *run, killed bool) bool {
	in := r.inst
	if in == nil {
		return false
	}
	if in.stoppedDuring(r.start.Fire, r.end) || ev.px != nil && ev.px.cutDuring(slotProxy(in.slot), r.start.Fire, r.end) {
		return true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return killed && in.signaled == string(KillWorker) && !r.ended
}

// checkJobs checks the jobs: every job enqueued and not cancelled completed
// at least once, none started before its due time, and none that Cancel
// removed ran.
func checkJobs(ev evidence, byJob map[string][]*run, c *counts, violate func(string, ...any)) {
	known := map[string]bool{}
	for _, j := range ev.jobs {
		known[j.id] = true
		rs := byJob[j.id]
		switch {
		case !j.enqueued:
			c.jobsUncertain++
		case j.cancelled:
			c.jobsCancelled++
		case j.cancelTried:
			c.jobsCancelUncertain++
		default:
			c.jobsEnqueued++
		}
		for _, r := range rs {
			if r.start.Wall.Before(j.due.Add(-earlySlack)) {
				violate("job %s due %s started early, at %s (process %s)", j.id, stamp(j.due), stamp(r.start.Wall), r.start.Process)
			}
		}
		completed := slices.ContainsFunc(rs, func(r *run) bool { return r.ended })
		if completed {
			c.jobsRan++
		}
		if len(rs) > 1 {
			c.jobsRedelivered++
		}
		switch {
		case j.cancelled && len(rs) > 0:
			violate("job %s was cancelled (Cancel returned nil) and ran: %s", j.id, describeRuns(rs))
		case j.enqueued && !j.cancelTried && !completed:
			violate("job %s due %s never completed (%d starts)", j.id, stamp(j.due), len(rs))
		}
	}
	for id, rs := range byJob {
		if !known[id] {
			violate("job %s ran but the producer never enqueued it: %s", id, describeRuns(rs))
		}
	}
}

func describeRuns(rs []*run) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "; "
		}
		end := "end " + stamp(r.end)
		if !r.ended {
			end = "no end line, process gone " + stamp(r.end)
		}
		s += fmt.Sprintf("process %s attempt %d start %s %s", r.start.Process, r.start.Attempt, stamp(r.start.Wall), end)
	}
	return s
}

// stamp formats t as UTC with milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }
