package runtime_test

import (
	"context"
	"fmt"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Report is a job type that run-time tasks use: each task gives it its own
// parameters and schedule.
type Report struct {
	Format string `json:"format"`
}

// Handle runs one fire of a run-time task, with the task's parameters
// decoded into j.
func (j Report) Handle(ctx context.Context) error {
	fmt.Printf("%s: report as %s\n", crontab.TaskName(ctx), j.Format)
	return nil
}

// SetTask adds a recurring task at run time, without a deploy: a
// registered type, its parameters and a schedule. Every scheduler of the
// namespace runs it until RemoveTask takes it away.
func ExampleClient_SetTask() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name: "report",
		New:  func() crontab.TaskInterface { return new(Report) },
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
	defer func() { cancel(); <-ran }() // stop the scheduler, wait for Run to return

	c := crontab.NewClient(rdb, reg)
	err = c.SetTask(ctx, crontab.TaskSpec{
		Key:        "sales report",
		Type:       "report",
		Params:     Report{Format: "pdf"},
		Expression: "every:1s",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	<-completed
	fmt.Println("remove:", c.RemoveTask(ctx, "sales report"))

	// Output:
	// sales report: report as pdf
	// remove: <nil>
}
