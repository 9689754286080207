package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// SendReminder is a job type that a producer may cancel before it runs.
type SendReminder struct {
	Note string `json:"note"`
}

// Handle runs one enqueued reminder.
func (j SendReminder) Handle(ctx context.Context) error {
	fmt.Println("reminder:", j.Note)
	return nil
}

// Cancel removes a pending job, so it never runs. Cancelling it again, or
// cancelling a job that already ran, returns an error wrapping ErrNotFound.
func ExampleClient_Cancel() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name: "send reminder",
		New:  func() crontab.TaskInterface { return new(SendReminder) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	c := crontab.NewClient(rdb, reg)
	dentist, err := c.Enqueue(ctx, SendReminder{Note: "dentist"}, crontab.In(100*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The second job is due after the first, so once it ran the first one
	// would have run too, had it not been cancelled.
	if _, err := c.Enqueue(ctx, SendReminder{Note: "standup"}, crontab.In(300*time.Millisecond)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cancel:", c.Cancel(ctx, dentist))
	err = c.Cancel(ctx, dentist)
	fmt.Println("cancel again is ErrNotFound:", errors.Is(err, crontab.ErrNotFound))

	completed := make(chan crontab.Result, 1)
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
	<-completed
	cancel()
	<-ran

	// Output:
	// cancel: <nil>
	// cancel again is ErrNotFound: true
	// reminder: standup
}
