package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

// probeTask is the every:1s task watched while the queue holds the S4 jobs.
type probeTask struct{ rec *probeRec }

func (p *probeTask) Handle(ctx context.Context) error {
	now := time.Now()
	p.rec.mu.Lock()
	p.rec.lags = append(p.rec.lags, now.Sub(crontab.FireTime(ctx)))
	p.rec.mu.Unlock()
	return nil
}

type probeRec struct {
	mu   sync.Mutex
	lags []time.Duration
}

type scaleOutcome struct {
	Jobs           int     `json:"jobs"`
	Chunk          int     `json:"jobs_per_enqueue_many"`
	EnqueueRate    float64 `json:"enqueue_jobs_per_s"`
	MemoryBytes    int64   `json:"used_memory_delta"`
	PerJob         float64 `json:"bytes_per_job"`
	PayloadPerJob  float64 `json:"payload_bytes_per_job"`
	OverheadPerJob float64 `json:"bytes_per_job_beyond_payload"`
	ProbeEmpty     dist    `json:"probe_lag_empty_queue"`
	Probe          dist    `json:"probe_lag"`
	Fired          int64   `json:"jobs_fired"` // must be 0: they are due in an hour
	Cost           cost    `json:"enqueue_cost"`
}

func usedMemory(ctx context.Context, rdb *redis.Client) int64 {
	v, _ := strconv.ParseInt(info(ctx, rdb, "memory")["used_memory"], 10, 64)
	return v
}

// storedMemory returns INFO memory's used_memory less mem_clients_normal
// (the clients' query and output buffers, which a connection that just
// sent large calls keeps until Redis's cron shrinks them): what the data
// take.
func storedMemory(ctx context.Context, rdb *redis.Client) int64 {
	m := info(ctx, rdb, "memory")
	used, _ := strconv.ParseInt(m["used_memory"], 10, 64)
	clients, _ := strconv.ParseInt(m["mem_clients_normal"], 10, 64)
	return used - clients
}

func runScale(ctx context.Context, e *env) error {
	n, chunk := e.cfg.ScaleJobs, e.cfg.ScaleChunk
	rec := newRecorder(n)
	reg, err := jobRegistry(rec)
	if err != nil {
		return err
	}
	probe := &probeRec{}
	if err := reg.Add(crontab.TaskConfig{Name: "probe", Expression: "every:1s", Timeout: time.Minute,
		New: func() crontab.TaskInterface { return &probeTask{rec: probe} }}); err != nil {
		return err
	}
	base := time.Now().Add(time.Hour).UnixMilli()
	due := make([]int64, n)
	payload := 0
	for i := range due {
		due[i] = base + int64(i%3600_000)
		payload += len(`{"n":` + strconv.Itoa(i) + `}`)
	}
	// The probe alone first, for comparison; then the jobs go in.
	emptyLags, err := e.probe(ctx, reg, probe, rec)
	if err != nil {
		return err
	}
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	mem0 := usedMemory(ctx, e.admin)
	u0 := snapshot(ctx, e.admin)
	rate, err := e.enqueueOurs(ctx, reg, due, kindPlain, chunk)
	if err != nil {
		return err
	}
	u1 := snapshot(ctx, e.admin)
	mem1 := usedMemory(ctx, e.admin)
	o := scaleOutcome{Jobs: n, Chunk: chunk, EnqueueRate: rate, MemoryBytes: mem1 - mem0,
		PerJob: float64(mem1-mem0) / float64(n), PayloadPerJob: float64(payload) / float64(n)}
	o.OverheadPerJob = o.PerJob - o.PayloadPerJob
	o.Cost = u0.to(u1, n, 0, 0)
	if e.cfg.Verbose {
		e.logf("S4 enqueue: %s", o.Cost)
	}
	e.logf("S4 %d jobs: enqueue %.0f jobs/s, %.0f B/job (%.0f beyond the payload)", n, rate, o.PerJob, o.OverheadPerJob)

	lags, err := e.probe(ctx, reg, probe, rec)
	if err != nil {
		return err
	}
	o.ProbeEmpty, o.Probe = summarize(emptyLags), summarize(lags)
	o.Fired = rec.done.Load()
	e.logf("S4 probe every:1s: lag %s with no job pending, %s with %d pending; jobs fired %d", o.ProbeEmpty, o.Probe, n, o.Fired)
	details := map[string]any{"ours": o}

	var b *scaleOutcome
	if e.cfg.Baseline {
		if err := e.admin.FlushAll(ctx).Err(); err != nil {
			return err
		}
		bo, err := e.scaleNaive(ctx, due)
		if err != nil {
			return err
		}
		bo.PayloadPerJob = o.PayloadPerJob
		bo.OverheadPerJob = bo.PerJob - bo.PayloadPerJob
		b = &bo
		details["baseline"] = bo
	}
	e.report.Details["s4"] = details
	sc := fmt.Sprintf("S4 scale %d pending", n)
	pick := func(f func(scaleOutcome) float64) *float64 {
		if b == nil {
			return nil
		}
		return ptr(f(*b))
	}
	e.add(sc, "enqueue rate (EnqueueMany)", "jobs/s", o.EnqueueRate, pick(func(s scaleOutcome) float64 { return s.EnqueueRate }), false, nil)
	e.add(sc, "redis memory per job", "B/job", o.PerJob, pick(func(s scaleOutcome) float64 { return s.PerJob }), true, nil)
	e.add(sc, "  beyond the payload", "B/job", o.OverheadPerJob, pick(func(s scaleOutcome) float64 { return s.OverheadPerJob }), true,
		&target{250, "<= 250 B"})
	// "baseline" here is the same probe with no job pending.
	e.add(sc, "probe every:1s lag p50 (vs empty)", "ms", o.Probe.P50, ptr(o.ProbeEmpty.P50), true, nil)
	e.add(sc, "probe every:1s lag max (vs empty)", "ms", o.Probe.Max, ptr(o.ProbeEmpty.Max), true, &target{5, "<= 5 ms"})
	e.add(sc, "jobs fired (due in 1h)", "", float64(o.Fired), nil, true, &target{0, "0"})
	return nil
}

// probe runs a scheduler with reg in this process for ScaleProbe and
// returns the lags of the probe task's fires but the first (which may be a
// registration catch-up).
func (e *env) probe(ctx context.Context, reg *crontab.Registry, probe *probeRec, rec *recorder) ([]time.Duration, error) {
	probe.mu.Lock()
	probe.lags = nil
	probe.mu.Unlock()
	st, err := e.startScheduler(ctx, reg, crontab.WithListener(rec))
	if err != nil {
		return nil, err
	}
	sleep(ctx, e.cfg.ScaleProbe)
	if err := st.stop(); err != nil {
		return nil, err
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	return append([]time.Duration(nil), probe.lags[min(1, len(probe.lags)):]...), nil
}

// scaleNaive enqueues the same jobs the naive way (HSET + ZADD,
// pipelined) and measures rate and memory.
func (e *env) scaleNaive(ctx context.Context, due []int64) (scaleOutcome, error) {
	prod := redis.NewClient(e.srv.Options())
	defer prod.Close()
	mem0 := usedMemory(ctx, e.admin)
	t0 := time.Now()
	chunk := e.cfg.ScaleChunk
	for i := 0; i < len(due); i += chunk {
		pipe := prod.Pipeline()
		for k := i; k < min(i+chunk, len(due)); k++ {
			id := newID(k)
			pipe.HSet(ctx, naiveData, id, `{"n":`+strconv.Itoa(k)+`}`)
			pipe.ZAdd(ctx, naiveQueue, redis.Z{Score: float64(due[k]), Member: id})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return scaleOutcome{}, err
		}
	}
	rate := float64(len(due)) / time.Since(t0).Seconds()
	mem1 := usedMemory(ctx, e.admin)
	return scaleOutcome{Jobs: len(due), Chunk: chunk, EnqueueRate: rate, MemoryBytes: mem1 - mem0,
		PerJob: float64(mem1-mem0) / float64(len(due))}, nil
}

// newID is a baseline job id as long as ours (24 hex digits), so memory
// compares like with like.
func newID(k int) string { return fmt.Sprintf("%024x", k) }
