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
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	reg := testRegistry(t, TaskConfig{Name: "tenant", New: probeNew(0)})
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
	s, err := NewScheduler(rdb, reg, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.clock.Sync(ctx, 3))
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
