package runtime_test

import (
	"context"
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// CleanLogs is a scheduled task: the registry below gives it an
// expression, so it fires on its own.
type CleanLogs struct{}

// Handle runs one fire of the task.
func (CleanLogs) Handle(ctx context.Context) error {
	fmt.Println("cleaning logs for the fire of", crontab.TaskName(ctx))
	return nil
}

// A Scheduler fires the tasks of a Registry. Here a listener reports the
// first completed run, and the example then ends the Run by cancelling its
// ctx and waits for Run to return.
func ExampleScheduler_Run() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name:       "clean logs",
		Expression: "every:1s",
		New:        func() crontab.TaskInterface { return new(CleanLogs) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	completed := make(chan crontab.Result, 1)
	s, err := crontab.NewScheduler(rdb, reg,
		crontab.WithLogger(nil), // no logs in this example
		crontab.WithListener(crontab.ListenerFunc(func(ctx context.Context, r crontab.Result) {
			select {
			case completed <- r:
			default:
			}
		})))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()

	r := <-completed
	fmt.Printf("%s: ok=%t, attempt %d, on a whole second: %t\n",
		r.Task, r.OK, r.Attempt, r.Fire.Equal(r.Fire.Truncate(time.Second)))

	cancel()
	fmt.Println("Run returned:", <-ran)

	// Output:
	// cleaning logs for the fire of clean logs
	// clean logs: ok=true, attempt 1, on a whole second: true
	// Run returned: <nil>
}
