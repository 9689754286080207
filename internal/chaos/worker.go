package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/chaos/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

// WorkerArg, as the first argument, runs the soak's own binary (the
// command, or the test binary through TestMain) as a worker process: see
// WorkerMain. Running the same executable keeps the worker built as the
// harness is, with -race when the tests run with -race.
const WorkerArg = "__chaos_worker"

// Namespace is the soak's crontab namespace.
const Namespace = "chaos"

// gracePeriod is the workers' WithGracePeriod: longer than any handler of
// package tasks, so a SIGTERM never cuts a run short.
const gracePeriod = 5 * time.Second

// WorkerMain is the worker mode: the scheduler generated for package tasks,
// on -redis (the worker's proxy), with process id -id, writing the journal
// -journal. It logs to stderr (the scheduler's "scheduler started" line
// tells the supervisor that an error exit came after the start), stops
// gracefully on SIGTERM, and returns the process's exit code: 0 after a
// graceful stop, 1 on an error.
func WorkerMain(args []string) int {
	if err := runWorker(args); err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		return 1
	}
	return 0
}

func runWorker(args []string) error {
	fs := flag.NewFlagSet("chaos "+WorkerArg, flag.ContinueOnError)
	url := fs.String("redis", "", "redis URL")
	id := fs.String("id", "", "process id")
	journal := fs.String("journal", "", "journal file")
	ttl := fs.Duration("ttl", 3*time.Second, "WithProcessTTL")
	history := fs.Int("history", 10000, "history records kept per task")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *id == "" || *journal == "" {
		return errors.New("-redis, -id and -journal are required")
	}
	opt, err := redis.ParseURL(*url)
	if err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	w, err := tasks.Create(*journal)
	if err != nil {
		return err
	}
	tasks.Journal = w
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, err := tasks.NewScheduler(rdb,
		crontab.WithNamespace(Namespace),
		crontab.WithLogger(logger),
		crontab.WithProcessID(*id),
		crontab.WithProcessTTL(*ttl),
		crontab.WithGracePeriod(gracePeriod),
		crontab.WithHistory(*history, 24*time.Hour),
		crontab.WithRetryBackoff(200*time.Millisecond),
	)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	runErr := s.Run(ctx)
	if err := w.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("journal: %w", err)
	}
	return runErr
}
