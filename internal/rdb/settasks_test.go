package rdb

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// splitLoad is a hook that, once, sends the first command of a pipeline,
// then loads script from another connection, then sends the rest: the
// first call finds the script missing and the others find it, as when
// another process loads it while the pipeline runs.
type splitLoad struct {
	other  *redis.Client
	script *redis.Script
	done   atomic.Bool
}

func (h *splitLoad) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *splitLoad) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *splitLoad) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) < 2 || h.done.Swap(true) {
			return next(ctx, cmds)
		}
		err := next(ctx, cmds[:1])
		if lerr := h.script.Load(ctx, h.other).Err(); lerr != nil {
			return lerr
		}
		if err2 := next(ctx, cmds[1:]); err == nil {
			err = err2
		}
		return err
	}
}

// A batch of RemoveTasks runs once even when the script is loaded by
// another connection in the middle of its pipeline: only the calls that
// found it missing are sent again, so no key is reported absent after its
// own batch removed it.
func TestRemoveTasksRunsEachBatchOnce(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	if _, err := r.SetTasks(ctx, 500, []TaskDecl{{Key: "a", Type: "a", Expression: "every:1s", NextMS: 1000},
		{Key: "b", Type: "a", Expression: "every:1s", NextMS: 1000}, {Key: "c", Type: "a", Expression: "every:1s", NextMS: 1000}}, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	hooked := redis.NewClient(&redis.Options{Network: srv.Network(), Addr: srv.Addr()})
	defer hooked.Close()
	hooked.AddHook(&splitLoad{other: c, script: removeTasksScript})
	out, err := New(hooked, "ns").RemoveTasks(ctx, []string{"a", "b", "c"}, 1) // three batches, one pipeline
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Result != 1 || o.Err != nil {
			t.Errorf("key %d: %+v, want removed", i, o)
		}
	}
	if n := c.Exists(ctx, r.k.Task("a"), r.k.Task("b"), r.k.Task("c")).Val(); n != 0 {
		t.Errorf("%d task hashes left", n)
	}
}
