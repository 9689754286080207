// Command worker runs the delayed SMS jobs that ../producer enqueues. Start
// as many as you like: each job runs once, on one of them.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/delayed/worker
//
// With REDIS_URL unset it uses the Redis at 127.0.0.1:6379, and fails with a
// one-line hint when none answers there: the producer and the workers must
// share one Redis, so it starts no private one.
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

	"github.com/gocrontab/crontab/examples/delayed/sms"
	"github.com/gocrontab/crontab/internal/devredis"
	"github.com/gocrontab/crontab/internal/redisnet"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	redisnet.RouteLogs(nil) // go-redis's own lines: off
	// REDIS_URL, else the Redis at 127.0.0.1:6379. No private server: the
	// processes of this example share their Redis.
	r, err := devredis.Open(context.Background(), devredis.Config{Name: "worker"})
	if err != nil {
		return err
	}
	rdb := redis.NewClient(r.Options())
	defer rdb.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := sms.NewScheduler(rdb,
		crontab.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))),
		crontab.WithNamespace(namespace()),
		crontab.WithRetryBackoff(200*time.Millisecond),
	)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// namespace is $CRONTAB_NAMESPACE, or the default namespace when it is unset.
func namespace() string {
	if ns := os.Getenv("CRONTAB_NAMESPACE"); ns != "" {
		return ns
	}
	return crontab.DefaultNamespace
}
