package chaos

import (
	"context"
	"errors"
	"fmt"
	"github.com/gocrontab/crontab/internal/rdb"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/chaos/tasks"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// Config configures a soak. The zero value of each field means its default.
type Config struct {
	// Seed fixes the fault plan (Plan) and the producer's choices. Which
	// process a planned worker fault hits, and the jobs' exact times,
	// still depend on timing.
	Seed uint64
	// Duration is how long faults are injected (default 60 s). Setup, the
	// drain after the faults and the graceful stop add about 20 s.
	Duration time.Duration
	// Workers is the number of worker processes (default 3, at least 2).
	Workers int
	// ProcessTTL is the workers' WithProcessTTL (default 3 s).
	ProcessTTL time.Duration
	// Self is the executable started as a worker with WorkerArg (default
	// os.Executable: a main or TestMain must call WorkerMain for it).
	Self string
	// Dir receives the journals and the worker and Redis logs, and is kept.
	// Default: a temporary directory, removed after a run without
	// violations.
	Dir string
	// Logf prints progress lines (default: none).
	Logf func(format string, args ...any)
}

// Report is the outcome of a soak.
type Report struct {
	Seed     uint64
	Duration time.Duration
	Workers  int
	// Dir holds the journals and logs ("" once removed).
	Dir string
	// Faults counts the faults injected, by kind; Skipped those the plan
	// had but that would have left no healthy worker.
	Faults  map[FaultKind]int
	Skipped int
	// StartFailures counts workers that exited before their scheduler
	// started (Redis unreachable), to be started again.
	StartFailures int
	counts
	// Violations are the broken guarantees, each with its evidence.
	Violations []string
}

// Run runs a soak: a private redis-server with AOF (appendfsync always),
// cfg.Workers worker processes and a producer, each behind its own
// toxiproxy proxy, and the faults of Plan; then a drain, a graceful stop and
// the checks. The error is for a harness that could not run; a guarantee
// broken is a Violation.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = time.Minute
	}
	if cfg.Workers == 0 {
		cfg.Workers = 3
	}
	if cfg.Workers < 2 {
		return nil, errors.New("chaos: at least 2 workers")
	}
	if cfg.ProcessTTL <= 0 {
		cfg.ProcessTTL = 3 * time.Second
	}
	if cfg.Self == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Self = self
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	keep := cfg.Dir != ""
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "crontabchaos")
		if err != nil {
			return nil, err
		}
		cfg.Dir = d
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, report: &Report{Seed: cfg.Seed, Duration: cfg.Duration, Workers: cfg.Workers, Dir: cfg.Dir,
		Faults: map[FaultKind]int{}}}
	h.t0 = time.Now()
	h.logf = func(format string, args ...any) {
		logf("%7.2fs  %s", time.Since(h.t0).Seconds(), fmt.Sprintf(format, args...))
	}
	err := h.run(ctx)
	if err == nil && len(h.report.Violations) == 0 && !keep {
		_ = os.RemoveAll(cfg.Dir)
		h.report.Dir = ""
	}
	return h.report, err
}

type harness struct {
	cfg    Config
	report *Report
	t0     time.Time
	logf   func(string, ...any)

	srv   *redistest.Server
	admin *redis.Client // straight to Redis
	px    *proxies
	fleet *fleet
}

func (h *harness) run(ctx context.Context) error {
	srv, err := redistest.Launch(redistest.WithAOF())
	if err != nil {
		return err
	}
	h.srv = srv
	defer func() {
		// Keep the server's log with the journals; Close removes its own.
		if b, err := os.ReadFile(srv.LogPath()); err == nil {
			_ = os.WriteFile(filepath.Join(h.cfg.Dir, "redis.log"), b, 0o644)
		}
		srv.Close()
	}()
	h.admin = redis.NewClient(srv.Options())
	defer h.admin.Close()
	h.logf("redis-server %s (pid %d), appendonly yes, appendfsync always; data and logs in %s", srv.Addr(), srv.PID(), h.cfg.Dir)

	names := []string{producerProxy}
	for i := range h.cfg.Workers {
		names = append(names, slotProxy(i))
	}
	if h.px, err = newProxies(srv.Addr(), names...); err != nil {
		return err
	}
	defer h.px.close()

	// History long enough for the whole run: 1 record per second per task.
	history := int((h.cfg.Duration+5*time.Minute)/time.Second) + 1000
	h.fleet = newFleet(h.cfg.Self, h.cfg.Dir, h.cfg.Workers, h.cfg.ProcessTTL, history, h.px, h.logf)
	defer h.fleet.killAll()
	for i := range h.cfg.Workers {
		if _, err := h.fleet.start(i); err != nil {
			return err
		}
	}
	if err := h.awaitWorkers(ctx); err != nil {
		return err
	}

	prdb := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(h.px.url(producerProxy), "redis://")})
	defer prdb.Close()
	prod := newProducer(prdb, h.cfg.Seed, h.logf)
	stopAt := time.Now().Add(h.cfg.Duration)
	prodEnd := stopAt.Add(-min(5*time.Second, h.cfg.Duration/4))
	pctx, stopProd := context.WithDeadline(ctx, prodEnd)
	defer stopProd()
	var producing sync.WaitGroup
	producing.Go(func() { prod.run(pctx) })

	plan := Plan(h.cfg.Seed, h.cfg.Duration, h.cfg.Workers, h.cfg.ProcessTTL)
	h.logf("faults for %v: %d planned (seed %d); the producer enqueues until %.1fs", h.cfg.Duration, len(plan), h.cfg.Seed,
		prodEnd.Sub(h.t0).Seconds())
	var lastFault time.Time
	for n, f := range plan {
		if !sleepUntil(ctx, time.Now().Add(f.Gap), stopAt) {
			break
		}
		if err := h.inject(n+1, f); err != nil {
			return err
		}
		lastFault = time.Now()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	sleepUntil(ctx, stopAt, stopAt)
	producing.Wait()
	h.logf("faults over: %s; draining", h.faultSummary())

	// Drain: every job due has time to run, and the runs of killed
	// processes are recorded abandoned (a process TTL, then the master's
	// round), before the graceful stop.
	drainMin := time.Now().Add(3 * h.cfg.ProcessTTL)
	if d := lastFault.Add(3 * h.cfg.ProcessTTL); d.After(drainMin) {
		drainMin = d
	}
	drainMax := time.Now().Add(60 * time.Second)
	for ctx.Err() == nil && time.Now().Before(drainMax) {
		if time.Now().After(drainMin) && h.jobsDone(prod) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	until := time.Now().Add(-3 * time.Second)
	h.logf("graceful stop of every worker (SIGTERM)")
	late := h.fleet.shutdown()

	ev := evidence{until: until, jobs: prod.snapshot(), px: h.px, instances: map[string]*instance{}}
	for _, id := range late {
		ev.leftovers = append(ev.leftovers, fmt.Sprintf("worker %s did not stop within %v of SIGTERM", id, gracePeriod+15*time.Second))
	}
	ev.leftovers = append(ev.leftovers, h.leftovers(ctx)...)
	if err := h.gather(ctx, &ev); err != nil {
		return err
	}
	c, bad := check(ev)
	h.report.counts = c
	h.report.Violations = append(append([]string(nil), h.fleet.runErrs...), bad...)
	h.report.StartFailures = h.fleet.startErrs
	return nil
}

// awaitWorkers waits (at most 30 s) until every worker heart-beats.
func (h *harness) awaitWorkers(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := h.admin.ZCard(ctx, rdb.NewKeys(Namespace).Processes()).Result()
		if err == nil && int(n) >= h.cfg.Workers {
			h.logf("%d workers heart-beating", n)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			var tails []string
			for _, in := range h.fleet.instances() {
				b, _ := os.ReadFile(in.log)
				tails = append(tails, in.id+": "+lastLines(string(b), 5))
			}
			return fmt.Errorf("chaos: %d of %d workers heart-beating after 30s (%v):\n%s", n, h.cfg.Workers, err, strings.Join(tails, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleepUntil sleeps until t (but not past limit) and reports whether it
// got there with ctx alive and t not past limit.
func sleepUntil(ctx context.Context, t, limit time.Time) bool {
	end := t
	if end.After(limit) {
		end = limit
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(end)):
	}
	return !t.After(limit)
}

// inject carries out fault n and returns when it is over (a killed or
// terminated worker is restarted in the background).
func (h *harness) inject(n int, f Fault) error {
	switch f.Kind {
	case KillWorker, StopWorker, TermWorker:
		in := h.pick(f.Target)
		if in == nil {
			h.report.Skipped++
			h.logf("fault %d: %s: skipped, it would leave no healthy worker", n, f)
			return nil
		}
		h.report.Faults[f.Kind]++
		h.logf("fault %d: %s -> process %s", n, f, in.id)
		switch f.Kind {
		case KillWorker:
			h.fleet.kill(in)
			h.fleet.restartAfter(in.slot, f.After)
		case StopWorker:
			h.fleet.stop(in, f.For)
		case TermWorker:
			if !h.fleet.term(in, string(TermWorker)) {
				h.report.Violations = append(h.report.Violations,
					fmt.Sprintf("worker %s did not stop within %v of SIGTERM", in.id, gracePeriod+15*time.Second))
			}
			h.fleet.restartAfter(in.slot, f.After)
		}
	case RestartRedis:
		h.report.Faults[f.Kind]++
		h.logf("fault %d: %s", n, f)
		h.srv.Kill()
		time.Sleep(f.For)
		if err := h.srv.Relaunch(); err != nil {
			return err
		}
		h.logf("redis-server back (pid %d)", h.srv.PID())
	case StallRedis:
		h.report.Faults[f.Kind]++
		h.logf("fault %d: %s", n, f)
		h.srv.Pause()
		time.Sleep(f.For)
		h.srv.Resume()
	case Latency:
		names := h.proxyNames(f.Target)
		h.report.Faults[f.Kind]++
		h.logf("fault %d: %s", n, f)
		if err := h.px.latency(names, f.Latency, f.Jitter); err != nil {
			return err
		}
		time.Sleep(f.For)
		h.px.clear(names)
	case Cut:
		name := producerProxy
		if f.Target != TargetProducer {
			in := h.pick(f.Target)
			if in == nil {
				h.report.Skipped++
				h.logf("fault %d: %s: skipped, it would leave no healthy worker", n, f)
				return nil
			}
			name = slotProxy(in.slot)
			h.logf("fault %d: %s -> proxy %s (process %s)", n, f, name, in.id)
		} else {
			h.logf("fault %d: %s", n, f)
		}
		h.report.Faults[f.Kind]++
		h.px.cut(name)
		time.Sleep(f.For)
		if err := h.px.restore(name); err != nil {
			return err
		}
	}
	return nil
}

// pick returns the instance a worker fault aimed at slot hits: that slot's,
// or the next healthy one's; nil when fewer than two are healthy.
func (h *harness) pick(slot int) *instance {
	healthy := h.fleet.healthy()
	if len(healthy) < 2 {
		return nil
	}
	for d := range h.cfg.Workers {
		s := (slot + d) % h.cfg.Workers
		if slices.Contains(healthy, s) {
			return h.fleet.current(s)
		}
	}
	return nil
}

func (h *harness) proxyNames(target int) []string {
	switch target {
	case TargetProducer:
		return []string{producerProxy}
	case TargetAll:
		names := []string{producerProxy}
		for i := range h.cfg.Workers {
			names = append(names, slotProxy(i))
		}
		return names
	}
	return []string{slotProxy(target)}
}

func (h *harness) faultSummary() string {
	var parts []string
	for _, k := range Kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, h.report.Faults[k]))
	}
	return strings.Join(parts, " ")
}

// jobsDone reports whether every job that must run has an end line.
func (h *harness) jobsDone(p *producer) bool {
	done := map[string]bool{}
	for _, in := range h.fleet.instances() {
		events, _, _ := tasks.Read(in.journal)
		for _, e := range events {
			if e.Kind == tasks.End && e.JobID != "" {
				done[e.JobID] = true
			}
		}
	}
	for _, j := range p.snapshot() {
		if j.enqueued && !j.cancelTried && !done[j.id] {
			return false
		}
	}
	return true
}

// leftovers lists what a graceful stop of every process must not leave
// behind: run leases, locks, job owners and claim leases.
func (h *harness) leftovers(ctx context.Context) []string {
	k := rdb.NewKeys(Namespace)
	var out []string
	report := func(what string, n int64, err error) {
		if err != nil {
			out = append(out, fmt.Sprintf("cannot read %s: %v", what, err))
		} else if n > 0 {
			out = append(out, fmt.Sprintf("%s: %d left", what, n))
		}
	}
	n, err := h.admin.HLen(ctx, k.Runs()).Result()
	report(k.Runs(), n, err)
	// An older release's running set and lease keys: this release writes
	// none, so any is a leftover too.
	n, err = h.admin.SCard(ctx, k.Running()).Result()
	report(k.Running(), n, err)
	for _, pattern := range []string{k.Run("*"), k.Lock("*"), k.Master()} {
		keys, err := h.admin.Keys(ctx, pattern).Result()
		report(pattern+" "+strings.Join(keys, ","), int64(len(keys)), err)
	}
	n, err = h.admin.HLen(ctx, k.Owners()).Result()
	report(k.Owners(), n, err)
	n, err = h.admin.ZCard(ctx, k.Leases()).Result()
	report(k.Leases(), n, err)
	return out
}

// gather reads the journals and the history.
func (h *harness) gather(ctx context.Context, ev *evidence) error {
	reg := crontab.NewRegistry()
	if err := tasks.Register(reg); err != nil {
		return err
	}
	ev.tasks = reg.Tasks()
	for _, in := range h.fleet.instances() {
		ev.instances[in.id] = in
		events, bad, err := tasks.Read(in.journal)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if bad > 0 {
			h.logf("journal of %s: %d unreadable lines (a line cut by SIGKILL)", in.id, bad)
		}
		ev.events = append(ev.events, events...)
	}
	client := crontab.NewInspector(h.admin, crontab.WithNamespace(Namespace))
	ev.history = map[string][]crontab.Record{}
	for _, cfg := range ev.tasks {
		if cfg.Expression == "" {
			continue
		}
		recs, err := client.History(ctx, cfg.Name, 0)
		if err != nil {
			return err
		}
		ev.history[cfg.Name] = recs
	}
	return nil
}

// String is the summary table.
func (r *Report) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "seed\t%d\n", r.Seed)
	fmt.Fprintf(w, "duration\t%v\n", r.Duration)
	fmt.Fprintf(w, "workers\t%d\n", r.Workers)
	total := 0
	for _, k := range Kinds {
		fmt.Fprintf(w, "faults %s\t%d\n", k, r.Faults[k])
		total += r.Faults[k]
	}
	fmt.Fprintf(w, "faults total\t%d (%d skipped: no healthy worker to spare)\n", total, r.Skipped)
	fmt.Fprintf(w, "worker start failures\t%d\n", r.StartFailures)
	fmt.Fprintf(w, "instants checked\t%d\n", r.instants)
	fmt.Fprintf(w, "  ran once\t%d\n", r.runs)
	fmt.Fprintf(w, "    of which recorded abandoned (process judged dead mid-run)\t%d\n", r.ranAbandoned)
	fmt.Fprintf(w, "  skipped (recorded)\t%d\n", r.skipped)
	fmt.Fprintf(w, "  abandoned before the handler started (recorded)\t%d\n", r.abandoned)
	fmt.Fprintf(w, "  failed (recorded)\t%d\n", r.failed)
	fmt.Fprintf(w, "  dropped by misfire after downtime\t%d\n", r.misfired)
	fmt.Fprintf(w, "overlaps of a stopped or cut-off run recorded abandoned\t%d\n", r.excused)
	fmt.Fprintf(w, "jobs enqueued\t%d\n", r.jobsEnqueued+r.jobsCancelled+r.jobsCancelUncertain)
	fmt.Fprintf(w, "  enqueue uncertain (error)\t%d\n", r.jobsUncertain)
	fmt.Fprintf(w, "  cancelled\t%d\n", r.jobsCancelled)
	fmt.Fprintf(w, "  cancel uncertain (error)\t%d\n", r.jobsCancelUncertain)
	fmt.Fprintf(w, "  ran (completed)\t%d\n", r.jobsRan)
	fmt.Fprintf(w, "  started more than once\t%d\n", r.jobsRedelivered)
	fmt.Fprintf(w, "violations\t%d\n", len(r.Violations))
	_ = w.Flush()
	for _, n := range r.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "VIOLATION: %s\n", v)
	}
	if r.Dir != "" {
		fmt.Fprintf(&b, "journals and logs: %s\n", r.Dir)
	}
	return b.String()
}
