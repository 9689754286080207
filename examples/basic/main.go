// Command basic runs the example's tasks against Redis. Start it in as many
// terminals as you like: every instant fires once, in one of them.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/basic
//
// Ctrl-C stops it gracefully.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/examples/basic/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "basic:", err)
		os.Exit(1)
	}
}

func run() error {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("REDIS_URL %q: %w", url, err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger)
	s, err := tasks.NewScheduler(rdb,
		crontab.WithLogger(logger),
		crontab.WithNamespace(namespace()),
		crontab.WithGracePeriod(10*time.Second),
		crontab.WithListener(crontab.ListenerFunc(printRun)),
		// Each run of "minute report" gets a copy of this value, Store included.
		crontab.Provide(&tasks.Report{Store: &tasks.Reports{}}),
	)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scheduler %s running against %s; Ctrl-C stops it\n", s.ID(), opt.Addr)
	return s.Run(ctx)
}

// printRun shows each completed run as it happens.
func printRun(_ context.Context, r crontab.Result) {
	status := "ok"
	if !r.OK {
		status = "FAILED: " + r.Err.Error()
	}
	lag := r.Start.Sub(r.Fire)
	fmt.Printf("%s  %-14s fire=%s lag=%-8s cost=%-8s %s\n", time.Now().Format("15:04:05.000"), r.Task,
		r.Fire.Format(time.TimeOnly), lag.Round(time.Millisecond/10), r.Cost.Round(time.Millisecond), status)
}

// namespace is $CRONTAB_NAMESPACE, or the default namespace when it is unset.
func namespace() string {
	if ns := os.Getenv("CRONTAB_NAMESPACE"); ns != "" {
		return ns
	}
	return crontab.DefaultNamespace
}
