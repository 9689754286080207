package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

// namespace is the key namespace of the scheduler under test.
const namespace = "bench"

// jobType is the registered name of benchJob.
const jobType = "bench job"

// benchJob is the job of S1, S2 and S4: it reports its run to sink.
type benchJob struct {
	N    int `json:"n"`
	sink runSink
}

// Handle reports the run: its start, its end and its scheduled instant.
func (j *benchJob) Handle(ctx context.Context) error {
	start := time.Now()
	j.sink.ran(j.N, start, time.Now(), crontab.FireTime(ctx))
	return nil
}

// runSink receives the runs of numbered bench jobs: the recorder in this
// process, a worker's stdout in a worker process.
type runSink interface {
	ran(n int, start, end, fire time.Time)
}

// recorder collects the runs of n numbered jobs and tells when all of them
// completed. It is the Listener of the scheduler under test.
type recorder struct {
	n      int
	start  []atomic.Int64 // handler start, unix ns, of the first run
	end    []atomic.Int64 // handler end, unix ns, of the first run
	fire   []atomic.Int64 // scheduled instant the scheduler reported, unix ns
	runs   []atomic.Int32
	bad    atomic.Int64 // runs of a number outside 0..n-1
	done   atomic.Int64
	doneAt atomic.Int64 // unix ns of the latest completion
	all    chan struct{}
	once   sync.Once
	// rate is what the watch of the rate window saw (runs of a rated
	// type only; see env.watchRate).
	rate *rateWatch
}

// mostInWindow returns the most handler starts in any window of length d.
func (r *recorder) mostInWindow(d time.Duration) int {
	s := make([]int64, 0, r.n)
	for i := range r.n {
		if v := r.start[i].Load(); v != 0 {
			s = append(s, v)
		}
	}
	return mostWithin(s, int64(d))
}

// mostWithin returns the most of the instants s (sorted here) in any
// half-open window of length d: (t-d, t].
func mostWithin(s []int64, d int64) int {
	slices.Sort(s)
	most, lo := 0, 0
	for hi := range s {
		for s[hi]-s[lo] >= d {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// mostAtOnce returns the most handlers running at once, from the start
// and end of every run (one clock: every process is on this machine). A run
// that ends at the instant another starts does not overlap it.
func (r *recorder) mostAtOnce() int {
	type edge struct {
		at int64
		d  int
	}
	edges := make([]edge, 0, 2*r.n)
	for i := range r.n {
		if s, e := r.start[i].Load(), r.end[i].Load(); s != 0 {
			edges = append(edges, edge{s, 1}, edge{max(e, s), -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return a.d - b.d // ends first
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.d
		most = max(most, now)
	}
	return most
}

func newRecorder(n int) *recorder {
	return &recorder{n: n, start: make([]atomic.Int64, n), end: make([]atomic.Int64, n), fire: make([]atomic.Int64, n),
		runs: make([]atomic.Int32, n), all: make(chan struct{})}
}

func (r *recorder) ran(i int, start, end, fire time.Time) {
	r.record(i, start.UnixNano(), end.UnixNano(), fire.UnixNano())
}

// record counts a run of job i (times in unix ns); only the first run's
// times are kept.
func (r *recorder) record(i int, start, end, fire int64) {
	if i < 0 || i >= r.n {
		r.bad.Add(1)
		return
	}
	if r.runs[i].Add(1) == 1 {
		r.start[i].Store(start)
		r.end[i].Store(end)
		r.fire[i].Store(fire)
	}
}

// OnComplete counts completed jobs (the scheduler tells listeners after
// the ack is written); runs of scheduled tasks are not counted.
func (r *recorder) OnComplete(_ context.Context, res crontab.Result) {
	if res.JobID != "" {
		r.completed(time.Now().UnixNano())
	}
}

// completed counts one completion at the instant at (unix ns); doneAt is
// the latest, as worker processes report theirs out of order.
func (r *recorder) completed(at int64) {
	for d := r.doneAt.Load(); at > d && !r.doneAt.CompareAndSwap(d, at); d = r.doneAt.Load() {
	}
	if r.done.Add(1) == int64(r.n) {
		r.once.Do(func() { close(r.all) })
	}
}

// wait waits until all n completed, or fails after timeout.
func (r *recorder) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case <-r.all:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("only %d of %d jobs completed within %v", r.done.Load(), r.n, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jobOutcome is what a burst or spread run measured.
type jobOutcome struct {
	Jobs         int     `json:"jobs"`
	Lag          dist    `json:"lag"`
	Early        int     `json:"early"`
	Missing      int     `json:"missing"`
	Duplicates   int     `json:"duplicates"`
	WrongFire    int     `json:"wrong_fire"` // runs whose reported instant is not the planned one
	DrainRate    float64 `json:"drain_jobs_per_s,omitempty"`
	FirstStartMS float64 `json:"first_start_after_due_ms,omitempty"`
	AllDoneMS    float64 `json:"all_done_after_due_ms,omitempty"`
	EnqueueRate  float64 `json:"enqueue_jobs_per_s"`
	Cost         cost    `json:"cost"`
}

// analyze compares the recorded runs with the planned instants (unix ms).
func (r *recorder) analyze(due []int64, checkFire bool) jobOutcome {
	return r.analyzeOf(due, checkFire, nil)
}

// analyzeOf is analyze of the jobs i for which of(i) holds (nil: all).
func (r *recorder) analyzeOf(due []int64, checkFire bool, of func(i int) bool) jobOutcome {
	var o jobOutcome
	lags := make([]time.Duration, 0, r.n)
	first, last := int64(0), int64(0)
	for i := range r.n {
		if of != nil && !of(i) {
			continue
		}
		o.Jobs++
		switch n := r.runs[i].Load(); {
		case n == 0:
			o.Missing++
			continue
		case n > 1:
			o.Duplicates += int(n - 1)
		}
		start := r.start[i].Load()
		lag := time.Duration(start - due[i]*int64(time.Millisecond))
		if lag < 0 {
			o.Early++
		}
		if checkFire && r.fire[i].Load() != due[i]*int64(time.Millisecond) {
			o.WrongFire++
		}
		lags = append(lags, lag)
		if first == 0 || start < first {
			first = start
		}
		last = max(last, start)
	}
	o.Lag = summarize(lags)
	return o
}

// started is a scheduler running in this process.
type started struct {
	s      *crontab.Scheduler
	rdb    *redis.Client
	count  *counter
	cancel context.CancelFunc
	done   chan error
}

// startScheduler runs a scheduler for reg in this process and returns once
// it has registered (its heartbeat is in Redis).
func (e *env) startScheduler(ctx context.Context, reg *crontab.Registry, opts ...crontab.Option) (*started, error) {
	rdb, cnt := e.client()
	base := []crontab.Option{crontab.WithNamespace(namespace), crontab.WithLogger(nil), crontab.WithGracePeriod(10 * time.Second)}
	// 0 means the runtime's default: the options refuse 0 itself.
	if e.cfg.Workers > 0 {
		base = append(base, crontab.WithWorkers(e.cfg.Workers))
	}
	if e.cfg.Batch > 0 {
		base = append(base, crontab.WithBatch(e.cfg.Batch))
	}
	opts = append(base, opts...)
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	st := &started{s: s, rdb: rdb, count: cnt, cancel: cancel, done: make(chan error, 1)}
	go func() { st.done <- s.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.admin.ZScore(ctx, "{"+namespace+"}:processes", s.ID()).Result(); err == nil {
			time.Sleep(100 * time.Millisecond) // registration and the first claim follow the heartbeat
			return st, nil
		}
		select {
		case err := <-st.done:
			rdb.Close()
			return nil, fmt.Errorf("scheduler stopped at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			st.stop()
			return nil, errors.New("scheduler did not start within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (st *started) stop() error {
	st.cancel()
	err := <-st.done
	st.rdb.Close()
	return err
}

func jobRegistry(rec *recorder) (*crontab.Registry, error) {
	return workload{kinds: kindPlain}.registry(rec)
}

// enqueueOurs enqueues job i, of the kind kinds[i%len(kinds)], at due[i]
// (unix ms) with EnqueueMany, in chunks, and returns the rate.
func (e *env) enqueueOurs(ctx context.Context, reg *crontab.Registry, due []int64, kinds []jobKind, chunk int) (float64, error) {
	rdb := redis.NewClient(e.srv.Options())
	defer rdb.Close()
	c := crontab.NewClient(rdb, reg, crontab.WithNamespace(namespace))
	t0 := time.Now()
	jobs := make([]crontab.Job, 0, chunk)
	for i := 0; i < len(due); i += chunk {
		jobs = jobs[:0]
		for k := i; k < min(i+chunk, len(due)); k++ {
			jobs = append(jobs, crontab.Job{Value: kinds[k%len(kinds)].job(k, nil), Options: []crontab.EnqueueOption{crontab.At(time.UnixMilli(due[k]))}})
		}
		if _, err := c.EnqueueMany(ctx, jobs); err != nil {
			return 0, fmt.Errorf("enqueue jobs %d to %d: %w", i, min(i+chunk, len(due))-1, err)
		}
	}
	return float64(len(due)) / time.Since(t0).Seconds(), nil
}

// runJobsOurs runs one scheduler, in this process, on jobs of the one
// bench job type due at due[i] and measures them.
func (e *env) runJobsOurs(ctx context.Context, name string, due []int64, profile string) (jobOutcome, error) {
	o, _, err := e.runJobs(ctx, name, due, profile, workload{kinds: kindPlain})
	return o, err
}

// runJobs runs the workload w on jobs due at due[i]: its schedulers (in
// this process, or w.procs worker processes that report every run on their
// stdout), then drainJobs; it also returns the recorder.
func (e *env) runJobs(ctx context.Context, name string, due []int64, profile string, w workload) (jobOutcome, *recorder, error) {
	rec := newRecorder(len(due))
	reg, err := w.registry(rec)
	if err != nil {
		return jobOutcome{}, nil, err
	}
	w.withTasks = e.cfg.WithTasks
	if w.withTasks {
		e.logf("%s: the schedulers run WithTasks(%q)", name, w.typeNames())
	}
	var count *counter
	if w.procs == 0 {
		opts := []crontab.Option{crontab.WithListener(rec)}
		if w.withTasks {
			opts = append(opts, crontab.WithTasks(w.typeNames()...))
		}
		st, err := e.startScheduler(ctx, reg, opts...)
		if err != nil {
			return jobOutcome{}, nil, err
		}
		defer st.stop()
		count = st.count
	} else {
		f, err := e.newFleet()
		if err != nil {
			return jobOutcome{}, nil, err
		}
		f.rec = rec
		defer f.stop()
		for range w.procs {
			if _, err := f.spawn(ctx, 0, w.workerArgs()...); err != nil {
				return jobOutcome{}, nil, err
			}
		}
	}
	var during func(context.Context) func()
	if !w.rate.IsZero() {
		during = func(ctx context.Context) func() { return e.watchRate(ctx, w.kinds[0].name, w.rate.Per, rec) }
	}
	o, err := e.drainJobs(ctx, name, due, profile, rec, reg, w.kinds, count, during)
	return o, rec, err
}

// drainJobs enqueues due and waits for rec to see every job run; count,
// when not nil, counts the round trips of the scheduler (nil: it is in
// other processes). during, when not nil, is called just before the first
// job is due and the function it returns once every job completed.
func (e *env) drainJobs(ctx context.Context, name string, due []int64, profile string, rec *recorder, reg *crontab.Registry,
	kinds []jobKind, count *counter, during func(context.Context) func()) (jobOutcome, error) {
	rate, err := e.enqueueOurs(ctx, reg, due, kinds, 5000)
	if err != nil {
		return jobOutcome{}, err
	}
	if late := time.Since(time.UnixMilli(due[0])); late > -100*time.Millisecond {
		return jobOutcome{}, fmt.Errorf("%s: enqueueing took too long: done %v before the first due instant; raise the lead", name, -late)
	}
	time.Sleep(time.Until(time.UnixMilli(due[0]).Add(-50 * time.Millisecond)))
	before := snapshot(ctx, e.admin)
	if count == nil {
		count = &counter{}
	}
	trips0, cmds0 := count.trips.Load(), count.cmds.Load()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return jobOutcome{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return jobOutcome{}, err
		}
		defer pprof.StopCPUProfile()
	}
	stop := func() {}
	if during != nil {
		stop = during(ctx)
	}
	span := time.UnixMilli(due[len(due)-1]).Sub(time.UnixMilli(due[0]))
	err = rec.wait(ctx, span+time.Minute+time.Duration(len(due))*time.Millisecond)
	stop()
	if err != nil {
		return jobOutcome{}, err
	}
	if profile != "" {
		pprof.StopCPUProfile()
	}
	after := snapshot(ctx, e.admin)
	o := rec.analyze(due, true)
	o.EnqueueRate = rate
	o.Cost = before.to(after, len(due), count.trips.Load()-trips0, count.cmds.Load()-cmds0)
	e.fillDrain(&o, rec, due[0])
	if e.cfg.Verbose {
		e.logf("%s ours: %s", name, o.Cost)
	}
	if rec.bad.Load() > 0 {
		return o, fmt.Errorf("%d runs of unknown job numbers", rec.bad.Load())
	}
	return o, nil
}

// fillDrain sets the drain figures: jobs per second from the first handler
// start to the last completion.
func (e *env) fillDrain(o *jobOutcome, rec *recorder, dueMS int64) {
	first := int64(0)
	for i := range rec.n {
		if s := rec.start[i].Load(); s != 0 && (first == 0 || s < first) {
			first = s
		}
	}
	end := rec.doneAt.Load()
	due := dueMS * int64(time.Millisecond)
	o.FirstStartMS = msOf(time.Duration(first - due))
	o.AllDoneMS = msOf(time.Duration(end - due))
	if end > first {
		o.DrainRate = float64(rec.n) / time.Duration(end-first).Seconds()
	}
}

// leadFor is how far ahead of now the first job is due, so enqueueing n
// jobs ends before it.
func leadFor(n int) time.Duration {
	return 2*time.Second + time.Duration(n)*50*time.Microsecond
}

func runBurst(ctx context.Context, e *env) error {
	n := e.cfg.BurstJobs
	due := burstDue(n)
	ours, err := e.runJobsOurs(ctx, "S1", due, e.cfg.CPUProfile)
	if err != nil {
		return err
	}
	e.logf("S1 ours: drain %.0f jobs/s, lag %s, all done %.0fms after due", ours.DrainRate, ours.Lag, ours.AllDoneMS)
	details := map[string]any{"ours": ours}
	var base *jobOutcome
	if e.cfg.Baseline {
		if err := e.admin.FlushAll(ctx).Err(); err != nil {
			return err
		}
		at := time.Now().Add(leadFor(n)).UnixMilli()
		for i := range due {
			due[i] = at
		}
		b, err := e.runJobsNaive(ctx, "S1", due)
		if err != nil {
			return err
		}
		e.logf("S1 baseline: drain %.0f jobs/s, lag %s", b.DrainRate, b.Lag)
		details["baseline"] = b
		base = &b
	}
	sc := fmt.Sprintf("S1 burst %d, %s", n, workload{kinds: kindPlain, withTasks: e.cfg.WithTasks})
	if e.cfg.MaxRunning > 0 || !e.cfg.Rate.IsZero() {
		if err := e.runBurstLimited(ctx, n, ours, details); err != nil {
			return err
		}
	}
	if e.cfg.PriorityJobs > 0 {
		if err := e.runPriority(ctx, details); err != nil {
			return err
		}
	}
	e.report.Details["s1"] = details
	e.add(sc, "drain rate", "jobs/s", ours.DrainRate, basePick(base, func(o jobOutcome) float64 { return o.DrainRate }), false,
		&target{100000, ">= 100000"})
	e.addLags(sc, ours, base, nil)
	e.add(sc, "redis cpu per job", "µs", ours.Cost.RedisCPUPerOp, basePick(base, func(o jobOutcome) float64 { return o.Cost.RedisCPUPerOp }), true, nil)
	e.add(sc, "round trips per job", "", ours.Cost.TripsPerOp, basePick(base, func(o jobOutcome) float64 { return o.Cost.TripsPerOp }), true, nil)
	e.addCorrectness(sc, ours)
	return nil
}

func runSpread(ctx context.Context, e *env) error {
	n, over := e.cfg.SpreadJobs, e.cfg.SpreadOver
	mk := func() []int64 {
		t0 := time.Now().Add(leadFor(n)).UnixMilli()
		due := make([]int64, n)
		for i := range due {
			due[i] = t0 + int64(i)*over.Milliseconds()/int64(n)
		}
		return due
	}
	ours, err := e.runJobsOurs(ctx, "S2", mk(), "")
	if err != nil {
		return err
	}
	e.logf("S2 ours: lag %s, early %d", ours.Lag, ours.Early)
	details := map[string]any{"ours": ours}
	var base *jobOutcome
	if e.cfg.Baseline {
		if err := e.admin.FlushAll(ctx).Err(); err != nil {
			return err
		}
		b, err := e.runJobsNaive(ctx, "S2", mk())
		if err != nil {
			return err
		}
		e.logf("S2 baseline: lag %s, early %d", b.Lag, b.Early)
		details["baseline"] = b
		base = &b
	}
	e.report.Details["s2"] = details
	sc := fmt.Sprintf("S2 spread %d/%v, %s", n, over, workload{kinds: kindPlain, withTasks: e.cfg.WithTasks})
	e.addLags(sc, ours, base, &target{5, "<= 5 ms"})
	e.add(sc, "started early", "", float64(ours.Early), basePick(base, func(o jobOutcome) float64 { return float64(o.Early) }), true,
		&target{0, "0"})
	e.add(sc, "redis cpu per job", "µs", ours.Cost.RedisCPUPerOp, basePick(base, func(o jobOutcome) float64 { return o.Cost.RedisCPUPerOp }), true, nil)
	e.addCorrectness(sc, ours)
	return nil
}

// addLags adds the p50, p99 and max rows; p99Target applies to p99.
func (e *env) addLags(sc string, ours jobOutcome, base *jobOutcome, p99Target *target) {
	e.add(sc, "lag p50", "ms", ours.Lag.P50, basePick(base, func(o jobOutcome) float64 { return o.Lag.P50 }), true, nil)
	e.add(sc, "lag p99", "ms", ours.Lag.P99, basePick(base, func(o jobOutcome) float64 { return o.Lag.P99 }), true, p99Target)
	e.add(sc, "lag max", "ms", ours.Lag.Max, basePick(base, func(o jobOutcome) float64 { return o.Lag.Max }), true, nil)
}

// addCorrectness adds one row that must be 0: runs missing, doubled,
// early or of the wrong instant.
func (e *env) addCorrectness(sc string, o jobOutcome) {
	e.add(sc, "missing+dup+early", "", float64(o.Missing+o.Duplicates+o.Early+o.WrongFire), nil, true, &target{0, "0"})
}

func basePick(b *jobOutcome, f func(jobOutcome) float64) *float64 {
	if b == nil {
		return nil
	}
	return ptr(f(*b))
}
