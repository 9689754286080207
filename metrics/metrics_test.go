package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/metrics"
	crontab "github.com/gocrontab/crontab/runtime"
)

type okTask struct{}

func (okTask) Handle(context.Context) error { return nil }

type failTask struct{}

func (failTask) Handle(context.Context) error { return errors.New("boom") }

// slowTask outlasts its one-second interval, so every other fire finds its
// lock held.
type slowTask struct{}

func (slowTask) Handle(ctx context.Context) error {
	select {
	case <-time.After(1500 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

type job struct{}

func (job) Handle(context.Context) error { return nil }

type laterTask struct{}

func (laterTask) Handle(context.Context) error { return nil }

func registry(t *testing.T) *crontab.Registry {
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "ok", Expression: "every:1s", New: func() crontab.TaskInterface { return new(okTask) }},
		{Name: "fail", Expression: "every:1s", New: func() crontab.TaskInterface { return new(failTask) }},
		{Name: "slow", Expression: "every:1s", New: func() crontab.TaskInterface { return new(slowTask) }},
		{Name: "later", Expression: "daily:03:00", Status: crontab.StatusPaused, New: func() crontab.TaskInterface { return new(laterTask) }},
		{Name: "job", New: func() crontab.TaskInterface { return new(job) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func run(t *testing.T, rdb redis.UniversalClient, reg *crontab.Registry, opts ...crontab.Option) {
	opts = append([]crontab.Option{crontab.WithLogger(nil), crontab.WithProcessTTL(time.Second), crontab.WithGracePeriod(3 * time.Second)}, opts...)
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestMetricsAndCollector(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := registry(t)
	labels := metrics.WithConstLabels(prometheus.Labels{"namespace": "crontab"})
	m := metrics.New(labels)
	var skippedSeen sync.Once
	skipped := make(chan struct{})
	run(t, rdb, reg, append(m.Options(), crontab.WithHooks(m.Hooks(crontab.Hooks{
		Skipped: func(context.Context, crontab.RunInfo, crontab.SkipReason) { skippedSeen.Do(func() { close(skipped) }) },
	})))...)
	c := crontab.NewClient(rdb, reg, crontab.WithProcessTTL(time.Second))
	if _, err := c.Enqueue(ctx, job{}, crontab.In(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(ctx, job{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-skipped:
	case <-time.After(6 * time.Second):
		t.Fatal("no skipped fire (slow task's lock held) within 6s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.CollectAndCount(m, "crontab_run_duration_seconds") < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // until ok, fail, job and slow have each completed a run
	}

	promReg := prometheus.NewRegistry()
	promReg.MustRegister(m, metrics.NewCollector(crontab.NewInspector(rdb, crontab.WithProcessTTL(time.Second)), labels))
	srv := httptest.NewServer(metrics.Handler(promReg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`crontab_fires_total{namespace="crontab",task="ok"}`,
		`crontab_fires_total{namespace="crontab",task="job"} 1`,
		`crontab_runs_total{namespace="crontab",outcome="ok",task="ok"}`,
		`crontab_runs_total{namespace="crontab",outcome="failed",task="fail"}`,
		`crontab_skipped_fires_total{namespace="crontab",reason="running",task="slow"}`,
		`crontab_run_duration_seconds_bucket{namespace="crontab",task="slow",le="2.5"}`,
		`crontab_fire_lag_seconds_count{namespace="crontab",task="ok"}`,
		`crontab_runs_in_progress{namespace="crontab",task="ok"} 0`,
		`crontab_queue_depth{namespace="crontab"} 4`,
		`crontab_queue_due{namespace="crontab"}`,
		`crontab_jobs_pending{namespace="crontab"} 1`,
		`crontab_jobs_dead{namespace="crontab"} 0`,
		`crontab_processes_alive{namespace="crontab"} 1`,
		`crontab_task_status{namespace="crontab",status="paused",task="later"} 1`,
		`crontab_task_runs_total{namespace="crontab",task="ok"}`,
		`crontab_task_failures_total{namespace="crontab",task="fail"}`,
		`crontab_task_skips_total{namespace="crontab",task="slow"}`,
		`crontab_task_next_fire_timestamp_seconds{namespace="crontab",task="later"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
	if problems, err := testutil.GatherAndLint(promReg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

func TestHooksCountAbandonedAndRedelivered(t *testing.T) {
	m := metrics.New()
	var called []string
	h := m.Hooks(crontab.Hooks{
		Abandoned:   func(context.Context, crontab.RunInfo) { called = append(called, "abandoned") },
		Redelivered: func(context.Context, string, string) { called = append(called, "redelivered") },
	})
	h.Abandoned(context.Background(), crontab.RunInfo{Task: "t"})
	h.Redelivered(context.Background(), "j", "p")
	h.Skipped(context.Background(), crontab.RunInfo{Task: "t"}, crontab.SkipPaused)
	if strings.Join(called, ",") != "abandoned,redelivered" {
		t.Errorf("wrapped hooks called: %v", called)
	}
	want := `
# HELP crontab_abandoned_runs_total Runs whose process died before they finished (counted by the master process).
# TYPE crontab_abandoned_runs_total counter
crontab_abandoned_runs_total{task="t"} 1
# HELP crontab_job_redeliveries_total Jobs whose lease expired and that were delivered again (counted by the master process).
# TYPE crontab_job_redeliveries_total counter
crontab_job_redeliveries_total 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "crontab_abandoned_runs_total", "crontab_job_redeliveries_total"); err != nil {
		t.Error(err)
	}
}

func TestHooksCountRepairs(t *testing.T) {
	m := metrics.New()
	var told []string
	h := m.Hooks(crontab.Hooks{Repaired: func(_ context.Context, kind string, n int) {
		told = append(told, fmt.Sprintf("%s:%d", kind, n))
	}})
	h.Repaired(context.Background(), crontab.RepairJob, 3)
	h.Repaired(context.Background(), crontab.RepairJob, 2)
	h.Repaired(context.Background(), crontab.RepairLock, 1)
	if strings.Join(told, ",") != "job:3,job:2,lock:1" {
		t.Errorf("wrapped Repaired hook told: %v", told)
	}
	want := `
# HELP crontab_repairs_total Broken states the invariant sweep repaired, by kind (counted by the master process).
# TYPE crontab_repairs_total counter
crontab_repairs_total{kind="job"} 5
crontab_repairs_total{kind="lock"} 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "crontab_repairs_total"); err != nil {
		t.Error(err)
	}
}

func TestCollectorReportsRedisErrors(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond,
		DialerRetries: 1})
	defer rdb.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(crontab.NewInspector(rdb), metrics.WithTimeout(time.Second)))
	if _, err := reg.Gather(); err == nil {
		t.Error("a scrape with Redis away did not fail")
	}
}

func TestPrefixAndConstLabels(t *testing.T) {
	m := metrics.New(metrics.WithPrefix("billing"), metrics.WithConstLabels(prometheus.Labels{"namespace": "b"}))
	m.Hooks(crontab.Hooks{}).Abandoned(context.Background(), crontab.RunInfo{Task: "t"})
	want := `
# HELP billing_abandoned_runs_total Runs whose process died before they finished (counted by the master process).
# TYPE billing_abandoned_runs_total counter
billing_abandoned_runs_total{namespace="b",task="t"} 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "billing_abandoned_runs_total"); err != nil {
		t.Error(err)
	}
}

// crontab_jobs_waiting counts the due jobs by why they wait, each reason
// present (0 when none), and looks at no more than WaitingScan due jobs.
func TestCollectorJobsWaiting(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := registry(t)
	c := crontab.NewClient(rdb, reg)
	jobs := make([]crontab.Job, metrics.WaitingScan+5)
	for i := range jobs {
		jobs[i] = crontab.Job{Value: job{}}
	}
	jobs = append(jobs, crontab.Job{Value: job{}, Options: []crontab.EnqueueOption{crontab.In(time.Hour)}})
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	col := metrics.NewCollector(crontab.NewInspector(rdb))
	want := fmt.Sprintf(`
# HELP crontab_jobs_waiting Due jobs not claimed yet, by why they wait (among the first %d due jobs).
# TYPE crontab_jobs_waiting gauge
crontab_jobs_waiting{reason="due"} 0
crontab_jobs_waiting{reason="max_running"} 0
crontab_jobs_waiting{reason="no process"} %d
crontab_jobs_waiting{reason="priority"} 0
crontab_jobs_waiting{reason="rate"} 0
`, metrics.WaitingScan, metrics.WaitingScan)
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), "crontab_jobs_waiting"); err != nil {
		t.Error(err)
	}
}
