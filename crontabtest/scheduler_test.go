package crontabtest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/crontabtest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// A Runner runs a handler as a scheduler does: the hook, the middleware
// and the handler see the same run, ctx and deadline when the scheduler
// fires a task or delivers a job through Redis as when the runner, built
// with the same options, runs them with the same details.
func TestRunnerAndSchedulerShareTheRunPath(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb := crontabtest.StartRedis(t)
	var rec recorder
	handler := func(ctx context.Context) error { rec.add(observe(ctx, "handler", crontab.RunInfo{})); return nil }
	reg := newRegistry(t,
		crontab.TaskConfig{Name: "tick", Expression: "every:1s", Timeout: 7 * time.Second,
			New: func() crontab.TaskInterface { return &probe{Do: handler} }},
		crontab.TaskConfig{Name: "send sms", Timeout: 3 * time.Second,
			New: func() crontab.TaskInterface { return &sms{do: handler} }},
	)
	opts := append(rec.options(), crontab.WithProcessID("kit-1"), crontab.WithGracePeriod(2*time.Second))
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crontab.NewClient(rdb, reg).Enqueue(ctx, &sms{To: "+1"}); err != nil {
		t.Fatal(err)
	}
	// The first run of each: hook, outer, inner, handler.
	first := func(task string) []seen {
		var out []seen
		for _, s := range rec.all() {
			if s.info.Task == task && len(out) < 4 {
				out = append(out, s)
			}
		}
		return out
	}
	crontabtest.RunUntil(ctx, t, s, 10*time.Second, func() bool { return len(first("tick")) == 4 && len(first("send sms")) == 4 })
	fromScheduler := map[string][]seen{"tick": first("tick"), "send sms": first("send sms")}

	rec = recorder{}
	r := crontabtest.NewRunner(t, reg, opts...)
	tick := fromScheduler["tick"][0].info
	if err := r.Run(ctx, t, &probe{Do: handler}, crontabtest.WithFireTime(tick.Fire)); err != nil {
		t.Fatal(err)
	}
	job := fromScheduler["send sms"][0].info
	if err := r.Run(ctx, t, &sms{do: handler}, crontabtest.WithFireTime(job.Fire), crontabtest.WithJobID(job.JobID)); err != nil {
		t.Fatal(err)
	}
	timeouts := map[string]time.Duration{"tick": 7 * time.Second, "send sms": 3 * time.Second}
	for task, want := range fromScheduler {
		got := first(task)
		if len(got) != 4 {
			t.Fatalf("%s: the runner's run saw %d steps, want 4", task, len(got))
		}
		for i := range want {
			w, g := want[i], got[i]
			if g.step != w.step || g.arg != w.arg || g.info != w.info || g.inCtx != w.inCtx || !g.fire.Equal(w.fire) ||
				g.fire.Location() != w.fire.Location() || g.task != w.task || g.attempt != w.attempt || g.hasDeadline != w.hasDeadline {
				t.Errorf("%s step %d:\nscheduler %+v\nrunner    %+v", task, i, w, g)
			}
			for who, s := range map[string]seen{"scheduler": w, "runner": g} {
				if !s.hasDeadline || s.left > timeouts[task] || s.left < timeouts[task]-time.Second {
					t.Errorf("%s %s %s: %v left, want about the task's %v", who, task, s.step, s.left, timeouts[task])
				}
			}
		}
	}
	if job.JobID == "" || tick.JobID != "" || tick.Process != "kit-1" {
		t.Errorf("scheduler runs: %+v, %+v", tick, job)
	}
}

// RunUntil returns once the condition holds, with the scheduler stopped
// (its heartbeat gone from Redis).
func TestRunUntil(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb := crontabtest.StartRedis(t)
	var fired atomic.Int32
	reg := newRegistry(t, crontab.TaskConfig{Name: "tick", Expression: "every:1s",
		New: func() crontab.TaskInterface {
			return &probe{Do: func(context.Context) error { fired.Add(1); return nil }}
		}})
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	crontabtest.RunUntil(ctx, t, s, 5*time.Second, func() bool { return fired.Load() > 0 })
	if fired.Load() == 0 {
		t.Error("RunUntil returned before the condition held")
	}
	procs, err := crontab.NewInspector(rdb).Processes(ctx)
	if err != nil || len(procs) != 0 {
		t.Errorf("after RunUntil: processes %+v, %v; want the scheduler gone", procs, err)
	}
}

// A condition that never holds fails the test, naming the timeout, and
// the scheduler is stopped all the same.
func TestRunUntilTimesOut(t *testing.T) {
	t.Parallel()
	rdb := crontabtest.StartRedis(t)
	s, err := crontab.NewScheduler(rdb, jobTypes(t), crontab.WithLogger(nil), crontab.WithProcessID("kit-2"))
	if err != nil {
		t.Fatal(err)
	}
	out := mustFail(t, func(tb testing.TB) {
		crontabtest.RunUntil(t.Context(), tb, s, 200*time.Millisecond, func() bool { return false })
	})
	wantIn(t, out, "crontabtest: RunUntil: the condition did not hold within 200ms of scheduler kit-2 being ready")
	procs, err := crontab.NewInspector(rdb).Processes(t.Context())
	if err != nil || len(procs) != 0 {
		t.Errorf("processes %+v, %v; want the scheduler stopped", procs, err)
	}
}

// A scheduler whose Run fails to start (here: Redis does not answer
// within its start timeout) fails the test with Run's error;
// its stop is harmless after that.
func TestRunSchedulerReportsRunsError(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	s, err := crontab.NewScheduler(dead, jobTypes(t), crontab.WithLogger(nil), crontab.WithProcessID("kit-3"),
		crontab.WithStartTimeout(300*time.Millisecond)) // Run waits for Redis otherwise
	if err != nil {
		t.Fatal(err)
	}
	out := mustFail(t, func(tb testing.TB) { crontabtest.RunScheduler(t.Context(), tb, s) })
	wantIn(t, out, "crontabtest: scheduler kit-3: Run returned before it was ready: crontab: redis at 127.0.0.1:1 not reachable after 300ms")
	wantIn(t, mustFail(t, func(tb testing.TB) { crontabtest.RunUntil(t.Context(), tb, s, time.Second, nil) }),
		"crontabtest: RunUntil: nil condition")
}

// stop ends Run and waits for it; a second stop, and the one at cleanup,
// do nothing more.
func TestRunSchedulerStop(t *testing.T) {
	t.Parallel()
	rdb := crontabtest.StartRedis(t)
	s, err := crontab.NewScheduler(rdb, jobTypes(t), crontab.WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := run(func(tb testing.TB) {
		stop := crontabtest.RunScheduler(t.Context(), tb, s)
		select {
		case <-s.Ready():
		default:
			tb.Errorf("RunScheduler returned before the scheduler was ready")
		}
		if procs, err := crontab.NewInspector(rdb).Processes(t.Context()); err != nil || len(procs) != 1 {
			tb.Errorf("while running: processes %+v, %v", procs, err)
		}
		stop()
		if procs, err := crontab.NewInspector(rdb).Processes(t.Context()); err != nil || len(procs) != 0 {
			tb.Errorf("after stop: processes %+v, %v", procs, err)
		}
		stop()
	})
	if f.Failed() {
		t.Error(f.output())
	}
}
