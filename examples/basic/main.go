// Command basic runs the example's tasks against Redis. Start it in as many
// terminals as you like: every instant fires once, in one of them.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/basic
//
// With REDIS_URL unset it uses the Redis at 127.0.0.1:6379
// ($CRONTAB_DEV_REDIS_ADDR), and when none answers there it starts a
// private redis-server for this run (the one on PATH) and says so; that
// server is stopped, and its files removed, when basic exits. Processes with
// private servers do not share their work: set REDIS_URL for that.
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
	"github.com/gocrontab/crontab/internal/devredis"
	"github.com/gocrontab/crontab/internal/redisnet"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "basic:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger)
	redisnet.RouteLogs(logger) // go-redis's own lines at debug level: off

	// REDIS_URL, else the Redis at 127.0.0.1:6379, else a private one.
	r, err := devredis.Open(ctx, devredis.Config{Name: "basic", Private: true})
	if err != nil {
		return err
	}
	defer r.Close() // stops a private server
	rdb := redis.NewClient(r.Options())
	defer rdb.Close()
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
	fmt.Fprintf(os.Stderr, "scheduler %s running against %s; Ctrl-C stops it\n", s.ID(), r.Addr)
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
