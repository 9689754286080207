package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// After Redis lost its data mid-run, the run's process writes its run's
// state again: the lock, the running entry and the run lease, which its
// renewals keep, so no "run lease lost" error is logged and a peer would
// take the lock over if the process died before the run ends.
func TestDataLossRestoresRunsInProgress(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdbc := srv.Client(t)
	ctx := context.Background()
	name := t.Name()
	spans := newSpanLog()
	behave(t, name, func(ctx context.Context) error { return spans.run(ctx, 3*time.Second) })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: 20 * time.Second, New: probeNew(0)})
	logs, logger := newLogCapture()
	runScheduler(t, rdbc, reg, WithLogger(logger))
	waitFor(t, 5*time.Second, "a run", func() bool { return spans.startsOf(name) > 0 })
	k := newKeys("crontab")
	members := rdbc.SMembers(ctx, k.Running()).Val()
	if len(members) != 1 {
		t.Fatalf("running holds %v, want the one run", members)
	}
	runID := members[0]
	lock := rdbc.Get(ctx, k.Lock(name)).Val()
	must(t, rdbc.FlushAll(ctx).Err()) // the test's own redis-server
	waitFor(t, 3*time.Second, "the run's state written again", func() bool {
		return rdbc.SIsMember(ctx, k.Running(), runID).Val()
	})
	time.Sleep(1500 * time.Millisecond) // a run lease: renewals must have found it
	if v := rdbc.Get(ctx, k.Lock(name)).Val(); v != lock {
		t.Errorf("lock %q after the loss, want the run's %q", v, lock)
	}
	if dl, err := rdbc.ZScore(ctx, k.Alive(), runID).Result(); err != nil || int64(dl) < time.Now().UnixMilli() {
		t.Errorf("run lease %v (%v): want one ahead", int64(dl), err)
	}
	if _, err := rdb.ParseLease(rdbc.Get(ctx, k.Run(runID)).Val()); err != nil {
		t.Errorf("lease key: %v", err)
	}
	if l := logs.lines("run lease lost"); len(l) > 0 {
		t.Errorf("logged %v", l)
	}
}

// A run lease gone while its run goes on (a peer took the lock over: this
// process was cut off for longer than the lease) is logged, once, within
// two heartbeats and a renewal.
func TestLostRunLeaseIsReported(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdbc := srv.Client(t)
	ctx := context.Background()
	name := t.Name()
	spans := newSpanLog()
	behave(t, name, func(ctx context.Context) error { return spans.run(ctx, 3*time.Second) })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: 20 * time.Second, New: probeNew(0)})
	logs, logger := newLogCapture()
	s, _ := runScheduler(t, rdbc, reg, WithLogger(logger))
	waitFor(t, 5*time.Second, "a run", func() bool { return spans.startsOf(name) > 0 })
	k := newKeys("crontab")
	members := rdbc.SMembers(ctx, k.Running()).Val()
	if len(members) != 1 {
		t.Fatalf("running holds %v, want the one run", members)
	}
	gone := time.Now()
	must(t, rdbc.ZRem(ctx, k.Alive(), members[0]).Err())
	waitFor(t, 2*time.Second, "the lost lease logged", func() bool { return len(logs.lines("run lease lost")) > 0 })
	if d := time.Since(gone); d < 2*s.opts.heartbeat {
		t.Errorf("logged %v after the lease was gone, want after two heartbeats (%v)", d, 2*s.opts.heartbeat)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(logs.lines("run lease lost")); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}
