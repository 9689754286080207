package bench

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/proccpu"
	crontab "github.com/gocrontab/crontab/runtime"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// tenantType is the registered task type of S6's run-time tasks.
const tenantType = "tenant"

// warmTenant is the key of the task S6 registers before it measures
// memory; it is not one of the tenants (tenantIndex) and is due later than
// the instant they are moved to.
const warmTenant = "s-warm"

// tenantKey is the key of S6's run-time task i.
func tenantKey(i int) string { return "s-" + strconv.Itoa(i) }

// tenantTask is the handler of S6's run-time tasks: it reports its run to
// the worker's line writer.
type tenantTask struct{ out *lineWriter }

// Handle writes "F <task> <fire unix ms> <start unix ns>".
func (t *tenantTask) Handle(ctx context.Context) error {
	start := time.Now().UnixNano()
	run, _ := crontab.Run(ctx)
	t.out.fire(run.Task, run.Fire.UnixMilli(), start)
	return nil
}

// tenantRegistry adds the tenant task type to reg, its runs reported to out
// (nil: a producer's registry, which only validates specs).
func tenantRegistry(reg *crontab.Registry, out *lineWriter) error {
	return reg.Add(crontab.TaskConfig{Name: tenantType, Timeout: time.Minute,
		New: func() crontab.TaskInterface { return &tenantTask{out: out} }})
}

// schedulesOutcome is what S6 measured: registering Schedules run-time
// tasks, the Redis memory they take, and the drain of one instant they
// all share on SchedProcs worker processes.
type schedulesOutcome struct {
	Tasks      int    `json:"tasks"`
	Procs      int    `json:"processes"`
	Expression string `json:"expression"`
	// Zones is how many IANA zones the tasks are spread over (daily:09:00
	// in zone i mod Zones), 0 for every:1h in UTC; WrongNext counts the
	// tasks whose next_run after the fire is not the next 09:00 of their
	// zone (must be 0).
	Zones     int `json:"zones,omitempty"`
	WrongNext int `json:"wrong_next,omitempty"`
	// JitterMS is the tasks' jitter (ms): task i is due at the instant
	// plus schedule.JitterOffset of its key; 0: all at the instant.
	JitterMS int64 `json:"jitter_ms,omitempty"`
	// Params: task i has the params {"tenant":i}, and BytesPerTask counts
	// them; false: no params, BytesPerTask is the bytes beyond params.
	Params bool `json:"params,omitempty"`
	// NoHistory: the workers kept no run history (-schedule-no-history).
	NoHistory    bool    `json:"no_history,omitempty"`
	RegisterRate float64 `json:"register_tasks_per_s"`
	// Registered is how the tasks were written: "SetTasks of 10000 x2"
	// (calls of 10,000 specs from 2 goroutines).
	Registered string `json:"registered_with"`
	// BytesPerTask is the growth of Redis's stored memory (INFO
	// used_memory less mem_clients_normal, the clients' buffers:
	// storedMemory) per task registered, after one warm-up task (the
	// scripts' first load is not a cost per task); UsedMemoryPerTask the growth of
	// used_memory itself, buffers of the registering connections included.
	BytesPerTask      float64 `json:"redis_bytes_per_task"`
	UsedMemoryPerTask float64 `json:"used_memory_per_task"`
	// BytesPerTaskFired is the memory per task once every task fired once
	// (its last result, its history).
	BytesPerTaskFired float64 `json:"redis_bytes_per_task_after_a_fire"`
	HashEncoding      string  `json:"task_hash_encoding"`
	Fired             int     `json:"fired"`
	Missed            int     `json:"missed"`
	Duplicates        int     `json:"duplicates"`
	Drain             float64 `json:"drain_ms"` // the instant to the last start
	FireRate          float64 `json:"fires_per_s"`
	Lag               dist    `json:"lag"`
	// Probe is the lag of an every:1s task's fires during the drain (the
	// instants after the one the tasks share).
	Probe     dist           `json:"probe_lag"`
	ByProcess map[string]int `json:"by_process"`
	Cost      cost           `json:"drain_cost_per_fire"`
	// WorkerCPU is the CPU time of the worker processes over the drain
	// (from the instant until the last fire, plus 500 ms), per fire, in µs.
	WorkerCPU float64 `json:"worker_cpu_us_per_fire"`
	// Reference is the side-by-side measure of job speed
	// (Config.ScheduleReference; nil when not run): as many delayed jobs
	// of S1's type, due at one instant, drained by as many worker
	// processes. ReferenceRate is its jobs over the time from their due
	// instant to the last start, as FireRate counts the fires.
	Reference     *jobOutcome `json:"reference_jobs,omitempty"`
	ReferenceRate float64     `json:"reference_jobs_per_s,omitempty"`
}

// runSchedules is S6: Schedules run-time tasks "every:1h" of one type,
// registered with Client.SetTasks, then moved to one
// instant (next_run and the queue score written directly, as the top of
// the hour would have them), drained by SchedProcs worker processes that
// also run an every:1s probe task.
func runSchedules(ctx context.Context, e *env) error {
	n, procs := e.cfg.Schedules, e.cfg.SchedProcs
	o := schedulesOutcome{Tasks: n, Procs: procs, Expression: "every:1h", Params: e.cfg.ScheduleParams,
		NoHistory: e.cfg.ScheduleNoHistory, ByProcess: map[string]int{}}
	var zones []string
	if e.cfg.ScheduleZones {
		var err error
		if zones, err = ianaZones(); err != nil {
			return err
		}
		o.Expression, o.Zones = "daily:09:00", len(zones)
	}
	reg := crontab.NewRegistry()
	if err := tenantRegistry(reg, nil); err != nil {
		return err
	}
	prod := redis.NewClient(e.srv.Options())
	defer prod.Close()
	c := crontab.NewClient(prod, reg, crontab.WithNamespace(namespace))

	// One task first, not counted: the first SetTasks loads its scripts
	// into Redis's script cache and creates the classes hash, about 330 KB
	// once (3.3 B a task at 100,000), which is not a cost per task.
	if _, err := c.SetTasks(ctx, []crontab.TaskSpec{{Key: warmTenant, Type: tenantType, Expression: o.Expression}}); err != nil {
		return fmt.Errorf("set the warm-up task: %w", err)
	}
	mem0, raw0 := storedMemory(ctx, e.admin), usedMemory(ctx, e.admin)
	jitter := e.cfg.ScheduleJitter
	o.JitterMS = jitter.Milliseconds()
	rate, how, err := registerTenants(ctx, c, n, o.Expression, zones, jitter, o.Params)
	if err != nil {
		return err
	}
	o.RegisterRate, o.Registered = rate, how
	mem1, raw1 := storedMemory(ctx, e.admin), usedMemory(ctx, e.admin)
	o.BytesPerTask = float64(mem1-mem0) / float64(n)
	o.UsedMemoryPerTask = float64(raw1-raw0) / float64(n)
	o.HashEncoding, _ = e.admin.ObjectEncoding(ctx, "{"+namespace+"}:task:"+tenantKey(0)).Result()
	e.logf("S6 %d tasks registered (%s): %.0f tasks/s, %.0f B/task %s (used_memory %.0f B/task with the clients' buffers), task hash %s",
		n, how, rate, o.BytesPerTask, paramsWords(o.Params), o.UsedMemoryPerTask, o.HashEncoding)

	f, err := e.newFleet()
	if err != nil {
		return err
	}
	defer f.stop()
	for i := range procs {
		args := []string{"-schedules"}
		if e.cfg.ScheduleNoHistory {
			args = append(args, "-no-history")
		}
		if e.cfg.CPUProfile != "" {
			args = append(args, "-cpuprofile", fmt.Sprintf("%s.s6w%d", e.cfg.CPUProfile, i))
		}
		if _, err := f.spawn(ctx, 1, args...); err != nil {
			return err
		}
	}
	// The instant: half past a second (the every:1s probe fires at whole
	// seconds, after it), at least 3 s ahead of Redis time, so the
	// processes prepare the claims of the instant as they would for any.
	now, err := e.admin.Time(ctx).Result()
	if err != nil {
		return err
	}
	at := now.Add(3*time.Second).Truncate(time.Second).UnixMilli() + 500 // between the probe's instants
	due := tenantInstants(n, at, jitter)
	if err := moveTenants(ctx, prod, due); err != nil {
		return err
	}
	for time.Now().UnixMilli() < at-200 {
		time.Sleep(10 * time.Millisecond)
	}
	u0, w0 := snapshot(ctx, e.admin), f.cpu()
	deadline := time.UnixMilli(at).Add(jitter + 30*time.Second + time.Duration(n/1000)*time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if countTenantFires(f, due) >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a duplicate would come now
	u1, w1 := snapshot(ctx, e.admin), f.cpu()
	fires, _ := f.snapshot()
	checkTenants(&o, fires, at, due)
	o.Cost = u0.to(u1, max(o.Fired, 1), 0, 0)
	o.WorkerCPU = float64((w1 - w0).Microseconds()) / float64(max(o.Fired, 1))
	if len(zones) > 0 {
		if o.WrongNext, err = checkZoneNexts(ctx, prod, n, zones, at); err != nil {
			return err
		}
	}
	mem2 := storedMemory(ctx, e.admin)
	o.BytesPerTaskFired = float64(mem2-mem0) / float64(n)
	e.report.Details["s6"] = o
	e.logf("S6 drain of %d fires at one instant%s on %d processes: %.0f ms (%.0f fires/s), lag %s; probe lag %s; missed %d, duplicates %d; %.0f B/task after a fire; by process %v",
		n, jitterWords(jitter), procs, o.Drain, o.FireRate, o.Lag, o.Probe, o.Missed, o.Duplicates, o.BytesPerTaskFired, o.ByProcess)
	if e.cfg.Verbose {
		e.logf("S6 drain: %s; worker processes cpu %.1fµs/fire", o.Cost, o.WorkerCPU)
	}
	var refRate, refP99 *float64
	if e.cfg.ScheduleReference {
		f.stop() // the tenants' workers: they do not run the jobs' type
		// The jobs keep a run history as the fires do (or none, with
		// -schedule-no-history).
		ref, _, err := e.runJobs(ctx, "S6 reference", burstDue(n), "",
			workload{kinds: kindPlain, procs: procs, noHistory: e.cfg.ScheduleNoHistory})
		if err != nil {
			return fmt.Errorf("S6 reference (%d delayed jobs on %d processes): %w", n, procs, err)
		}
		o.Reference = &ref
		if ref.Lag.Max > 0 {
			o.ReferenceRate = float64(ref.Jobs) / (ref.Lag.Max / 1000)
		}
		refRate, refP99 = ptr(o.ReferenceRate), ptr(ref.Lag.P99)
		e.logf("S6 reference: %d delayed jobs due at one instant on %d processes: %.0f jobs/s to the last start, lag %s; fires at %.2fx job speed",
			ref.Jobs, procs, o.ReferenceRate, ref.Lag, o.FireRate/max(o.ReferenceRate, 1))
		e.report.Notes = append(e.report.Notes, fmt.Sprintf("S6's baseline is job speed, measured side by side: %d delayed jobs of S1's type "+
			"due at one instant, drained by %d worker processes with the fires' history setting, counted as the fires are (the instant to the last start); "+
			"the ratio is the fires' rate over the jobs'. -schedule-reference=false skips it.", n, procs))
	}

	sc := fmt.Sprintf("S6 %d schedules %s, 1 instant%s, %d procs", n, o.Expression, jitterWords(jitter), procs)
	if e.cfg.ScheduleNoHistory {
		sc += ", no history"
	}
	e.add(sc, "register ("+how+")", "tasks/s", o.RegisterRate, nil, false, &target{100000, ">= 100000"})
	if o.Params {
		// The target is for the bytes beyond params: none for this figure.
		e.add(sc, "redis memory per task "+paramsWords(true), "B/task", o.BytesPerTask, nil, true, nil)
	} else {
		e.add(sc, "redis memory per task "+paramsWords(false), "B/task", o.BytesPerTask, nil, true, &target{300, "<= 300 B"})
	}
	e.add(sc, "  after one fire each", "B/task", o.BytesPerTaskFired, nil, true, nil)
	e.add(sc, "drain rate", "fires/s", o.FireRate, refRate, false, &target{100000, ">= 100000"})
	e.add(sc, "lag p50", "ms", o.Lag.P50, nil, true, nil)
	e.add(sc, "lag p99", "ms", o.Lag.P99, refP99, true, &target{1000, "<= 1000 ms"})
	e.add(sc, "probe every:1s lag max during the drain", "ms", o.Probe.Max, nil, true, &target{1000, "<= 1000 ms"})
	e.add(sc, "missed + duplicate fires", "", float64(o.Missed+o.Duplicates), nil, true, &target{0, "0"})
	if o.Reference != nil {
		e.addCorrectness(sc+", reference jobs", *o.Reference)
	}
	if len(zones) > 0 {
		e.add(sc, fmt.Sprintf("next_run not the zone's next 09:00 (%d zones)", len(zones)), "", float64(o.WrongNext), nil, true, &target{0, "0"})
	}
	return nil
}

// tenantSpec is the spec of S6's run-time task i: expr, in zone i mod
// len(zones) if any, with jitter, and with the params {"tenant":i} only if
// params (the handler needs none: tenantIndex reads i from the key).
func tenantSpec(i int, expr string, zones []string, jitter time.Duration, params bool) crontab.TaskSpec {
	spec := crontab.TaskSpec{Key: tenantKey(i), Type: tenantType, Expression: expr, Jitter: jitter}
	if params {
		spec.Params = map[string]int{"tenant": i}
	}
	if len(zones) > 0 {
		spec.TZ = zones[i%len(zones)]
	}
	return spec
}

// paramsWords names what S6's memory figure counts.
func paramsWords(params bool) string {
	if params {
		return `with params {"tenant":i}`
	}
	return "beyond params (none)"
}

// registerTenants writes n run-time tasks with Client.SetTasks, in calls
// of tenantChunk specs from 2 goroutines, and returns the rate and how.
func registerTenants(ctx context.Context, c *crontab.Client, n int, expr string, zones []string, jitter time.Duration, params bool) (float64, string, error) {
	const goroutines, tenantChunk = 2, 10000
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	t0 := time.Now()
	for range goroutines {
		wg.Go(func() {
			for {
				lo := int(next.Add(tenantChunk) - tenantChunk)
				if lo >= n {
					return
				}
				specs := make([]crontab.TaskSpec, 0, tenantChunk)
				for i := lo; i < min(lo+tenantChunk, n); i++ {
					specs = append(specs, tenantSpec(i, expr, zones, jitter, params))
				}
				if _, err := c.SetTasks(ctx, specs); err != nil {
					errs <- fmt.Errorf("set tasks %d to %d: %w", lo, lo+len(specs)-1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, "", err
	}
	return float64(n) / time.Since(t0).Seconds(), fmt.Sprintf("SetTasks of %d x%d", tenantChunk, goroutines), nil
}

// jitterWords names a jitter in a scenario's title ("" for none).
func jitterWords(jitter time.Duration) string {
	if jitter == 0 {
		return ""
	}
	return " + jitter " + jitter.String()
}

// tenantInstants is when each of the n tasks is due: the instant at (unix
// ms) plus its key's jitter offset, as its schedule would have it.
func tenantInstants(n int, at int64, jitter time.Duration) []int64 {
	due := make([]int64, n)
	for i := range due {
		due[i] = at + schedule.JitterOffset(tenantKey(i), jitter).Milliseconds()
	}
	return due
}

// moveTenants makes task i due at due[i] (unix ms): its next_run and queue
// score, pipelined.
func moveTenants(ctx context.Context, rdb *redis.Client, due []int64) error {
	const chunk = 5000
	n := len(due)
	for i := 0; i < n; i += chunk {
		pipe := rdb.Pipeline()
		for k := i; k < min(i+chunk, n); k++ {
			key := tenantKey(k)
			pipe.HSet(ctx, "{"+namespace+"}:task:"+key, "next_run", due[k])
			pipe.ZAdd(ctx, "{"+namespace+"}:queue", redis.Z{Score: float64(due[k]), Member: key})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("move tasks %d to %d to the instant: %w", i, min(i+chunk, n)-1, err)
		}
	}
	return nil
}

// cpu is the CPU time the fleet's processes used so far.
func (f *fleet) cpu() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var d time.Duration
	for _, p := range f.procs {
		d += proccpu.Of(p.cmd.Process.Pid)
	}
	return d
}

// countTenantFires counts the fires reported of tenant tasks at their
// instant, due[i] for task i.
func countTenantFires(f *fleet, due []int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := 0
	for _, l := range f.fires {
		if i, ok := tenantIndex(l.task, len(due)); ok && l.fireMS == due[i] {
			c++
		}
	}
	return c
}

// tenantIndex is i of the tenant task key "s-<i>", if it is one of n.
func tenantIndex(task string, n int) (int, bool) {
	rest, ok := strings.CutPrefix(task, "s-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0 && i < n
}

// checkTenants fills o from the fires the workers reported of each task i
// at its instant due[i] (the instant at plus its jitter offset), and the
// probe's during the drain; the drain is from at to the last start.
func checkTenants(o *schedulesOutcome, fires []fireLine, at int64, due []int64) {
	seen := make([]int, o.Tasks)
	var lags, probe []time.Duration
	var last int64
	for _, l := range fires {
		i, ok := tenantIndex(l.task, o.Tasks)
		if !ok || l.fireMS != due[i] {
			continue
		}
		seen[i]++
		o.ByProcess[l.proc]++
		lags = append(lags, l.lag())
		last = max(last, l.startNS)
	}
	for _, c := range seen {
		switch {
		case c == 0:
			o.Missed++
		case c > 1:
			o.Duplicates += c - 1
		}
		o.Fired += min(c, 1)
	}
	if last > 0 {
		o.Drain = msOf(time.Duration(last - at*int64(time.Millisecond)))
		o.FireRate = float64(o.Fired) / (o.Drain / 1000)
	}
	for _, l := range fires {
		if strings.HasPrefix(l.task, "tick-") && l.fireMS > at && l.fireMS <= at+int64(o.Drain)+1000 {
			probe = append(probe, l.lag())
		}
	}
	o.Lag, o.Probe = summarize(lags), summarize(probe)
}

// ianaZones lists the zones of Go's zoneinfo.zip, or else of the system's
// tzdata.zi, that load.
func ianaZones() ([]string, error) {
	var names []string
	if z, err := zip.OpenReader(filepath.Join(goruntime.GOROOT(), "lib", "time", "zoneinfo.zip")); err == nil {
		for _, f := range z.File {
			if !f.FileInfo().IsDir() && strings.Contains(f.Name, "/") && !strings.HasPrefix(f.Name, "Etc/") {
				names = append(names, f.Name)
			}
		}
		z.Close()
	}
	var zones []string
	for _, name := range names {
		if _, err := time.LoadLocation(name); err == nil {
			zones = append(zones, name)
		}
	}
	if len(zones) == 0 {
		return nil, errors.New("-schedule-zones: no zone list: neither $GOROOT/lib/time/zoneinfo.zip nor its zones load")
	}
	return zones, nil
}

// checkZoneNexts counts the tasks whose next_run, after the fire at the
// instant at, is not the first 09:00 of their zone after it.
func checkZoneNexts(ctx context.Context, rdb *redis.Client, n int, zones []string, at int64) (int, error) {
	locs := make([]*time.Location, len(zones))
	for i, z := range zones {
		locs[i], _ = time.LoadLocation(z)
	}
	wrong := 0
	const chunk = 5000
	for i := 0; i < n; i += chunk {
		pipe := rdb.Pipeline()
		cmds := make([]*redis.StringCmd, 0, chunk)
		for k := i; k < min(i+chunk, n); k++ {
			cmds = append(cmds, pipe.HGet(ctx, "{"+namespace+"}:task:"+tenantKey(k), "next_run"))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, fmt.Errorf("read next_run of tasks %d to %d: %w", i, min(i+chunk, n)-1, err)
		}
		for j, cmd := range cmds {
			ms, _ := cmd.Int64()
			loc := locs[(i+j)%len(zones)]
			next, from := time.UnixMilli(ms), time.UnixMilli(at)
			lt := next.In(loc)
			prev := time.Date(lt.Year(), lt.Month(), lt.Day()-1, 9, 0, 0, 0, loc)
			if lt.Hour() != 9 || lt.Minute() != 0 || !next.After(from) || next.Sub(from) > 25*time.Hour || prev.After(from) {
				wrong++
			}
		}
	}
	return wrong, nil
}
