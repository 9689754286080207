package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestGracefulShutdownLetsRunsFinishThenCancels(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	quick, stubborn := t.Name()+"/quick", t.Name()+"/stubborn"
	started := make(chan string, 10)
	var mu sync.Mutex
	ended := map[string]error{}
	behave(t, quick, func(ctx context.Context) error {
		started <- quick
		time.Sleep(500 * time.Millisecond) // finishes within the grace period
		mu.Lock()
		ended[quick] = ctx.Err()
		mu.Unlock()
		return nil
	})
	behave(t, stubborn, func(ctx context.Context) error {
		started <- stubborn
		<-ctx.Done() // runs until cancelled
		mu.Lock()
		ended[stubborn] = ctx.Err()
		mu.Unlock()
		return ctx.Err()
	})
	reg := testRegistry(t,
		TaskConfig{Name: quick, Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: stubborn, Expression: "every:1h", New: probeNew(1)})
	k := newKeys("crontab")
	_, stop := runScheduler(t, rdb, reg, WithGracePeriod(time.Second))
	now := time.Now().Truncate(time.Millisecond)
	for _, name := range []string{quick, stubborn} {
		rdb.HSet(context.Background(), k.Task(name), "next_run", now.UnixMilli())
		rdb.ZAdd(context.Background(), k.Queue(), redisZ(now.UnixMilli(), name))
	}
	rdb.Publish(context.Background(), k.Wake(), "test")
	<-started
	<-started
	begin := time.Now()
	stop() // returns once Run has returned
	took := time.Since(begin)
	mu.Lock()
	defer mu.Unlock()
	if err, ok := ended[quick]; !ok || err != nil {
		t.Errorf("quick run: ended=%v err=%v; want it to finish uncancelled within the grace period", ok, err)
	}
	if err := ended[stubborn]; !errors.Is(err, context.Canceled) {
		t.Errorf("stubborn run ended with %v, want it cancelled after the grace period", err)
	}
	if took < time.Second {
		t.Errorf("Run returned after %v, before the 1s grace period", took)
	}
	if got := hget(t, rdb, quick, "last_result"); got != "ok" {
		t.Errorf("quick run recorded as %q", got)
	}
	if got := hget(t, rdb, stubborn, "last_result"); got != "failed" {
		t.Errorf("cancelled run recorded as %q, want failed", got)
	}
	if n, _ := rdb.HLen(context.Background(), k.Runs()).Result(); n != 0 {
		t.Errorf("%d runs left in the runs hash after shutdown", n)
	}
	if n, _ := rdb.Exists(context.Background(), k.Master()).Result(); n != 0 {
		t.Error("master lock not released at shutdown")
	}
}

func TestMiddlewareAndSkippedHook(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	type key struct{}
	behave(t, name, func(ctx context.Context) error {
		if ctx.Value(key{}) != "outer>inner" {
			t.Errorf("handler ctx value %v, want the middleware chain's", ctx.Value(key{}))
		}
		return errors.New("inner error")
	})
	var order []string
	var mu sync.Mutex
	mw := func(tag string) Middleware {
		return func(ctx context.Context, run RunInfo, next func(context.Context) error) error {
			mu.Lock()
			order = append(order, tag)
			mu.Unlock()
			v, _ := ctx.Value(key{}).(string)
			if v != "" {
				v += ">"
			}
			err := next(context.WithValue(ctx, key{}, v+tag))
			if tag == "outer" && err != nil {
				return errors.New("wrapped: " + err.Error())
			}
			return err
		}
	}
	failed := make(chan error, 10)
	skipped := make(chan SkipReason, 10)
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	runScheduler(t, rdb, reg, WithMiddleware(mw("outer")), WithMiddleware(mw("inner")),
		WithHooks(Hooks{
			Failed:  func(_ context.Context, _ RunInfo, err error) { failed <- err },
			Skipped: func(_ context.Context, _ RunInfo, r SkipReason) { skipped <- r },
		}))
	select {
	case err := <-failed:
		if err.Error() != "wrapped: inner error" {
			t.Errorf("failed with %v, want the outer middleware's error", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no run")
	}
	mu.Lock()
	if len(order) < 2 || order[0] != "outer" || order[1] != "inner" {
		t.Errorf("middleware order %v", order)
	}
	mu.Unlock()
	rdb.HSet(context.Background(), newKeys("crontab").Task(name), "status", "paused")
	select {
	case r := <-skipped:
		if r != SkipPaused {
			t.Errorf("skip reason %q", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no Skipped call for a paused fire")
	}
}

// A scheduler stopped while it runs a non-concurrent task lets the handler
// finish within its grace period (here far longer than the process TTL).
// Until then the run is its: the lock and lease stay renewed and the process
// alive, so the other scheduler neither records the run abandoned nor
// starts the task beside it.
func TestGracefulStopKeepsRunningHandlersLocked(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var inFlight flights // across both schedulers
	running := make(chan string, 100)
	behave(t, name, func(ctx context.Context) error {
		inFlight.enter()
		defer inFlight.leave()
		run, _ := Run(ctx)
		running <- run.Process
		time.Sleep(3 * time.Second)
		return nil
	})
	watch := newAbandonWatch()
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	type sched struct {
		s    *Scheduler
		stop func()
	}
	var scheds []sched
	for range 2 {
		s, stop := runScheduler(t, rdb, reg, append(watch.opts, WithGracePeriod(10*time.Second))...)
		scheds = append(scheds, sched{s, stop})
	}
	// Stop the scheduler running the task, mid-run; the other runs on.
	owner := <-running
	stopping, other := scheds[0], scheds[1]
	if other.s.id == owner {
		stopping, other = other, stopping
	}
	stopped := make(chan struct{})
	go func() { stopping.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("the stopped scheduler's Run did not return")
	}
	waitFor(t, 10*time.Second, "a run on the other scheduler", func() bool {
		recs, _ := other.s.History(context.Background(), name, 0)
		for _, r := range recs {
			if r.Process == other.s.id && r.Outcome == OutcomeOK {
				return true
			}
		}
		return false
	})
	if n := inFlight.max.Load(); n != 1 {
		t.Errorf("%d runs of a non-concurrent task were in flight at once while a scheduler stopped, want 1", n)
	}
	watch.expectNone(t, "the stopped scheduler's handler finished in its grace")
}

// A job running on a scheduler that is stopped keeps its lease, renewed,
// until its handler returns within the grace period (here longer than the
// job lease): it is not delivered again to the scheduler still running.
func TestGracefulStopKeepsRunningJobsLeased(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	var starts atomic.Int64
	running := make(chan string, 100)
	reg := testRegistry(t, TaskConfig{Name: name, Timeout: 20 * time.Second, New: probeNew(0)})
	behave(t, name, func(ctx context.Context) error {
		starts.Add(1)
		run, _ := Run(ctx)
		running <- run.Process
		time.Sleep(4 * time.Second) // twice the job lease of a 1s process TTL
		return nil
	})
	logs, logger := newLogCapture()
	stops := map[string]func(){}
	var ids []string
	for range 2 {
		s, stop := runScheduler(t, rdb, reg, WithLogger(logger), WithGracePeriod(10*time.Second))
		stops[s.id] = stop
		ids = append(ids, s.id)
	}
	c := NewClient(rdb, reg)
	if _, err := c.EnqueueRaw(context.Background(), name, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	owner := <-running
	stops[owner]() // returns once the handler has returned
	s := ids[0]
	if s == owner {
		s = ids[1]
	}
	// A second delivery would come a lease after the last renewal, at the
	// next round of the master's duties.
	time.Sleep(2*time.Second + 2*200*time.Millisecond + 500*time.Millisecond)
	if n := starts.Load(); n != 1 {
		t.Errorf("the job started %d times, want once (the survivor %s got it again)", n, s)
	}
	if l := logs.lines("delivered again"); len(l) > 0 {
		t.Errorf("logged %s", strings.Join(l, "\n"))
	}
}
