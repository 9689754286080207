package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// slowJob overruns any timeout under a second: it waits for its ctx.
type slowJob struct{}

func (slowJob) Handle(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// Scheduled fires and jobs go through one run path: a timeout has the same
// error text for both, and the Failed hook of both is called after the
// run's record is in Redis, off the handler's goroutine, with a ctx that
// no longer carries the handler's deadline.
func TestFiresAndJobsShareTheRunPath(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	reg := testRegistry(t,
		TaskConfig{Name: name, Expression: "every:1s", Timeout: 100 * time.Millisecond, New: probeNew(0)},
		TaskConfig{Name: "slow job", Timeout: 100 * time.Millisecond, New: func() TaskInterface { return new(slowJob) }},
	)
	type seen struct {
		info        RunInfo
		err         string
		recorded    bool
		hasDeadline bool
	}
	var mu sync.Mutex
	var failed []seen
	hooks := Hooks{Failed: func(ctx context.Context, run RunInfo, err error) {
		hist, _ := readHistory(ctx, rdbOf(rdb), run.Task, 0)
		recorded := false
		for _, r := range hist {
			recorded = recorded || (r.Fire.Equal(run.Fire) && r.Outcome == OutcomeFailed)
		}
		_, dl := ctx.Deadline()
		mu.Lock()
		failed = append(failed, seen{run, err.Error(), recorded, dl})
		mu.Unlock()
	}}
	runScheduler(t, rdb, reg, WithHooks(hooks))
	if _, err := NewClient(rdb, reg).Enqueue(ctx, slowJob{}); err != nil {
		t.Fatal(err)
	}
	var fire, job *seen
	waitFor(t, 10*time.Second, "a failed fire and a failed job", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := range failed {
			if failed[i].info.JobID == "" {
				fire = &failed[i]
			} else {
				job = &failed[i]
			}
		}
		return fire != nil && job != nil
	})
	for _, s := range []*seen{fire, job} {
		if !strings.HasPrefix(s.err, "timeout 100ms exceeded: ") {
			t.Errorf("%s: error %q, want the timeout named", s.info.Task, s.err)
		}
		if !s.recorded {
			t.Errorf("%s: Failed was called before the run's record was written", s.info.Task)
		}
		if s.hasDeadline {
			t.Errorf("%s: Failed's ctx carries the handler's deadline", s.info.Task)
		}
	}
}

// goroutineID returns the id of the calling goroutine (from its stack
// trace's first line), to tell which goroutine ran a handler.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:goruntime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// A run started once the previous one's goroutine is done with it goes to
// that goroutine, and a run started while every goroutine is busy goes to
// a new one; Scheduler.running counts each run until its function
// returns. Idle goroutines exit when the handlers' ctx ends.
func TestHandlerGoroutinesReuseAnIdleOne(t *testing.T) {
	t.Parallel()
	runCtx, stop := context.WithCancel(context.Background())
	e := &engine{runCtx: runCtx}
	var mu sync.Mutex
	ran := map[int]string{} // run -> goroutine
	release := make(chan struct{})
	run := func(i int) {
		if i == 1 {
			<-release
		}
		mu.Lock()
		ran[i] = goroutineID()
		mu.Unlock()
	}
	g := newHandlerGoroutines(e, run)
	free := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.free
	}
	waitFree := func(n int) {
		waitFor(t, 5*time.Second, "idle handler goroutines", func() bool { return free() == n })
	}
	g.start(0)
	waitFree(1)
	g.start(1) // to the idle goroutine; it blocks there
	waitFor(t, 5*time.Second, "run 1 taken", func() bool { return free() == 0 })
	g.start(2) // none idle: a new goroutine
	waitFree(1)
	close(release)
	waitFree(2)
	g.start(3)
	waitFree(2)
	e.running.Wait()
	mu.Lock()
	if ran[1] != ran[0] {
		t.Errorf("run 1 on goroutine %s, want run 0's (%s), which was idle", ran[1], ran[0])
	}
	if ran[2] == ran[0] {
		t.Errorf("run 2 on goroutine %s, busy with run 1", ran[2])
	}
	if ran[3] != ran[0] && ran[3] != ran[2] {
		t.Errorf("run 3 on goroutine %s, want one of the idle %s and %s", ran[3], ran[0], ran[2])
	}
	mu.Unlock()
	stop()
	waitFor(t, 5*time.Second, "idle goroutines to exit", func() bool { return free() == 0 })
}

// A handler's ctx carries its RunInfo and whatever the scheduler's ctx
// carries, and keeps the scheduler's cancellation; a report's ctx the same
// without the deadline.
func TestRunContextCarriesTheRunAndItsParent(t *testing.T) {
	t.Parallel()
	type parentKey struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), parentKey{}, "p"))
	info := RunInfo{Task: "t", JobID: "j", Attempt: 2, Process: "me", Fire: time.UnixMilli(1000)}
	ctx := withRun(parent, info)
	if got, ok := Run(ctx); !ok || got != info {
		t.Errorf("Run = %+v, %v; want %+v", got, ok, info)
	}
	if TaskName(ctx) != "t" || Attempt(ctx) != 2 || !FireTime(ctx).Equal(info.Fire) {
		t.Errorf("TaskName %q, Attempt %d, FireTime %v", TaskName(ctx), Attempt(ctx), FireTime(ctx))
	}
	if ctx.Value(parentKey{}) != "p" {
		t.Errorf("the parent's value is lost")
	}
	if _, ok := Run(parent); ok {
		t.Errorf("Run outside a run reports one")
	}
	inner := withRun(ctx, RunInfo{Task: "u"})
	if TaskName(inner) != "u" {
		t.Errorf("TaskName of a run's ctx inside another's: %q", TaskName(inner))
	}
	timed, stopTimed := context.WithTimeout(ctx, time.Hour)
	defer stopTimed()
	cancel()
	<-timed.Done()
	if !errors.Is(timed.Err(), context.Canceled) {
		t.Errorf("handler ctx err %v after the scheduler's ctx ended", timed.Err())
	}
}
