package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	crontab "github.com/gocrontab/crontab/runtime"
)

// jobKind is one job type of a job scenario: its registered name, its
// priority and its Go type (a registry wants one Go type per job type).
type jobKind struct {
	name     string
	priority int
	// job returns a job of the kind numbered n that reports to sink.
	job func(n int, sink runSink) crontab.TaskInterface
}

// benchJobP5 and benchJobP10 are benchJob under other Go types, for the
// priority scenario's job types.
type (
	benchJobP5  struct{ benchJob }
	benchJobP10 struct{ benchJob }
)

var (
	// kindPlain is the one job type of S1, S2, S4 and the limited S1.
	kindPlain = []jobKind{{name: jobType, job: func(n int, s runSink) crontab.TaskInterface { return &benchJob{N: n, sink: s} }}}
	// kindPriority are the job types of the priority backlog, lowest
	// priority first.
	kindPriority = []jobKind{
		{name: "bench p0", priority: 0, job: func(n int, s runSink) crontab.TaskInterface { return &benchJob{N: n, sink: s} }},
		{name: "bench p5", priority: 5, job: func(n int, s runSink) crontab.TaskInterface {
			return &benchJobP5{benchJob{N: n, sink: s}}
		}},
		{name: "bench p10", priority: 10, job: func(n int, s runSink) crontab.TaskInterface {
			return &benchJobP10{benchJob{N: n, sink: s}}
		}},
	}
	// kindFlat are kindPriority's Go types all at priority 0: the same
	// backlog claimed in due order, the priority scenario's reference.
	kindFlat = []jobKind{
		{name: "bench flat a", job: kindPriority[0].job},
		{name: "bench flat b", job: kindPriority[1].job},
		{name: "bench flat c", job: kindPriority[2].job},
	}
	// kindSets names the sets of kinds for the worker's -jobs flag.
	kindSets = map[string][]jobKind{"plain": kindPlain, "priority": kindPriority, "flat": kindFlat}
)

// workload is what a job scenario runs, and is named by in its output so
// that it can be rerun: its job types (job i is of kinds[i%len(kinds)]),
// the types' limits, and where the schedulers run.
type workload struct {
	kinds      []jobKind
	maxRunning int
	rate       crontab.Rate
	// procs is how many worker processes run the schedulers; 0 means one
	// scheduler in this process.
	procs     int
	withTasks bool
	// noHistory runs the worker processes with WithHistory(0, ...) (no
	// run record per job), as S6's -schedule-no-history runs its fires.
	noHistory bool
}

// registry returns the registry of w's job types, whose jobs report to sink.
func (w workload) registry(sink runSink) (*crontab.Registry, error) {
	reg := crontab.NewRegistry()
	for _, k := range w.kinds {
		if err := reg.Add(crontab.TaskConfig{Name: k.name, Timeout: time.Minute, MaxRunning: w.maxRunning, Rate: w.rate,
			Priority: k.priority, New: func() crontab.TaskInterface { return k.job(0, sink) }}); err != nil {
			return nil, fmt.Errorf("bench job type %q: %w", k.name, err)
		}
	}
	return reg, nil
}

func (w workload) typeNames() []string {
	names := make([]string, len(w.kinds))
	for i, k := range w.kinds {
		names[i] = k.name
	}
	return names
}

// kindSet is the name of w's kinds in kindSets.
func (w workload) kindSet() string {
	for name, ks := range kindSets {
		if len(ks) == len(w.kinds) && ks[0].name == w.kinds[0].name {
			return name
		}
	}
	panic("bench: workload kinds not in kindSets")
}

// workerArgs are the worker flags that run w's schedulers.
func (w workload) workerArgs() []string {
	args := []string{"-jobs", w.kindSet(), "-max-running", strconv.Itoa(w.maxRunning)}
	if !w.rate.IsZero() {
		args = append(args, "-rate", w.rate.String())
	}
	if w.withTasks {
		args = append(args, "-with-tasks")
	}
	if w.noHistory {
		args = append(args, "-no-history")
	}
	return args
}

// String names the workload: "1 type, 3 processes, max_running 50".
func (w workload) String() string {
	var b strings.Builder
	if len(w.kinds) == 1 {
		b.WriteString("1 type")
	} else {
		ps := make([]string, len(w.kinds))
		for i, k := range w.kinds {
			ps[i] = strconv.Itoa(k.priority)
		}
		fmt.Fprintf(&b, "%d types at priority %s", len(w.kinds), strings.Join(ps, ", "))
	}
	if w.procs == 0 {
		b.WriteString(", 1 scheduler in the bench process")
	} else {
		fmt.Fprintf(&b, ", %d processes", w.procs)
	}
	if w.maxRunning > 0 {
		fmt.Fprintf(&b, ", max_running %d", w.maxRunning)
	}
	if !w.rate.IsZero() {
		b.WriteString(", rate " + w.rate.String())
	}
	if w.withTasks {
		b.WriteString(", WithTasks")
	}
	if w.noHistory {
		b.WriteString(", no history")
	}
	return b.String()
}

// rateWatch is every start of a rated job type that its rate window held,
// as the claim counted it: scored with Redis server time at the claim.
type rateWatch struct {
	starts map[string]int64 // window member -> unix ms
	reads  int
	gap    int64 // the longest time between two reads, Redis ms
	err    error
}

// most is the most starts in any window of length per, on Redis time.
func (w *rateWatch) most(per time.Duration) int {
	s := make([]int64, 0, len(w.starts))
	for _, at := range w.starts {
		s = append(s, at)
	}
	return mostWithin(s, per.Milliseconds())
}

// watchRate reads the rate window of the job type typ every per/4, each
// read from the previous read's server time on, and keeps every start it
// sees, in rec's rate field; the function it returns stops it after one
// last read. It is called before the first job is due and stopped after the
// last one completed, so the first read precedes every claim and the last
// follows every claim.
//
// No start is missed while the reads are less than per apart (rateWatch.gap
// says whether they were): a start scored s (the claim's server time) stays
// in the window until a claim at now >= s+per trims it or the key expires,
// per after the latest claim that touched it (at or after s), so it is
// there at any server time in [s, s+per). RateStarts reads in one MULTI, so
// a claim is wholly before or after a read at server time t: one before has
// s <= t and one after has s >= t. Take reads at t1 < t2 with t2-t1 < per.
// A start after the read at t1 has s >= t1, and if it was before the read
// at t2 then s <= t2 < t1+per <= s+per: the read at t2, from t1 on, sees it.
func (e *env) watchRate(ctx context.Context, typ string, per time.Duration, rec *recorder) func() {
	w := &rateWatch{starts: map[string]int64{}}
	rec.rate = w
	r := rdb.New(e.admin, namespace)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(max(per/4, time.Millisecond))
		defer tick.Stop()
		from, last, final := int64(0), int64(0), false
		for {
			starts, now, err := r.RateStarts(ctx, typ, "", from)
			if err != nil {
				w.err = err
				return
			}
			for _, s := range starts {
				w.starts[s.Member] = s.AtMS
			}
			if w.reads > 0 {
				w.gap = max(w.gap, now-last)
			}
			w.reads++
			from, last = now, now
			if final {
				return
			}
			select {
			case <-done:
				final = true
			case <-tick.C:
			case <-ctx.Done():
				w.err = ctx.Err()
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// runBurstLimited runs S1 again with the job type's MaxRunning or Rate on
// LimitProcs worker processes, and reports the drain against the unlimited
// S1's and against the same burst on the same processes without limits, the most runs at once (from the handlers' start and end times of
// every process) and the most starts in any window (on Redis time at the
// claim, from the rate window).
func (e *env) runBurstLimited(ctx context.Context, n int, unlimited jobOutcome, details map[string]any) error {
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	// The same burst on the same worker processes without limits first:
	// the reference that separates the limits' cost from that of running
	// the schedulers as processes.
	free := workload{kinds: kindPlain, procs: max(e.cfg.LimitProcs, 1), withTasks: e.cfg.WithTasks}
	ref, _, err := e.runJobs(ctx, "S1 on worker processes", burstDue(n), "", free)
	if err != nil {
		return err
	}
	e.addCorrectness(fmt.Sprintf("S1 burst %d, %s", n, free), ref)
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	w := workload{kinds: kindPlain, maxRunning: e.cfg.MaxRunning, rate: e.cfg.Rate, procs: max(e.cfg.LimitProcs, 1), withTasks: e.cfg.WithTasks}
	o, rec, err := e.runJobs(ctx, "S1 limited", burstDue(n), "", w)
	if err != nil {
		return err
	}
	sc := fmt.Sprintf("S1 burst %d, %s", n, w)
	details["limited"] = o
	details["limited_workload"] = w.String()
	details["limited_reference"] = ref
	most := rec.mostAtOnce()
	e.logf("%s: drain %.0f jobs/s (unlimited %.0f, on the same processes %.0f), most at once %d", sc, o.DrainRate,
		unlimited.DrainRate, ref.DrainRate, most)
	e.add(sc, "drain rate", "jobs/s", o.DrainRate, &unlimited.DrainRate, false, nil)
	refRate := ref.DrainRate
	e.add(sc, "drain rate (baseline: same burst, same processes, no limits)", "jobs/s", o.DrainRate, &refRate, false, nil)
	if w.maxRunning > 0 {
		e.add(sc, "most runs at once (handlers)", "", float64(most), nil, true,
			&target{float64(w.maxRunning), fmt.Sprintf("<= %d", w.maxRunning)})
	}
	if !w.rate.IsZero() {
		rw := rec.rate
		if rw.err != nil {
			return fmt.Errorf("%s: watch the rate window: %w", sc, rw.err)
		}
		perMS := float64(w.rate.Per.Milliseconds())
		mostRedis, mostHandlers := rw.most(w.rate.Per), rec.mostInWindow(w.rate.Per)
		e.logf("%s: most starts in a window %d on Redis time at the claim (%d starts read in %d reads, at most %dms apart), %d on handler clocks",
			sc, mostRedis, len(rw.starts), rw.reads, rw.gap, mostHandlers)
		details["limited_rate_window"] = map[string]any{"most_starts": mostRedis, "starts_seen": len(rw.starts),
			"reads": rw.reads, "longest_gap_ms": rw.gap, "most_handler_starts": mostHandlers}
		e.add(sc, "most starts in a window (redis time at claim)", "", float64(mostRedis), nil, true,
			&target{float64(w.rate.N), fmt.Sprintf("<= %d per %v", w.rate.N, w.rate.Per)})
		e.add(sc, "starts seen in the window key", "", float64(len(rw.starts)), nil, false,
			&target{float64(n), fmt.Sprintf(">= %d", n)})
		e.add(sc, "longest gap between window reads", "ms", float64(rw.gap), nil, true,
			&target{perMS - 1, fmt.Sprintf("< %v", w.rate.Per)})
		e.add(sc, "most starts in a window (handler clocks)", "", float64(mostHandlers), nil, true, nil)
	}
	e.addCorrectness(sc, o)
	return nil
}

// burstDue is n instants, all the same, far enough ahead for n jobs to be
// enqueued before it.
func burstDue(n int) []int64 {
	at := time.Now().Add(leadFor(n)).UnixMilli()
	due := make([]int64, n)
	for i := range due {
		due[i] = at
	}
	return due
}

// priorityOutcome is what the priority backlog measured for one type.
type priorityOutcome struct {
	Type     string  `json:"type"`
	Priority int     `json:"priority"`
	Lag      dist    `json:"lag"`
	DoneMS   float64 `json:"last_end_after_due_ms"` // the type's last handler end
	Finished int     `json:"finished"`              // 1: the first type whose jobs all ran
}

// priorityOutcomes splits rec's runs by job type (job i is of
// kinds[i%len(kinds)]): each type's lag and last handler end, and the
// order in which the types finished, the earliest last end first.
func priorityOutcomes(rec *recorder, due []int64, kinds []jobKind) []priorityOutcome {
	out := make([]priorityOutcome, len(kinds))
	for k, kind := range kinds {
		o := rec.analyzeOf(due, false, func(i int) bool { return i%len(kinds) == k })
		last := int64(0)
		for i := k; i < rec.n; i += len(kinds) {
			last = max(last, rec.end[i].Load())
		}
		out[k] = priorityOutcome{Type: kind.name, Priority: kind.priority, Lag: o.Lag,
			DoneMS: msOf(time.Duration(last - due[k]*int64(time.Millisecond)))}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if out[a].DoneMS != out[b].DoneMS {
			if out[a].DoneMS < out[b].DoneMS {
				return -1
			}
			return 1
		}
		return 0
	})
	for rank, k := range order {
		out[k].Finished = rank + 1
	}
	return out
}

// runPriority is the mixed-priority backlog: PriorityJobs jobs of each of
// three job types at priority 0, 5 and 10, interleaved, all due at one
// instant, on LimitProcs worker processes; the drain of them all, and per
// priority the lag and the order in which the types finished.
func (e *env) runPriority(ctx context.Context, details map[string]any) error {
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	// The same backlog without priorities first: the reference drain.
	flat := workload{kinds: kindFlat, procs: max(e.cfg.LimitProcs, 1), withTasks: e.cfg.WithTasks}
	n := e.cfg.PriorityJobs * len(flat.kinds)
	ref, _, err := e.runJobs(ctx, "S1 backlog without priorities", burstDue(n), "", flat)
	if err != nil {
		return err
	}
	e.addCorrectness(fmt.Sprintf("S1 backlog %d x %d, %s", len(flat.kinds), e.cfg.PriorityJobs, flat), ref)
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	w := workload{kinds: kindPriority, procs: max(e.cfg.LimitProcs, 1), withTasks: e.cfg.WithTasks}
	due := burstDue(n)
	o, rec, err := e.runJobs(ctx, "S1 priorities", due, "", w)
	if err != nil {
		return err
	}
	sc := fmt.Sprintf("S1 backlog %d x %d, %s", len(w.kinds), e.cfg.PriorityJobs, w)
	per := priorityOutcomes(rec, due, w.kinds)
	details["priority"] = map[string]any{"workload": w.String(), "all": o, "types": per, "without_priorities": ref}
	refRate := ref.DrainRate
	e.add(sc, "drain rate (baseline: same backlog, no priorities)", "jobs/s", o.DrainRate, &refRate, false, nil)
	refCPU := ref.Cost.RedisCPUPerOp
	e.add(sc, "redis cpu per job (baseline: no priorities)", "µs", o.Cost.RedisCPUPerOp, &refCPU, true, nil)
	order := make([]string, len(per))
	for i := len(per) - 1; i >= 0; i-- {
		p := per[i]
		order[p.Finished-1] = strconv.Itoa(p.Priority)
		e.add(sc, fmt.Sprintf("priority %d lag p50", p.Priority), "ms", p.Lag.P50, nil, true, nil)
		e.add(sc, fmt.Sprintf("priority %d lag p99", p.Priority), "ms", p.Lag.P99, nil, true, nil)
		e.add(sc, fmt.Sprintf("priority %d last end after due", p.Priority), "ms", p.DoneMS, nil, true, nil)
		e.add(sc, fmt.Sprintf("priority %d finished (1: first)", p.Priority), "", float64(p.Finished), nil, true, nil)
	}
	note := fmt.Sprintf("%s: priorities finished in the order %s", sc, strings.Join(order, ", "))
	e.report.Notes = append(e.report.Notes, note)
	e.logf("%s; drain %.0f jobs/s", note, o.DrainRate)
	e.addCorrectness(sc, o)
	return nil
}
