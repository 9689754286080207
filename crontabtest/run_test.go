package crontabtest_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/crontabtest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// The handler's ctx carries the run's details, given or by default, and
// the task's registered timeout as its deadline; the fire time is an
// instant as Redis keeps it (milliseconds, Local zone).
func TestRunCarriesTheRun(t *testing.T) {
	t.Parallel()
	var got seen
	reg := newRegistry(t, crontab.TaskConfig{Name: "tick", Expression: "every:1m", Timeout: 7 * time.Second,
		New: func() crontab.TaskInterface { return new(probe) }})
	r := crontabtest.NewRunner(t, reg, crontab.WithLogger(nil), crontab.WithProcessID("kit-1"))
	task := &probe{Do: func(ctx context.Context) error { got = observe(ctx, "handler", crontab.RunInfo{}); return nil }}

	fire := time.Date(2026, 3, 29, 1, 30, 0, 123456789, time.UTC)
	if err := r.Run(t.Context(), t, task, crontabtest.WithFireTime(fire), crontabtest.WithAttempt(3), crontabtest.WithJobID("j-1")); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(fire.UnixMilli())
	want := crontab.RunInfo{Task: "tick", JobID: "j-1", Fire: at, Due: at, Attempt: 3, Process: "kit-1"}
	if !got.inCtx || got.info != want {
		t.Errorf("crontab.Run(ctx) = %+v, %v; want %+v", got.info, got.inCtx, want)
	}
	if !got.fire.Equal(fire.Truncate(time.Millisecond)) || got.fire.Location() != time.Local {
		t.Errorf("FireTime = %v (%v), want %v in Local", got.fire, got.fire.Location(), fire.Truncate(time.Millisecond))
	}
	if got.task != "tick" || got.attempt != 3 {
		t.Errorf("TaskName, Attempt = %q, %d", got.task, got.attempt)
	}
	if !got.hasDeadline || got.left > 7*time.Second || got.left < 6*time.Second {
		t.Errorf("deadline: %v, %v left; want the task's 7s timeout", got.hasDeadline, got.left)
	}
	if task.N != 1 {
		t.Errorf("the value given was not the one run: N = %d", task.N)
	}

	// Defaults: now, attempt 1, no job id for a scheduled task.
	before := time.Now().Truncate(time.Millisecond)
	if err := r.Run(t.Context(), t, task); err != nil {
		t.Fatal(err)
	}
	if got.info.Attempt != 1 || got.info.JobID != "" || got.fire.Before(before) || got.fire.After(time.Now()) ||
		got.fire.Nanosecond()%int(time.Millisecond) != 0 {
		t.Errorf("default run: %+v", got.info)
	}
}

// A job type's run has a job id by default, as every delivered job has.
func TestRunJobHasAnID(t *testing.T) {
	t.Parallel()
	var id string
	r := crontabtest.NewRunner(t, jobTypes(t), crontab.WithLogger(nil))
	job := &sms{To: "+1", do: func(ctx context.Context) error { info, _ := crontab.Run(ctx); id = info.JobID; return nil }}
	if err := r.Run(t.Context(), t, job); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("job id %q, want a random one", id)
	}
	if err := r.Run(t.Context(), t, job, crontabtest.WithJobID("")); err != nil || id != "" {
		t.Errorf("WithJobID(\"\"): id %q, err %v", id, err)
	}
}

// A handler that overruns the task's timeout fails with the scheduler's
// text; a panic is an error with its stack; a handler's error is returned
// as it is.
func TestRunFailures(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, crontab.TaskConfig{Name: "slow", Expression: "every:1m", Timeout: 50 * time.Millisecond,
		New: func() crontab.TaskInterface { return new(probe) }})
	r := crontabtest.NewRunner(t, reg, crontab.WithLogger(nil))

	err := r.Run(t.Context(), t, &probe{Do: func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("no deadline came")
		}
	}})
	if err == nil || err.Error() != "timeout 50ms exceeded: context deadline exceeded" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("overrun: %v", err)
	}
	err = r.Run(t.Context(), t, &probe{Do: func(context.Context) error { panic("boom") }})
	if err == nil || !strings.HasPrefix(err.Error(), "panic: boom\n") || !strings.Contains(err.Error(), "goroutine ") {
		t.Errorf("panic: %v", err)
	}
	mine := errors.New("mine")
	if err := r.Run(t.Context(), t, &probe{Do: func(context.Context) error { return mine }}); err != mine {
		t.Errorf("handler error: %v", err)
	}
	// The test's ctx ending is not a timeout.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Run(ctx, t, &probe{Do: func(ctx context.Context) error { return ctx.Err() }}); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "timeout") {
		t.Errorf("cancelled: %v", err)
	}
}

// The hook runs first, then the middleware, outermost first, then the
// handler, all with the handler's ctx; once it returned, the Failed or
// Executed hook and the listeners are told.
func TestRunAppliesMiddlewareAndHooks(t *testing.T) {
	t.Parallel()
	var rec recorder
	var executed, failed, listened atomic.Int32
	opts := append(rec.options(),
		crontab.WithHooks(crontab.Hooks{
			BeforeExecute: func(ctx context.Context, run crontab.RunInfo) { rec.add(observe(ctx, "hook", run)) },
			Executed:      func(context.Context, crontab.RunInfo, time.Duration) { executed.Add(1) },
			Failed:        func(context.Context, crontab.RunInfo, error) { failed.Add(1) },
		}),
		crontab.WithListener(crontab.ListenerFunc(func(_ context.Context, res crontab.Result) {
			if res.Task == "tick" {
				listened.Add(1)
			}
		})),
		crontab.WithMiddleware(func(ctx context.Context, run crontab.RunInfo, next func(context.Context) error) error {
			if err := next(ctx); err != nil {
				return errors.New("wrapped: " + err.Error())
			}
			return nil
		}),
	)
	reg := newRegistry(t, crontab.TaskConfig{Name: "tick", Expression: "every:1m", Timeout: time.Minute,
		New: func() crontab.TaskInterface { return new(probe) }})
	r := crontabtest.NewRunner(t, reg, opts...)
	task := &probe{Do: func(ctx context.Context) error { rec.add(observe(ctx, "handler", crontab.RunInfo{})); return nil }}
	if err := r.Run(t.Context(), t, task, crontabtest.WithAttempt(2)); err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range rec.all() {
		steps = append(steps, s.step)
		if !s.inCtx || s.info.Task != "tick" || s.info.Attempt != 2 || !s.hasDeadline {
			t.Errorf("%s: ctx run %+v (%v), deadline %v", s.step, s.info, s.inCtx, s.hasDeadline)
		}
		if s.step != "handler" && s.arg != s.info {
			t.Errorf("%s: given %+v, ctx has %+v", s.step, s.arg, s.info)
		}
	}
	if got := strings.Join(steps, ","); got != "hook,outer,inner,handler" {
		t.Errorf("steps %s, want hook,outer,inner,handler", got)
	}
	if executed.Load() != 1 || failed.Load() != 0 || listened.Load() != 1 {
		t.Errorf("executed %d, failed %d, listened %d", executed.Load(), failed.Load(), listened.Load())
	}
	err := r.Run(t.Context(), t, &probe{Do: func(context.Context) error { return errors.New("no") }})
	if err == nil || err.Error() != "wrapped: no" || failed.Load() != 1 {
		t.Errorf("the last middleware's error: %v; failed %d", err, failed.Load())
	}
	err = r.Run(t.Context(), t, &probe{Do: func(context.Context) error { panic("in handler") }})
	// A panic goes up through the middleware (which may recover it) and is
	// an error once out of it.
	if err == nil || !strings.HasPrefix(err.Error(), "panic: in handler\n") {
		t.Errorf("the handler's panic: %v", err)
	}
}

// Mistakes in the test fail it; they are never the handler's error.
func TestRunnerMisuseFailsTheTest(t *testing.T) {
	t.Parallel()
	reg := jobTypes(t)
	for _, c := range []struct {
		name string
		fn   func(tb testing.TB)
		want string
	}{
		{"nil registry", func(tb testing.TB) { crontabtest.NewRunner(tb, nil) }, "crontabtest: NewRunner: nil registry"},
		{"bad option", func(tb testing.TB) { crontabtest.NewRunner(tb, reg, crontab.WithWorkers(0)) }, "crontabtest: NewRunner: crontab: WithWorkers"},
		{"client option", func(tb testing.TB) { crontabtest.NewRunner(tb, reg, crontab.WithMaxPayload(1)) }, "WithMaxPayload is a Client option"},
		{"unregistered", func(tb testing.TB) {
			crontabtest.NewRunner(tb, reg).Run(t.Context(), tb, &probe{})
		}, "crontabtest: Run: *crontabtest_test.probe is not registered"},
		{"nil task", func(tb testing.TB) { crontabtest.NewRunner(tb, reg).Run(t.Context(), tb, nil) }, "crontabtest: Run: the task is nil"},
		{"nil pointer", func(tb testing.TB) { crontabtest.NewRunner(tb, reg).Run(t.Context(), tb, (*sms)(nil)) }, "crontabtest: Run: the task is nil"},
		{"attempt 0", func(tb testing.TB) {
			crontabtest.NewRunner(tb, reg).Run(t.Context(), tb, &sms{}, crontabtest.WithAttempt(0))
		}, "WithAttempt(0)"},
		{"fire a job type", func(tb testing.TB) {
			crontabtest.NewRunner(tb, reg).FireNext(t.Context(), tb, &sms{}, 1, time.Time{})
		}, `crontabtest: FireNext: "send sms" is a job type`},
		{"bad register", func(tb testing.TB) {
			crontabtest.NewRegistry(tb, func(*crontab.Registry) error { return errors.New("stale") })
		}, "crontabtest: NewRegistry: register func 0: stale"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantIn(t, mustFail(t, c.fn), c.want)
		})
	}
}

// FireNext runs the next instants of the task's schedule in its zone, in
// order, each with its instant and a fresh copy of the value.
func TestFireNext(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t,
		crontab.TaskConfig{Name: "report", Expression: "daily:01:30", TZ: "Europe/London", New: func() crontab.TaskInterface { return new(probe) }},
		crontab.TaskConfig{Name: "once", Expression: "at:1893553445", New: func() crontab.TaskInterface { return new(reminder) }},
	)
	r := crontabtest.NewRunner(t, reg, crontab.WithLogger(nil))
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 28, 12, 0, 0, 0, london)
	var fires []time.Time
	task := &probe{N: 10, Do: func(ctx context.Context) error {
		fires = append(fires, crontab.FireTime(ctx))
		if crontab.FireTime(ctx).Day() == 30 {
			return errors.New("the 30th fails")
		}
		return nil
	}}
	res := r.FireNext(t.Context(), t, task, 3, from)

	sched, _ := crontab.Parse("daily:01:30", london)
	want := []time.Time{sched.Next(from)}
	for len(want) < 3 {
		want = append(want, sched.Next(want[len(want)-1]))
	}
	if len(res) != 3 || len(fires) != 3 {
		t.Fatalf("%d results, %d fires, want 3", len(res), len(fires))
	}
	for i := range want {
		if !fires[i].Equal(want[i]) || !res[i].Fire.Equal(want[i]) || res[i].Task != "report" || res[i].Attempt != 1 || res[i].JobID != "" {
			t.Errorf("fire %d: handler saw %v, result %+v; want %v", i, fires[i], res[i].RunInfo, want[i])
		}
	}
	// 2026-03-29 is the spring-forward day in London: 01:30 does not exist
	// and the schedule's policy fires at 02:00 BST.
	if !fires[0].Equal(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) {
		t.Errorf("the DST day fired at %v", fires[0])
	}
	if !res[0].OK || res[1].OK || res[1].Err == nil || res[1].Err.Error() != "the 30th fails" || !res[2].OK {
		t.Errorf("outcomes: %v %v (%v) %v", res[0].OK, res[1].OK, res[1].Err, res[2].OK)
	}
	if task.N != 10 {
		t.Errorf("FireNext ran the value given, not copies: N = %d", task.N)
	}

	if res := r.FireNext(t.Context(), t, reminder{}, 5, time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)); len(res) != 1 ||
		!res[0].Fire.Equal(time.Unix(1893553445, 0)) {
		t.Errorf("an at: schedule fires once: %+v", res)
	}
}
