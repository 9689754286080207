package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestEachInstantFiresOnceAcrossSchedulers(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	var log fireLog
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { log.add(ctx); return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	var stops []func()
	for range 3 {
		// A sleep cap far above the interval: the loop must wake for the
		// head of the queue, not on a tick.
		_, stop := runScheduler(t, rdb, reg, WithMaxSleep(time.Minute))
		stops = append(stops, stop)
	}
	time.Sleep(4500 * time.Millisecond)
	for _, stop := range stops {
		stop()
	}
	fires := log.snapshot()
	if len(fires) < 3 {
		t.Fatalf("got %d fires in 4.5s of an every:1s task, want at least 3", len(fires))
	}
	for i := 1; i < len(fires); i++ {
		if d := fires[i].fire.Sub(fires[i-1].fire); d != time.Second {
			t.Errorf("fire %d at %v follows %v by %v, want exactly 1s (a duplicate or a missed instant)",
				i, fires[i].fire, fires[i-1].fire, d)
		}
	}
	var lags []time.Duration
	for _, f := range fires {
		if f.fire.Nanosecond()%int(time.Second) != 0 {
			t.Errorf("fire %v is not on a second boundary", f.fire)
		}
		lags = append(lags, f.start.Sub(f.fire))
	}
	slices.Sort(lags)
	if lags[0] < 0 {
		t.Errorf("a handler started %v before its instant", -lags[0])
	}
	// Lag itself is measured by the benchmarks, not asserted here: this
	// machine is shared and a timed assertion would flake.
	t.Logf("fires=%d lag min=%v median=%v max=%v", len(fires), lags[0], lags[len(lags)/2], lags[len(lags)-1])
}

func TestPauseResumeDisableThroughHSET(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	var log fireLog
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { log.add(ctx); return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	var mu sync.Mutex
	var pausedSkips []time.Time // the instants skipped as paused
	runScheduler(t, rdb, reg, WithHooks(Hooks{Skipped: func(_ context.Context, run RunInfo, reason SkipReason) {
		if reason == SkipPaused {
			mu.Lock()
			pausedSkips = append(pausedSkips, run.Fire)
			mu.Unlock()
		}
	}}))
	k := newKeys("crontab")

	waitFor(t, 3*time.Second, "a first fire", func() bool { return len(log.snapshot()) > 0 })

	// Paused: the entry stays queued, fires are skipped. Instants are
	// claimed in order, so from the first one skipped as paused none runs.
	rdb.HSet(ctx, k.Task(name), "status", "paused")
	waitFor(t, 5*time.Second, "two fires skipped as paused", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(pausedSkips) >= 2
	})
	mu.Lock()
	firstSkipped := pausedSkips[0]
	mu.Unlock()
	for _, f := range log.snapshot() {
		if !f.fire.Before(firstSkipped) {
			t.Errorf("instant %v ran while paused (skipped from %v)", f.fire, firstSkipped)
		}
	}
	if n, _ := rdb.ZScore(ctx, k.Queue(), name).Result(); n == 0 {
		t.Error("paused task left the queue")
	}
	if hget(t, rdb, name, "skips") == "0" {
		t.Error("paused fires were not counted as skips")
	}

	// Resumed: continues from the next future instant, no catch-up.
	before := len(log.snapshot())
	resumedAt := time.Now()
	rdb.HSet(ctx, k.Task(name), "status", "active")
	waitFor(t, 3*time.Second, "a fire after resume", func() bool { return len(log.snapshot()) > before })
	first := log.snapshot()[before]
	if first.fire.Before(resumedAt.Truncate(time.Second)) {
		t.Errorf("after resume fired the missed instant %v (resumed at %v)", first.fire, resumedAt)
	}

	// Disabled: taken out of the queue, never fires.
	rdb.HSet(ctx, k.Task(name), "status", "disabled")
	waitFor(t, 3*time.Second, "the disabled task to leave the queue", func() bool {
		_, err := rdb.ZScore(ctx, k.Queue(), name).Result()
		return err != nil
	})
	disabledAt := time.Now()
	time.Sleep(1500 * time.Millisecond)
	for _, f := range log.snapshot() {
		if f.start.After(disabledAt) {
			t.Errorf("fired at %v while disabled", f.fire)
		}
	}

	// Enabled again: back in the queue, firing.
	before = len(log.snapshot())
	rdb.HSet(ctx, k.Task(name), "status", "active")
	waitFor(t, 4*time.Second, "a fire after enabling", func() bool { return len(log.snapshot()) > before })
}

func TestNonConcurrentTaskSkipsWhileRunning(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var log fireLog
	var inFlight flights // across both schedulers
	behave(t, name, func(ctx context.Context) error {
		inFlight.enter()
		defer inFlight.leave()
		log.add(ctx)
		time.Sleep(2200 * time.Millisecond)
		return nil
	})
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	runScheduler(t, rdb, reg)
	runScheduler(t, rdb, reg)
	time.Sleep(5 * time.Second)
	if n := inFlight.max.Load(); n != 1 {
		t.Errorf("%d runs of a non-concurrent task were in flight at once, want 1", n)
	}

	hist, err := readHistory(context.Background(), rdbOf(rdb), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, r := range hist {
		if r.Outcome == OutcomeSkipped && strings.Contains(r.Error, "still running") {
			skipped++
		}
	}
	if skipped == 0 {
		t.Errorf("no skip recorded while a 2.2s run of an every:1s task held the lock; history: %+v", hist)
	}
	if n := len(log.snapshot()); n < 2 {
		t.Errorf("got %d runs in 5s, want at least 2", n)
	}
}

// A non-concurrent run that outlives its timeout (the PX of its lock) by
// ignoring its ctx keeps the lock, renewed, until its handler returns: no
// other scheduler starts the task meanwhile, and the run is not mistaken
// for one whose process died.
func TestNonConcurrentRunOutlivesItsTimeout(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var inFlight flights // across both schedulers
	behave(t, name, func(ctx context.Context) error {
		inFlight.enter()
		defer inFlight.leave()
		time.Sleep(3 * time.Second) // ctx ends after 1s; ignored
		return nil
	})
	watch := newAbandonWatch()
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: time.Second, New: probeNew(0)})
	s, _ := runScheduler(t, rdb, reg, watch.opts...)
	runScheduler(t, rdb, reg, watch.opts...)
	waitFor(t, 20*time.Second, "three runs recorded", func() bool { return historyOutcomes(t, s, name)[OutcomeOK] >= 3 })

	if n := inFlight.max.Load(); n != 1 {
		t.Errorf("%d runs of a non-concurrent task with a 1s timeout and 3s runs were in flight at once, want 1", n)
	}
	watch.expectNone(t, "no process died")
	if oc := historyOutcomes(t, s, name); oc[OutcomeAbandoned] > 0 || oc[OutcomeSkipped] == 0 {
		t.Errorf("history outcomes %v; want ok runs and skips, no abandoned", oc)
	}
}

func TestConcurrentTaskOverlaps(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var inFlight flights
	behave(t, name, func(ctx context.Context) error {
		inFlight.enter()
		defer inFlight.leave()
		select { // 3.5s runs of an every:1s task: 3 or 4 at once
		case <-time.After(3500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	})
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Concurrent: true, New: probeNew(0)})
	runScheduler(t, rdb, reg)
	waitFor(t, 10*time.Second, "three runs of a concurrent task in flight at once", func() bool { return inFlight.max.Load() >= 3 })
}

func TestPanicIsAFailedRun(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	calls := make(chan struct{}, 100)
	behave(t, name, func(ctx context.Context) error { calls <- struct{}{}; panic("boom") })
	failed := make(chan error, 100)
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	runScheduler(t, rdb, reg, WithHooks(Hooks{Failed: func(_ context.Context, _ RunInfo, err error) {
		failed <- err
	}}))
	var first error
	for range 2 {
		select {
		case err := <-failed:
			if first == nil {
				first = err
			}
		case <-time.After(4 * time.Second):
			t.Fatal("no failed run reported; did the panic kill the scheduler?")
		}
	}
	if !strings.Contains(first.Error(), "panic: boom") {
		t.Errorf("failed hook got %v, want the panic", first)
	}
	waitFor(t, 2*time.Second, "the failure recorded", func() bool { return hget(t, rdb, name, "last_result") == "failed" })
	if !strings.Contains(hget(t, rdb, name, "last_error"), "boom") {
		t.Errorf("last_error = %q", hget(t, rdb, name, "last_error"))
	}
}

func TestListenerAndFireTimeInContext(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	errBad := errors.New("bad")
	n := 0
	behave(t, name, func(ctx context.Context) error {
		if FireTime(ctx).IsZero() || TaskName(ctx) != name || Attempt(ctx) != 1 {
			t.Errorf("ctx carries fire=%v task=%q attempt=%d", FireTime(ctx), TaskName(ctx), Attempt(ctx))
		}
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 7*time.Second {
			t.Errorf("ctx deadline %v, want the 7s timeout", dl)
		}
		n++
		if n%2 == 0 {
			return errBad
		}
		return nil
	})
	results := make(chan Result, 10)
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: 7 * time.Second, New: probeNew(0)})
	runScheduler(t, rdb, reg, WithListener(ListenerFunc(func(_ context.Context, r Result) { results <- r })))
	r1, r2 := <-results, <-results
	if !r1.OK || r1.Err != nil || r2.OK || !errors.Is(r2.Err, errBad) {
		t.Errorf("results %+v, %+v: want ok then the handler's error", r1, r2)
	}
	if r1.Cost < 0 || r1.Task != name || r2.Fire.Sub(r1.Fire) != time.Second {
		t.Errorf("result fields: %+v %+v", r1, r2)
	}
}
