package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// flowJob records its starts and how many of its test's jobs run at once
// (the schedulers of a test share this process: the count is
// cluster-wide).
type flowJob struct {
	Test    string `json:"test"`
	Tenant  string `json:"tenant"`
	SleepMS int    `json:"sleep_ms"`
}

type flowStats struct {
	running, most int
	starts        map[string][]time.Time // by tenant
	runs          map[string]int         // by job id
}

var (
	flowMu  sync.Mutex
	flowAll = map[string]*flowStats{}
)

func (j flowJob) Handle(ctx context.Context) error {
	run, _ := Run(ctx)
	flowMu.Lock()
	s := flowAll[j.Test]
	s.running++
	s.most = max(s.most, s.running)
	s.starts[j.Tenant] = append(s.starts[j.Tenant], time.Now())
	s.runs[run.JobID]++
	flowMu.Unlock()
	time.Sleep(time.Duration(j.SleepMS) * time.Millisecond)
	flowMu.Lock()
	s.running--
	flowMu.Unlock()
	return nil
}

// flowTest registers the stats of test name.
func flowTest(name string) {
	flowMu.Lock()
	flowAll[name] = &flowStats{starts: map[string][]time.Time{}, runs: map[string]int{}}
	flowMu.Unlock()
}

// flowRead returns a copy of the stats of test name.
func flowRead(name string) (most int, starts map[string][]time.Time, runs map[string]int) {
	flowMu.Lock()
	defer flowMu.Unlock()
	s := flowAll[name]
	starts = map[string][]time.Time{}
	for k, v := range s.starts {
		starts[k] = slices.Clone(v)
	}
	runs = map[string]int{}
	for k, v := range s.runs {
		runs[k] = v
	}
	return s.most, starts, runs
}

// mostInWindow returns the most of starts in any window of length d: each
// window that begins at a start (where the most begin).
func mostInWindow(starts []time.Time, d time.Duration) int {
	s := slices.Clone(starts)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i := range s {
		n := 0
		for j := i; j < len(s) && s[j].Sub(s[i]) < d; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

func flowRegistry(t *testing.T, cfg TaskConfig) *Registry {
	cfg.Name = "flow"
	cfg.New = func() TaskInterface { return new(flowJob) }
	return testRegistry(t, cfg)
}

// enqueueFlow enqueues n flow jobs of test, due now.
func enqueueFlow(t *testing.T, c *Client, n int, job flowJob, opts ...EnqueueOption) {
	t.Helper()
	for range n {
		if _, err := c.Enqueue(context.Background(), job, opts...); err != nil {
			t.Fatal(err)
		}
	}
}

// allRanOnce waits until n jobs ran, then checks that none ran twice.
func allRanOnce(t *testing.T, name string, n int, within time.Duration) {
	t.Helper()
	waitFor(t, within, fmt.Sprintf("%d jobs to run", n), func() bool {
		_, _, runs := flowRead(name)
		return len(runs) >= n
	})
	time.Sleep(200 * time.Millisecond)
	_, _, runs := flowRead(name)
	for id, k := range runs {
		if k != 1 {
			t.Errorf("job %s ran %d times", id, k)
		}
	}
	if len(runs) != n {
		t.Errorf("%d jobs ran, want %d", len(runs), n)
	}
}

// MaxRunning caps the runs of a job type across every process: 30 jobs
// on three schedulers with ten workers each run three at a time, each
// once, none failed.
func TestMaxRunningCapsJobsAcrossSchedulers(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	flowTest(name)
	reg := flowRegistry(t, TaskConfig{MaxRunning: 3})
	for range 3 {
		runScheduler(t, rdb, reg, WithWorkers(10))
	}
	c := NewClient(rdb, reg)
	enqueueFlow(t, c, 30, flowJob{Test: name, SleepMS: 100})
	allRanOnce(t, name, 30, 15*time.Second)
	if most, _, _ := flowRead(name); most != 3 {
		t.Errorf("at most %d jobs ran at once, want 3 (max_running)", most)
	}
	if n := rdb.HGet(context.Background(), newKeys("crontab").Stats(), "flow:failures").Val(); n != "" && n != "0" {
		t.Errorf("%s failures", n)
	}
}

// rateStartSlack is how much shorter than a rate's window the tests'
// windows of handler starts are: a start lags its claim, on whose Redis
// time the rate counts.
const rateStartSlack = 150 * time.Millisecond

// Rate caps the starts of a job type in any window (sliding, not fixed
// buckets) across every process.
func TestRateCapsStartsInAnyWindow(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	flowTest(name)
	reg := flowRegistry(t, TaskConfig{Rate: Rate{N: 10, Per: 500 * time.Millisecond}})
	for range 3 {
		runScheduler(t, rdb, reg, WithWorkers(20))
	}
	c := NewClient(rdb, reg)
	enqueueFlow(t, c, 35, flowJob{Test: name})
	allRanOnce(t, name, 35, 15*time.Second)
	_, starts, _ := flowRead(name)
	// The window is on Redis time at the claim; a handler starts after its
	// claim, by up to tens of ms on a loaded machine under the race
	// detector (30 ms let 14 starts into one window at load 10), so the
	// check allows rateStartSlack. Without the rate, all 35 start at once.
	if most := mostInWindow(starts[""], 500*time.Millisecond-rateStartSlack); most > 10 {
		t.Errorf("%d starts in one window, want at most 10 (rate 10/500ms)", most)
	}
}

// RateKey gives each key (tenant) the type's rate of its own.
func TestRateKeyGivesEachTenantItsRate(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	flowTest(name)
	reg := flowRegistry(t, TaskConfig{Rate: Rate{N: 5, Per: time.Second}})
	for range 2 {
		runScheduler(t, rdb, reg, WithWorkers(20))
	}
	c := NewClient(rdb, reg)
	start := time.Now()
	for _, tenant := range []string{"a", "b"} {
		enqueueFlow(t, c, 10, flowJob{Test: name, Tenant: tenant}, RateKey(tenant))
	}
	allRanOnce(t, name, 20, 15*time.Second)
	_, starts, _ := flowRead(name)
	for _, tenant := range []string{"a", "b"} {
		if most := mostInWindow(starts[tenant], time.Second-rateStartSlack); most > 5 {
			t.Errorf("tenant %s: %d starts in one window, want at most 5", tenant, most)
		}
		first := 0
		for _, s := range starts[tenant] {
			if s.Sub(start) < 900*time.Millisecond {
				first++
			}
		}
		if first != 5 {
			t.Errorf("tenant %s: %d starts in the first window, want 5 (its own rate, not shared)", tenant, first)
		}
	}
}

// A RateKey for a type without a rate is an error, not a key silently
// ignored; a type the client does not know (EnqueueRaw) keeps it.
func TestRateKeyNeedsARate(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	reg := flowRegistry(t, TaskConfig{})
	c := NewClient(rdb, reg)
	_, err := c.Enqueue(context.Background(), flowJob{Test: unique(t)}, RateKey("tenant"))
	if err == nil || !strings.Contains(err.Error(), `RateKey("tenant"): the type has no rate`) {
		t.Errorf("Enqueue with a RateKey of a type without a rate: %v", err)
	}
	if _, err := c.EnqueueRaw(context.Background(), "another build's type", nil, RateKey("tenant")); err != nil {
		t.Errorf("EnqueueRaw of an unknown type with a RateKey: %v", err)
	}
}
