// Command roles runs one build of ./tasks as either of two fleets that
// share a Redis namespace: -role scheduler fires the periodic tasks, -role
// worker runs the "send sms" jobs they enqueue. See doc.go.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role scheduler
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role worker
//
// Ctrl-C stops it gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/examples/roles/tasks"
	"github.com/gocrontab/crontab/internal/devredis"
	"github.com/gocrontab/crontab/internal/redisnet"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	role := flag.String("role", "", `the fleet this process belongs to: "scheduler" (the periodic tasks) or "worker" (the "send sms" jobs)`)
	flag.Parse()
	if err := run(*role); err != nil {
		fmt.Fprintln(os.Stderr, "roles:", err)
		os.Exit(1)
	}
}

func run(role string) error {
	redisnet.RouteLogs(nil) // go-redis's own lines: off
	// REDIS_URL, else the Redis at 127.0.0.1:6379. No private server: the
	// processes of this example share their Redis.
	r, err := devredis.Open(context.Background(), devredis.Config{Name: "roles"})
	if err != nil {
		return err
	}
	rdb := redis.NewClient(r.Options())
	defer rdb.Close()
	ns := crontab.WithNamespace(namespace())

	var only crontab.Option
	switch role {
	case "scheduler":
		// Every periodic task of the package: the types with an
		// expression. Their jobs are enqueued with a client.
		names, err := periodic()
		if err != nil {
			return err
		}
		only = crontab.WithTasks(names...)
		tasks.Use(tasks.NewClient(rdb, ns))
	case "worker":
		only = crontab.WithTasks("send sms")
	default:
		return fmt.Errorf("-role %q: want scheduler or worker", role)
	}
	s, err := tasks.NewScheduler(rdb, only, ns,
		crontab.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.Run(ctx)
}

// periodic returns the names of the package's periodic tasks.
func periodic() ([]string, error) {
	r := crontab.NewRegistry()
	if err := tasks.Register(r); err != nil {
		return nil, err
	}
	var names []string
	for _, c := range r.Tasks() {
		if c.Expression != "" {
			names = append(names, c.Name)
		}
	}
	return names, nil
}

// namespace is $CRONTAB_NAMESPACE, or the default namespace when it is unset.
func namespace() string {
	if ns := os.Getenv("CRONTAB_NAMESPACE"); ns != "" {
		return ns
	}
	return crontab.DefaultNamespace
}
