package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// loadScripts loads scripts into the server's script cache (on every
// master of a cluster), so pipelines can call them with EVALSHA.
func loadScripts(ctx context.Context, rdb redis.UniversalClient, scripts ...*redis.Script) error {
	for _, sc := range scripts {
		if err := sc.Load(ctx, rdb).Err(); err != nil {
			return fmt.Errorf("crontab: load script: %w", err)
		}
	}
	return nil
}

// isNoScript reports whether err says the script cache lacks a script, as
// after a Redis restart.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// pipelined runs fill in a pipeline and executes it. If the server lost
// its script cache (a restart), it loads scripts and runs once more. fill
// must queue the same commands on every call; the commands of the last
// execution are what it returned.
func pipelined[T any](ctx context.Context, rdb redis.UniversalClient, scripts []*redis.Script, fill func(redis.Pipeliner) T) (T, error) {
	var out T
	for attempt := 0; ; attempt++ {
		pipe := rdb.Pipeline()
		out = fill(pipe)
		_, err := pipe.Exec(ctx)
		if !isNoScript(err) || attempt > 0 {
			return out, err
		}
		if lerr := loadScripts(ctx, rdb, scripts...); lerr != nil {
			return out, lerr
		}
	}
}
