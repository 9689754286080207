package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// burstJob counts its runs in burstRuns, by test and number.
type burstJob struct {
	Test string `json:"test"`
	N    int    `json:"n"`
	Fail bool   `json:"fail,omitempty"`
}

var burstRuns sync.Map // "test/n" -> *atomic.Int32

func (j burstJob) Handle(context.Context) error {
	c, _ := burstRuns.LoadOrStore(fmt.Sprintf("%s/%d", j.Test, j.N), new(atomic.Int32))
	c.(*atomic.Int32).Add(1)
	if j.Fail {
		return errors.New("boom")
	}
	return nil
}

func burstCount(test string, n int) int32 {
	c, ok := burstRuns.Load(fmt.Sprintf("%s/%d", test, n))
	if !ok {
		return 0
	}
	return c.(*atomic.Int32).Load()
}

func burstRegistry(t testing.TB) *Registry {
	return testRegistry(t, TaskConfig{Name: "burst", New: func() TaskInterface { return new(burstJob) }})
}

// A burst larger than every batch (enqueue, claim, ack) runs each job once
// across two processes, keeps the type's totals exact, dead-letters the
// failures, keeps the newest history records and leaves nothing else behind.
func TestBurstOfJobsRunsOnceWithBatchedAcks(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := burstRegistry(t)
	for range 2 {
		runScheduler(t, rdb, reg)
	}
	c := NewClient(rdb, reg)
	const n, failing = 3000, 10
	name := unique(t)
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Value: burstJob{Test: name, N: i, Fail: i%(n/failing) == 7}, Options: []EnqueueOption{In(300 * time.Millisecond)}}
	}
	start := time.Now()
	ids, err := c.EnqueueMany(ctx, jobs)
	if err != nil || len(ids) != n {
		t.Fatalf("EnqueueMany: %d ids, %v", len(ids), err)
	}
	k := newKeys("crontab")
	waitFor(t, 60*time.Second, "every job to be acked", func() bool {
		pending, _ := rdb.ZCard(ctx, k.Jobs()).Result()
		inflight, _ := rdb.ZCard(ctx, k.Leases()).Result()
		st, _ := c.inspect().Stats(ctx, "burst")
		return pending == 0 && inflight == 0 && st.Runs == n
	})
	t.Logf("%d jobs drained %v after enqueue", n, time.Since(start))
	for i := range n {
		if got := burstCount(name, i); got != 1 {
			t.Errorf("job %d ran %d times", i, got)
		}
	}
	if st, _ := c.inspect().Stats(ctx, "burst"); st.Runs != n || st.Failures != failing {
		t.Errorf("stats %+v, want %d runs and %d failures", st, n, failing)
	}
	if dead, _ := rdb.ZCard(ctx, k.Dead()).Result(); dead != failing {
		t.Errorf("%d dead letters, want %d", dead, failing)
	}
	for _, key := range []string{k.JobData(), k.Attempts(), k.Owners(), k.FirstDue()} {
		if left, _ := rdb.HLen(ctx, key).Result(); left != 0 {
			t.Errorf("%s holds %d fields after the burst", key, left)
		}
	}
	hist, err := c.inspect().History(ctx, "burst", 0)
	if err != nil || len(hist) != 100 {
		t.Fatalf("history: %d records, %v; want the default cap of 100", len(hist), err)
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].End.After(hist[i-1].End.Add(time.Second)) {
			t.Errorf("history not newest first: record %d ended %v, record %d %v", i, hist[i].End, i-1, hist[i-1].End)
			break
		}
	}
}

func TestEnqueueManyDuplicatesAcrossAndWithinBatches(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, burstRegistry(t))
	name := unique(t)
	mk := func(n int, ids map[int]string) []Job {
		jobs := make([]Job, n)
		for i := range jobs {
			jobs[i] = Job{Value: burstJob{Test: name, N: i}, Options: []EnqueueOption{In(time.Hour)}}
			if id, ok := ids[i]; ok {
				jobs[i].Options = append(jobs[i].Options, WithID(id))
			}
		}
		return jobs
	}
	// Job 1100 repeats job 700's id, in the next script call.
	_, err := c.EnqueueMany(ctx, mk(1200, map[int]string{700: "dup-a", 1100: "dup-a"}))
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "job 1100") {
		t.Errorf("EnqueueMany with a repeated id: %v, want ErrDuplicate at job 1100", err)
	}
	// Job 4 repeats job 3's id in the same call; job 9 an id enqueued before.
	_, err = c.EnqueueMany(ctx, mk(10, map[int]string{3: "dup-b", 4: "dup-b"}))
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "job 4") {
		t.Errorf("EnqueueMany with an id twice in one batch: %v, want ErrDuplicate at job 4", err)
	}
	if _, err := c.EnqueueMany(ctx, mk(10, map[int]string{9: "dup-a"})); !errors.Is(err, ErrDuplicate) {
		t.Errorf("EnqueueMany with a pending id: %v, want ErrDuplicate", err)
	}
	k := newKeys("crontab")
	if n, _ := rdb.ZCard(ctx, k.Jobs()).Result(); n != 1200-1+10-1+10-1 {
		t.Errorf("%d jobs pending, want every job but the duplicates", n)
	}
}

// BenchmarkEnqueueMany measures EnqueueMany of 1,000 jobs per call against
// a private redis-server; it reports jobs/s.
func BenchmarkEnqueueMany(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	ctx := context.Background()
	c := NewClient(rdb, burstRegistry(b))
	jobs := make([]Job, 1000)
	for i := range jobs {
		jobs[i] = Job{Value: burstJob{Test: "bench", N: i}, Options: []EnqueueOption{In(time.Hour)}}
	}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := c.EnqueueMany(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(jobs))/time.Since(start).Seconds(), "jobs/s")
}

// BenchmarkDrainBurst measures how fast one scheduler drains 5,000 jobs due
// at once (claim, run, ack) against a private redis-server; it reports
// jobs/s, and the CPU times and Go allocations per job as
// BenchmarkDrainFires does per fire.
func BenchmarkDrainBurst(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	var done atomic.Int64
	reg := testRegistry(b, TaskConfig{Name: "empty", New: func() TaskInterface { return new(emptyJob) }})
	runScheduler(b, rdb, reg, WithListener(ListenerFunc(func(context.Context, Result) { done.Add(1) })))
	c := NewClient(rdb, reg)
	const n = 5000
	jobs := make([]Job, n)
	m := drainMeter{cpu: cpuMeter{pid: srv.PID()}}
	for b.Loop() {
		at := time.Now().Add(500 * time.Millisecond)
		for i := range jobs {
			jobs[i] = Job{Value: emptyJob{}, Options: []EnqueueOption{At(at)}}
		}
		target := done.Load() + n
		if _, err := c.EnqueueMany(ctx, jobs); err != nil {
			b.Fatal(err)
		}
		m.drain(at, func() bool { return done.Load() >= target })
	}
	m.report(b, b.N*n, "job")
}
