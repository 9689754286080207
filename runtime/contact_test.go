package runtime

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// withAfterBeat sets the maintenance loop's hook run after each successful
// heartbeat.
func withAfterBeat(f func()) Option { return func(o *options) { o.afterBeat = f } }

// A maintenance loop held up between its heartbeat and its round of master
// duties (Redis stalled the calls in between, or the process was not
// scheduled) for longer than the prune's grace does no duty on that stale
// heartbeat: its own task, declared at the heartbeat, is not pruned as
// undeclared, and it keeps firing.
func TestStalledLoopPrunesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	name := t.Name()
	var fired atomic.Int64
	behave(t, name, func(context.Context) error { fired.Add(1); return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	var stall, stalled atomic.Bool
	logs, logger := newLogCapture()
	s, _ := runScheduler(t, rdb, reg, WithLogger(logger), withAfterBeat(func() {
		if stall.CompareAndSwap(true, false) {
			time.Sleep(4 * time.Second) // the prune's grace is 3 process TTLs (3s)
			stalled.Store(true)
		}
	}))
	waitFor(t, 5*time.Second, "the master role", s.maint.isMasterNow)
	stall.Store(true)
	waitFor(t, 10*time.Second, "the stall to end", stalled.Load)
	time.Sleep(time.Second) // rounds after the stall
	if l := logs.lines("task removed"); len(l) > 0 {
		t.Errorf("the task was pruned after a stall of the maintenance loop: %v", l)
	}
	if hget(t, rdb, name, "expression") == "" {
		t.Fatalf("task %s is gone from Redis", name)
	}
	n := fired.Load()
	waitFor(t, 5*time.Second, "a fire after the stall", func() bool { return fired.Load() > n })
}

// After Redis lost its data, the tasks registered again are first due a
// process TTL and a heartbeat later, not sooner: every live process has
// taken the locks of its runs in progress again by then (it beats within
// a TTL and takes them right after the heartbeat that finds the loss), so
// no fire of a non-concurrent task starts beside a run that is still going.
func TestDataLossResumesAfterAProcessTTL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(context.Context) error { return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	const ttl = 5 * time.Second // heartbeat 1s
	runScheduler(t, rdb, reg, WithProcessTTL(ttl))
	must(t, rdb.FlushAll(ctx).Err()) // the test's own redis-server
	var back time.Time
	waitFor(t, 3*time.Second, "the task registered again", func() bool {
		if hget(t, rdb, name, "next_run") == "" {
			return false
		}
		back = time.Now()
		return true
	})
	next, err := strconv.ParseInt(hget(t, rdb, name, "next_run"), 10, 64)
	must(t, err)
	// Registered at most a poll before back; due after that plus the TTL
	// and a heartbeat (6s). Two heartbeats, the old delay, would be 2-3s.
	if due := time.UnixMilli(next).Sub(back); due < ttl {
		t.Errorf("first due %v after the task was registered again, want at least the process TTL %v", due, ttl)
	}
}
