package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

// produce is the worker's producer mode: WORKER_PRODUCE_GOROUTINES
// goroutines (default 1) each enqueue WORKER_PRODUCE count jobs, one after
// the other, from the instant WORKER_PRODUCE_AT (unix ms; default at once),
// so that several producer processes enqueue at the same time. A job's N
// is WORKER_PRODUCE_BASE (default 0), plus, with WORKER_PRODUCE_DISTINCT=1,
// the enqueue's number in this process (g*WORKER_PRODUCE + i), so that the
// payloads differ. WORKER_UNIQUE_TTL (Unique), WORKER_UNIQUE_KEY
// (UniqueKey) and WORKER_DEBOUNCE (Debounce) are the enqueue's options.
// Each enqueue appends its outcome to tasks.ProducedKey.
func produce(rdb *redis.Client, reg *crontab.Registry) error {
	ctx := context.Background()
	env := func(name string, def int) (int, error) {
		s := os.Getenv(name)
		if s == "" {
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return n, nil
	}
	each, err := env("WORKER_PRODUCE", 0)
	if err != nil {
		return err
	}
	goroutines, err := env("WORKER_PRODUCE_GOROUTINES", 1)
	if err != nil {
		return err
	}
	base, err := env("WORKER_PRODUCE_BASE", 0)
	if err != nil {
		return err
	}
	atMS, err := env("WORKER_PRODUCE_AT", 0)
	if err != nil {
		return err
	}
	distinct := os.Getenv("WORKER_PRODUCE_DISTINCT") == "1"
	var opts []crontab.EnqueueOption
	for _, o := range []struct {
		name string
		opt  func(time.Duration) crontab.EnqueueOption
	}{{"WORKER_UNIQUE_TTL", crontab.Unique}, {"WORKER_DEBOUNCE", crontab.Debounce}} {
		if s := os.Getenv(o.name); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			opts = append(opts, o.opt(d))
		}
	}
	if key := os.Getenv("WORKER_UNIQUE_KEY"); key != "" {
		opts = append(opts, crontab.UniqueKey(key))
	}
	c := crontab.NewClient(rdb, reg)
	id := os.Getenv("WORKER_ID")
	time.Sleep(time.Until(time.UnixMilli(int64(atMS))))
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				n := base
				if distinct {
					n += g*each + i
				}
				if errs[g] = enqueueOne(ctx, rdb, c, id, n, opts); errs[g] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// enqueueOne enqueues count job n with opts and records the outcome, with
// the Redis server's time before and after it, in tasks.ProducedKey.
func enqueueOne(ctx context.Context, rdb *redis.Client, c *crontab.Client, process string, n int, opts []crontab.EnqueueOption) error {
	before, err := rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("redis time: %w", err)
	}
	jobID, err := c.Enqueue(ctx, tasks.Count{N: n}, opts...)
	after, terr := rdb.Time(ctx).Result()
	if terr != nil {
		return fmt.Errorf("redis time: %w", terr)
	}
	result, msg := "ok", ""
	var dup *crontab.DuplicateError
	switch {
	case errors.As(err, &dup):
		result, jobID = "dup", dup.ID
	case err != nil:
		result, msg = "err", err.Error()
	}
	rec := fmt.Sprintf("%d|%s|%s|%d|%d|%s|%s", n, result, jobID, before.UnixMicro(), after.UnixMicro(), process, msg)
	if err := rdb.RPush(ctx, tasks.ProducedKey, rec).Err(); err != nil {
		return fmt.Errorf("record %s: %w", tasks.ProducedKey, err)
	}
	return nil
}
