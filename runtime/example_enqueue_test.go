package runtime_test

import (
	"context"
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// SendWelcome is a job type: it has no expression, so it runs only when
// enqueued, with its fields as the payload.
type SendWelcome struct {
	User string `json:"user"`
}

// Handle runs one enqueued job.
func (j SendWelcome) Handle(ctx context.Context) error {
	fmt.Println("welcome,", j.User)
	return nil
}

// A Client enqueues jobs: In delays a job by a duration, At schedules it at
// an instant, both measured on the Redis server's clock. A Scheduler of the
// same namespace runs each job once, at its time.
func ExampleClient_Enqueue() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name: "send welcome",
		New:  func() crontab.TaskInterface { return new(SendWelcome) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	c := crontab.NewClient(rdb, reg)
	if _, err := c.Enqueue(ctx, SendWelcome{User: "grace"}, crontab.In(200*time.Millisecond)); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Enqueue(ctx, SendWelcome{User: "ada"}, crontab.At(time.Now().Add(50*time.Millisecond))); err != nil {
		fmt.Println(err)
		return
	}

	// A worker: a scheduler that runs the jobs, told of each completed run.
	completed := make(chan crontab.Result, 2)
	s, err := crontab.NewScheduler(rdb, reg,
		crontab.WithLogger(nil), // no logs in this example
		crontab.WithListener(crontab.ListenerFunc(func(ctx context.Context, r crontab.Result) {
			completed <- r
		})))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()

	for range 2 {
		r := <-completed
		fmt.Println(r.Task, "ok:", r.OK)
	}
	cancel()
	<-ran

	// Output:
	// welcome, ada
	// send welcome ok: true
	// welcome, grace
	// send welcome ok: true
}
