// Command producer enqueues a few delayed SMS jobs, cancels one, and
// exits. It runs no scheduler: start ../worker (one or several) to run the
// jobs.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/delayed/producer
//
// With REDIS_URL unset it uses the Redis at 127.0.0.1:6379, and fails with a
// one-line hint when none answers there: the producer and the workers must
// share one Redis, so it starts no private one.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/examples/delayed/sms"
	"github.com/gocrontab/crontab/internal/devredis"
	"github.com/gocrontab/crontab/internal/redisnet"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

func run() error {
	redisnet.RouteLogs(nil) // go-redis's own lines: off
	// REDIS_URL, else the Redis at 127.0.0.1:6379. No private server: the
	// processes of this example share their Redis.
	r, err := devredis.Open(context.Background(), devredis.Config{Name: "producer"})
	if err != nil {
		return err
	}
	rdb := redis.NewClient(r.Options())
	defer rdb.Close()
	ctx := context.Background()
	c := sms.NewClient(rdb, crontab.WithNamespace(namespace()))

	for i, d := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		id, err := c.Enqueue(ctx, sms.SendSMS{To: fmt.Sprintf("+1555000%d", i), Text: "your code is 1234"}, crontab.In(d))
		if err != nil {
			return err
		}
		fmt.Printf("enqueued %s, due in %v\n", id, d)
	}
	// An order confirmation, idempotent by its id: enqueueing it twice is
	// harmless.
	for range 2 {
		_, err := c.Enqueue(ctx, sms.SendSMS{To: "+15550100", Text: "order 42 shipped"},
			crontab.In(1500*time.Millisecond), crontab.WithID("order-42-shipped"))
		if errors.Is(err, crontab.ErrDuplicate) {
			fmt.Println("order-42-shipped already enqueued")
		} else if err != nil {
			return err
		}
	}
	// A reminder that the user no longer needs: cancelled, it never runs.
	id, err := c.Enqueue(ctx, sms.SendSMS{To: "+15550199", Text: "reminder"}, crontab.In(2*time.Second))
	if err != nil {
		return err
	}
	if err := c.Cancel(ctx, id); err != nil {
		return err
	}
	fmt.Printf("cancelled %s\n", id)
	// A job that always fails: retried 3 times with backoff, then dead.
	id, err = c.Enqueue(ctx, sms.SendSMS{To: "+0001", Text: "to nowhere"})
	if err != nil {
		return err
	}
	fmt.Printf("enqueued %s (it will fail and end in the dead letters)\n", id)
	return nil
}

// namespace is $CRONTAB_NAMESPACE, or the default namespace when it is unset.
func namespace() string {
	if ns := os.Getenv("CRONTAB_NAMESPACE"); ns != "" {
		return ns
	}
	return crontab.DefaultNamespace
}
