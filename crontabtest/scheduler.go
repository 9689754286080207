package crontabtest

import (
	"context"
	"sync"
	"testing"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Bounds of the waits of RunScheduler and RunUntil.
const (
	// readyTimeout bounds the wait for a started scheduler to be ready:
	// its clock synced with Redis and its tasks registered.
	readyTimeout = 15 * time.Second
	// stopTimeout bounds the wait for Run to return once its ctx ended. A
	// scheduler waits for its running handlers for its grace period
	// (crontab.WithGracePeriod, 30 s by default) first.
	stopTimeout = time.Minute
	// pollInterval is how often RunUntil checks its condition.
	pollInterval = 10 * time.Millisecond
)

// RunScheduler runs s.Run in a goroutine, with a ctx derived from ctx, and
// returns once s is ready (s.Ready: its tasks are registered and it
// claims due fires and jobs). The returned stop ends the run: it cancels
// Run's ctx and waits for Run to return, failing tb (Errorf) when Run
// returns an error or does not return within a minute (a scheduler first waits
// for its running handlers for its grace period, crontab.WithGracePeriod:
// give a test's scheduler a short one). stop may be
// called more than once and from any goroutine; it is also called at tb's
// cleanup. RunScheduler fails tb (Fatalf) when Run returns before s is
// ready, with Run's error, or when s is not ready within 15 s.
func RunScheduler(ctx context.Context, tb testing.TB, s *crontab.Scheduler) (stop func()) {
	tb.Helper()
	if s == nil {
		tb.Fatalf("crontabtest: RunScheduler: nil scheduler")
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("crontabtest: scheduler %s: Run returned %v", s.ID(), err)
				}
			case <-time.After(stopTimeout):
				tb.Errorf("crontabtest: scheduler %s: Run did not return within %v of its ctx ending (handlers that ignore their ctx? see crontab.WithGracePeriod)", s.ID(), stopTimeout)
			}
		})
	}
	tb.Cleanup(stop)
	select {
	case <-s.Ready():
		return stop
	case err := <-done:
		once.Do(cancel) // Run has returned: nothing left for stop to wait for
		tb.Fatalf("crontabtest: scheduler %s: Run returned before it was ready: %v", s.ID(), err)
	case <-time.After(readyTimeout):
		tb.Fatalf("crontabtest: scheduler %s: not ready within %v (is Redis up?)", s.ID(), readyTimeout)
	}
	return stop
}

// RunUntil runs s (see RunScheduler) until cond holds, polling it every
// 10 ms, then stops s and waits for Run to return nil. It fails tb
// (Fatalf) when cond does not hold within timeout (timeout counts from s
// being ready), or as RunScheduler and its stop do. cond is called on the
// calling goroutine while s runs: what it reads, the handlers write, so
// guard it (a mutex, an atomic, a channel).
func RunUntil(ctx context.Context, tb testing.TB, s *crontab.Scheduler, timeout time.Duration, cond func() bool) {
	tb.Helper()
	if cond == nil {
		tb.Fatalf("crontabtest: RunUntil: nil condition")
	}
	stop := RunScheduler(ctx, tb, s)
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			stop()
			tb.Fatalf("crontabtest: RunUntil: the condition did not hold within %v of scheduler %s being ready", timeout, s.ID())
		}
		time.Sleep(pollInterval)
	}
	stop()
}
