package rdb

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestPipelinedSendsAgainOnlyMissingScripts: when a script is loaded while
// a pipeline runs (here by the pipeline itself, as another connection
// would), the calls after that point ran; after NOSCRIPT only the calls
// that found the script missing are sent again, so each runs once.
func TestPipelinedSendsAgainOnlyMissingScripts(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	incr := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	must(t, c.ScriptFlush(ctx).Err())
	cmds, err := pipelined(ctx, c, []*redis.Script{incr}, func(pipe redis.Pipeliner) []*redis.Cmd {
		first := incr.EvalSha(ctx, pipe, []string{"n"})            // NOSCRIPT
		pipe.ScriptLoad(ctx, `return redis.call('INCR', KEYS[1])`) // loaded mid-pipeline
		second := incr.EvalSha(ctx, pipe, []string{"n"})           // runs
		return []*redis.Cmd{first, second}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Get(ctx, "n").Int(); n != 2 {
		t.Errorf("counter %d after two calls, want 2 (a call ran twice)", n)
	}
	a, _ := cmds[0].Int()
	b, _ := cmds[1].Int()
	if a+b != 3 || a == b {
		t.Errorf("replies %d and %d, want 1 and 2 in some order", a, b)
	}
}
