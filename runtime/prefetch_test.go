package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// paceJob sleeps Sleep, and records which process ran it, by test and
// number, in paceRuns.
type paceJob struct {
	Test  string        `json:"test"`
	N     int           `json:"n"`
	Sleep time.Duration `json:"sleep"`
}

var paceRuns sync.Map // "test/n" -> *paceRun

type paceRun struct {
	mu        sync.Mutex
	processes []string
	end       time.Time
}

func (j paceJob) Handle(ctx context.Context) error {
	time.Sleep(j.Sleep)
	r, _ := paceRuns.LoadOrStore(fmt.Sprintf("%s/%d", j.Test, j.N), new(paceRun))
	run := r.(*paceRun)
	run.mu.Lock()
	info, _ := Run(ctx)
	run.processes = append(run.processes, info.Process)
	run.end = time.Now()
	run.mu.Unlock()
	return nil
}

// paceOf returns the processes that ran job n of test, in order, and when
// the last run ended.
func paceOf(test string, n int) ([]string, time.Time) {
	r, ok := paceRuns.Load(fmt.Sprintf("%s/%d", test, n))
	if !ok {
		return nil, time.Time{}
	}
	run := r.(*paceRun)
	run.mu.Lock()
	defer run.mu.Unlock()
	return append([]string(nil), run.processes...), run.end
}

func paceRegistry(t testing.TB) *Registry {
	return testRegistry(t, TaskConfig{Name: "pace", New: func() TaskInterface { return new(paceJob) }})
}

// A scheduler that stops while it holds jobs claimed ahead of its workers
// gives them back: nothing stays leased to it, and another process runs
// every job exactly once.
func TestJobsClaimedAheadGoBackWhenStopping(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := paceRegistry(t)
	capture, logger := newLogCapture()
	a, stopA := runScheduler(t, rdb, reg, WithWorkers(2), WithBatch(64), WithLogger(logger), WithProcessID("A"))
	c := NewClient(rdb, reg)
	test := unique(t)
	const n = 200
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Value: paceJob{Test: test, N: i, Sleep: 10 * time.Millisecond}}
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	ran := func() int {
		done := 0
		for i := range n {
			if p, _ := paceOf(test, i); len(p) > 0 {
				done++
			}
		}
		return done
	}
	waitFor(t, 20*time.Second, "jobs claimed ahead", func() bool { return len(a.jobs.waiting) >= 4 })
	stopA()
	k := newKeys("crontab")
	if leased, _ := rdb.ZCard(ctx, k.Leases()).Result(); leased != 0 {
		t.Errorf("%d claims still leased after the scheduler stopped", leased)
	}
	if owned, _ := rdb.HLen(ctx, k.Owners()).Result(); owned != 0 {
		t.Errorf("%d jobs still owned after the scheduler stopped", owned)
	}
	pending, _ := rdb.ZCard(ctx, k.Jobs()).Result()
	if done := ran(); done+int(pending) != n {
		t.Errorf("%d ran + %d pending after the stop, want %d", done, pending, n)
	}
	capture.expectLog(t, "claimed jobs given back")

	runScheduler(t, rdb, reg, WithProcessID("B"))
	waitFor(t, 20*time.Second, "every job to run", func() bool { return ran() == n })
	time.Sleep(200 * time.Millisecond) // a duplicate would show by now
	for i := range n {
		if p, _ := paceOf(test, i); len(p) != 1 {
			t.Errorf("job %d ran %d times (%v)", i, len(p), p)
		}
	}
}

// Jobs claimed ahead by a process whose only worker is busy with a long
// job are given back within about a second, and another process runs them
// before the long job ends.
func TestJobsClaimedAheadGoBackWhenNoWorkerTakesThem(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := paceRegistry(t)
	capture, logger := newLogCapture()
	runScheduler(t, rdb, reg, WithWorkers(1), WithLogger(logger), WithProcessID("A"))
	c := NewClient(rdb, reg)
	test := unique(t)
	// Warm up: quick jobs earn A the credit to claim ahead.
	for i := range 5 {
		if _, err := c.Enqueue(ctx, paceJob{Test: test, N: 100 + i}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the warm-up jobs", func() bool {
		p, _ := paceOf(test, 104)
		return len(p) == 1
	})
	// All due at one instant: the queue orders them by id, the long job
	// first, so A starts it and claims quick ones ahead in the same call.
	at := time.Now().Add(300 * time.Millisecond)
	const long = 2500 * time.Millisecond
	var jobs []Job
	for i := range 4 {
		j := paceJob{Test: test, N: i}
		if i == 0 {
			j.Sleep = long
		}
		jobs = append(jobs, Job{Value: j, Options: []EnqueueOption{At(at), WithID(fmt.Sprintf("%s-%d", test, i))}})
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(at) + 200*time.Millisecond)
	if pending, _ := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Result(); pending == 3 {
		t.Fatal("no quick job was claimed ahead")
	}
	runScheduler(t, rdb, reg, WithProcessID("B"))
	waitFor(t, 10*time.Second, "the long job", func() bool {
		p, _ := paceOf(test, 0)
		return len(p) == 1
	})
	_, longEnd := paceOf(test, 0)
	for i := 1; i <= 3; i++ {
		p, end := paceOf(test, i)
		if len(p) != 1 || p[0] != "B" || !end.Before(longEnd) {
			t.Errorf("quick job %d ran in %v, ending %v before the long job ended; want once in B, before", i, p, longEnd.Sub(end))
		}
	}
	capture.expectLog(t, "claimed jobs given back")
}
