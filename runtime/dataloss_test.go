package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// After Redis lost its data mid-run, the run's process writes its run's
// state again: the lock, the lease (its field of runs) and the run lease, which its
// renewals keep, so no "run lease lost" error is logged and a peer would
// take the lock over if the process died before the run ends.
func TestDataLossRestoresRunsInProgress(t *testing.T) {
	t.Parallel()
	rdbc, logs, _, runID := longRun(t)
	ctx := context.Background()
	name := t.Name()
	k := newKeys("crontab")
	lock := rdbc.Get(ctx, k.Lock(name)).Val()
	must(t, rdbc.FlushAll(ctx).Err()) // the test's own redis-server
	waitFor(t, 3*time.Second, "the run's state written again", func() bool {
		return rdbc.HExists(ctx, k.Runs(), runID).Val()
	})
	time.Sleep(1500 * time.Millisecond) // a run lease: renewals must have found it
	if v := rdbc.Get(ctx, k.Lock(name)).Val(); v != lock {
		t.Errorf("lock %q after the loss, want the run's %q", v, lock)
	}
	if dl, err := rdbc.ZScore(ctx, k.Alive(), runID).Result(); err != nil || int64(dl) < time.Now().UnixMilli() {
		t.Errorf("run lease %v (%v): want one ahead", int64(dl), err)
	}
	if _, err := rdb.ParseLease(rdbc.HGet(ctx, k.Runs(), runID).Val()); err != nil {
		t.Errorf("lease in runs: %v", err)
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
	rdbc, logs, s, runID := longRun(t)
	ctx := context.Background()
	k := newKeys("crontab")
	gone := time.Now()
	must(t, rdbc.ZRem(ctx, k.Alive(), runID).Err())
	waitFor(t, 2*time.Second, "the lost lease logged", func() bool { return len(logs.lines("run lease lost")) > 0 })
	if d := time.Since(gone); d < 2*s.opts.heartbeat {
		t.Errorf("logged %v after the lease was gone, want after two heartbeats (%v)", d, 2*s.opts.heartbeat)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(logs.lines("run lease lost")); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}

// longRun starts a scheduler, on a redis-server of the test's own, of a
// non-concurrent every:1s task named after the test whose runs last 3s,
// and waits for a run. It returns a client, the scheduler's log, the
// scheduler and the run's id.
func longRun(t *testing.T) (*redis.Client, *logCapture, *Scheduler, string) {
	t.Helper()
	rdbc := redistest.Start(t).Client(t)
	name := t.Name()
	spans := newSpanLog()
	behave(t, name, func(ctx context.Context) error { return spans.run(ctx, 3*time.Second) })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: 20 * time.Second, New: probeNew(0)})
	logs, logger := newLogCapture()
	s, _ := runScheduler(t, rdbc, reg, WithLogger(logger))
	waitFor(t, 5*time.Second, "a run", func() bool { return spans.startsOf(name) > 0 })
	members := rdbc.HKeys(context.Background(), newKeys("crontab").Runs()).Val()
	if len(members) != 1 {
		t.Fatalf("runs holds %v, want the one run", members)
	}
	return rdbc, logs, s, members[0]
}
