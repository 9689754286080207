package redistest

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Counter is a go-redis hook that counts what a client sends: each command,
// alone or in a pipeline, goes to the label its classify function gives it,
// with the weight it gives ("" is not counted). Tests use it to show how
// many reads an operation costs (a page of tasks reads one hash per task).
type Counter struct {
	classify func(redis.Cmder) (label string, weight int64)
	mu       sync.Mutex
	n        map[string]int64
}

// CountCommands adds a Counter to c. classify nil counts each command once
// under its lower-case name (hgetall, hmget, sscan, ...).
func CountCommands(c redis.UniversalClient, classify func(cmd redis.Cmder) (label string, weight int64)) *Counter {
	if classify == nil {
		classify = func(cmd redis.Cmder) (string, int64) { return cmd.Name(), 1 }
	}
	cnt := &Counter{classify: classify, n: map[string]int64{}}
	c.AddHook(cnt)
	return cnt
}

// Count is what the label counted since the counter was added or reset.
func (c *Counter) Count(label string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[label]
}

// Reset sets every count to 0.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.n)
}

func (c *Counter) add(cmd redis.Cmder) {
	label, w := c.classify(cmd)
	if label == "" {
		return
	}
	c.mu.Lock()
	c.n[label] += w
	c.mu.Unlock()
}

// DialHook is go-redis's: the counter leaves dialing alone.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts a command sent alone.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.add(cmd); return next(ctx, cmd) }
}

// ProcessPipelineHook counts each command of a pipeline.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd)
		}
		return next(ctx, cmds)
	}
}
