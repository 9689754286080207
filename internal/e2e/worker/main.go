// Command worker is the scheduler process of the end-to-end tests: the
// tests build it, start several copies against a private redis-server, kill
// some, and read back what its tasks recorded.
//
// Environment: REDIS_URL (required), WORKER_TASKS (comma-separated task
// names to run; default all), WORKER_CLOCK_OFFSET (a Go duration added to
// this process's local clock, to test skew), WORKER_ID (process id),
// WORKER_RUN_LEASE (a Go duration for WithRunLease; default the runtime's),
// WORKER_MAX_RUNNING (the count job's TaskConfig.MaxRunning), WORKER_RATE
// (the count job's TaskConfig.Rate, "N/D"), WORKER_WORKERS (WithWorkers).
// With WORKER_PRODUCE set it runs no scheduler: it enqueues count jobs and
// exits (see produce).
// The task "capped" (only when WORKER_TASKS names it) is concurrent with
// max_running=1, every second, and holds its slot until the worker stops;
// each run appends "process|fire_ms|start_ms" to cappedKey as it starts.
// The Abandoned hook appends "task|fire_ms|process|by" to the list
// tasks.AbandonedKey.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	opt, err := redis.ParseURL(os.Getenv("REDIS_URL"))
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	tasks.Recorder = rdb

	all := crontab.NewRegistry()
	if err := tasks.Register(all); err != nil {
		return err
	}
	reg := all
	if names := os.Getenv("WORKER_TASKS"); names != "" {
		reg = crontab.NewRegistry()
		for _, name := range strings.Split(names, ",") {
			cfg, ok := all.Lookup(name)
			if name == cappedName {
				cfg, ok = cappedTask(), true
			}
			if !ok {
				return fmt.Errorf("WORKER_TASKS: no task %q", name)
			}
			if err := reg.Add(cfg); err != nil {
				return err
			}
		}
	}
	if mr, rate := os.Getenv("WORKER_MAX_RUNNING"), os.Getenv("WORKER_RATE"); mr != "" || rate != "" {
		var n int
		var r crontab.Rate
		if mr != "" {
			if n, err = strconv.Atoi(mr); err != nil {
				return fmt.Errorf("WORKER_MAX_RUNNING: %w", err)
			}
		}
		if rate != "" {
			if r, err = crontab.ParseRate(rate); err != nil {
				return fmt.Errorf("WORKER_RATE: %w", err)
			}
		}
		if reg, err = tasks.LimitCount(reg, n, r); err != nil {
			return err
		}
	}
	if os.Getenv("WORKER_PRODUCE") != "" {
		return produce(rdb, reg)
	}
	local := time.Now
	if s := os.Getenv("WORKER_CLOCK_OFFSET"); s != "" {
		off, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("WORKER_CLOCK_OFFSET: %w", err)
		}
		local = func() time.Time { return time.Now().Add(off) }
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	id := os.Getenv("WORKER_ID")
	opts := []crontab.Option{
		crontab.WithLogger(logger),
		crontab.WithProcessID(id),
		crontab.WithLocalClock(local),
		crontab.WithProcessTTL(2 * time.Second),
		crontab.WithGracePeriod(5 * time.Second),
		crontab.WithHooks(crontab.Hooks{Abandoned: func(ctx context.Context, run crontab.RunInfo) {
			rec := fmt.Sprintf("%s|%d|%s|%s", run.Task, run.Fire.UnixMilli(), run.Process, id)
			_ = rdb.RPush(context.WithoutCancel(ctx), tasks.AbandonedKey, rec).Err()
		}}),
	}
	if s := os.Getenv("WORKER_RUN_LEASE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("WORKER_RUN_LEASE: %w", err)
		}
		opts = append(opts, crontab.WithRunLease(d))
	}
	if s := os.Getenv("WORKER_WORKERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("WORKER_WORKERS: %w", err)
		}
		opts = append(opts, crontab.WithWorkers(n))
	}
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.Run(ctx)
}

// cappedName is the max_running test task, run only when WORKER_TASKS
// names it; cappedKey is its record list.
const (
	cappedName = "capped"
	cappedKey  = "e2e:capped"
)

// capped holds a fire slot of its type until the worker stops.
type capped struct{}

// Handle records the start and waits for the worker's shutdown.
func (capped) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	rec := fmt.Sprintf("%s|%d|%d", run.Process, run.Fire.UnixMilli(), time.Now().UnixMilli())
	if err := tasks.Recorder.RPush(context.WithoutCancel(ctx), cappedKey, rec).Err(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
	}
	return nil
}

func cappedTask() crontab.TaskConfig {
	return crontab.TaskConfig{Name: cappedName, Expression: "every:1s", Concurrent: true, MaxRunning: 1,
		Timeout: time.Minute, New: func() crontab.TaskInterface { return capped{} }}
}
