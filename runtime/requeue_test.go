package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// zmscoreCounter is a go-redis hook that counts the members asked for by
// ZMSCORE commands.
type zmscoreCounter struct{ members atomic.Int64 }

func (c *zmscoreCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *zmscoreCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "zmscore") {
			c.members.Add(int64(len(cmd.Args()) - 2))
		}
		return next(ctx, cmd)
	}
}

func (c *zmscoreCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRequeueReadsAPagePerTick: with more tasks than requeueBudget, one
// requeue reads a bounded page of the tasks (not all of them), yet a task
// an operator enabled again with a plain HSET is queued at the first tick
// (it is in the unqueued set), and a task whose queue entry was lost is
// queued within the ticks one pass over the tasks set takes.
func TestRequeueReadsAPagePerTick(t *testing.T) {
	t.Parallel()
	rdb, reg := tenantRig(t)
	ctx := context.Background()
	k := newKeys("crontab")
	c := NewClient(rdb, reg)
	const n = 3*requeueBudget + 500
	pipe := rdb.Pipeline()
	for i := range n {
		key := fmt.Sprintf("t%05d", i)
		pipe.HSet(ctx, k.Task(key), "name", key, "type", "tenant", "expression", "every:1h", "tz", "UTC",
			"status", "active", "next_run", time.Now().Add(time.Hour).UnixMilli(), "source", "dynamic")
		pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: key})
		pipe.SAdd(ctx, k.Tasks(), key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTask(ctx, TaskSpec{Key: "enabled", Type: "tenant", Expression: "every:1h"}); err != nil {
		t.Fatal(err)
	}
	ins := NewInspector(rdb)
	must(t, ins.Disable(ctx, "enabled"))
	if ok, _ := rdb.SIsMember(ctx, k.Unqueued(), "enabled").Result(); !ok {
		t.Fatal("a disabled task is not in the unqueued set")
	}
	must(t, rdb.HSet(ctx, k.Task("enabled"), "status", "active").Err()) // the operator's plain HSET
	must(t, rdb.ZRem(ctx, k.Queue(), "t00042").Err())                   // a lost queue entry

	counter := &zmscoreCounter{}
	rdb.AddHook(counter)
	s := maintainerOnly(t, rdb, reg)
	queued := func(key string) bool {
		_, err := rdb.ZScore(ctx, k.Queue(), key).Result()
		return err == nil
	}
	must(t, s.maint.requeue(ctx))
	if !queued("enabled") {
		t.Error("a task enabled again with HSET was not queued at the first tick")
	}
	if ok, _ := rdb.SIsMember(ctx, k.Unqueued(), "enabled").Result(); ok {
		t.Error("a requeued task is still in the unqueued set")
	}
	if got := counter.members.Load(); got > 2*requeueBudget+1000 {
		t.Errorf("one tick asked the queue for %d scores of %d tasks; want at most a page", got, n)
	}
	ticks := 1
	for ; !queued("t00042") && ticks < n/requeueBudget+2; ticks++ {
		must(t, s.maint.requeue(ctx))
	}
	if !queued("t00042") {
		t.Errorf("a lost queue entry was not requeued within %d ticks", ticks)
	}
}

// A run-time task is in no index but the queue: when its queue entry is
// lost, the invariant sweep finds its hash and puts it in the unqueued
// set, so that it is listed and counted again, and the next requeue puts
// it back in the queue at its next instant.
func TestLostQueueEntryOfARunTimeTaskComesBack(t *testing.T) {
	t.Parallel()
	rdb, reg := tenantRig(t)
	ctx := context.Background()
	k := newKeys("crontab")
	c := NewClient(rdb, reg)
	for _, key := range []string{"kept", "lost"} {
		must(t, c.SetTask(ctx, TaskSpec{Key: key, Type: "tenant", Expression: "every:1h"}))
	}
	must(t, rdb.ZRem(ctx, k.Queue(), "lost").Err())
	ins := NewInspector(rdb)
	if ov, err := ins.Overview(ctx); err != nil || ov.Tasks != 1 {
		t.Fatalf("overview with the entry lost: %d tasks (%v), want 1", ov.Tasks, err)
	}

	s := maintainerOnly(t, rdb, reg)
	sweepPass(t, s)
	if !rdb.SIsMember(ctx, k.Unqueued(), "lost").Val() {
		t.Fatal("the sweep did not put the task in no index in the unqueued set")
	}
	tasks, err := ins.ListTasks(ctx)
	if err != nil || len(tasks) != 2 {
		t.Errorf("ListTasks after the sweep: %d tasks (%v), want 2", len(tasks), err)
	}
	must(t, s.maint.requeue(ctx))
	next, err := rdb.ZScore(ctx, k.Queue(), "lost").Result()
	if err != nil || time.UnixMilli(int64(next)).Before(time.Now()) {
		t.Errorf("after the requeue: score %v, %v; want queued at its next instant", next, err)
	}
	if rdb.SIsMember(ctx, k.Unqueued(), "lost").Val() {
		t.Error("the requeued task is still in the unqueued set")
	}
	if ov, err := ins.Overview(ctx); err != nil || ov.Tasks != 2 || ov.Repaired[RepairIndex] != 1 {
		t.Errorf("overview: %d tasks, %d index repairs (%v); want 2 and 1", ov.Tasks, ov.Repaired[RepairIndex], err)
	}
}

// A task the requeue finds in the tasks set but cannot queue (disabled,
// no instant left), and in neither index, goes in the unqueued set: it is
// counted and listed without the tasks set.
func TestRequeueIndexesWhatItCannotQueue(t *testing.T) {
	t.Parallel()
	rdb, reg := tenantRig(t)
	ctx := context.Background()
	k := newKeys("crontab")
	// As an older release left them: in the tasks set only.
	must(t, rdb.HSet(ctx, k.Task("ended"), "type", "tenant", "expression", "at:1", "next_run", 0).Err())
	must(t, rdb.HSet(ctx, k.Task("off"), "type", "tenant", "expression", "every:1h", "next_run", 0, "status", "disabled").Err())
	must(t, rdb.SAdd(ctx, k.Tasks(), "ended", "off").Err())
	s := maintainerOnly(t, rdb, reg)
	must(t, s.maint.requeue(ctx))
	for _, key := range []string{"ended", "off"} {
		if !rdb.SIsMember(ctx, k.Unqueued(), key).Val() || rdb.ZScore(ctx, k.Queue(), key).Err() == nil {
			t.Errorf("%s: not in the unqueued set, or queued", key)
		}
	}
	if ov, err := NewInspector(rdb).Overview(ctx); err != nil || ov.Tasks != 2 {
		t.Errorf("overview: %d tasks (%v), want 2", ov.Tasks, err)
	}
}

// tenantRig returns a client of a Redis of the test's own and a registry
// of one task type, "tenant".
func tenantRig(t *testing.T) (*redis.Client, *Registry) {
	t.Helper()
	return redistest.Start(t).Client(t), testRegistry(t, TaskConfig{Name: "tenant", New: probeNew(0)})
}

// maintainerOnly returns a scheduler that is never run, its clock synced,
// whose maintainer's duties a test calls directly.
func maintainerOnly(t *testing.T, rdb *redis.Client, reg *Registry) *Scheduler {
	t.Helper()
	s, err := NewScheduler(rdb, reg, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.clock.Sync(context.Background(), 3))
	return s
}
