package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// SetTasks writes many run-time tasks at once and reports each one:
// invalid specs are refused on their own, the others are written.
// RemoveTasks takes them away, reporting keys with no task.
func ExampleClient_SetTasks() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "report", New: func() crontab.TaskInterface { return new(Report) }}); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	c := crontab.NewClient(rdb, reg)
	results, err := c.SetTasks(ctx, []crontab.TaskSpec{
		{Key: "tenant 1", Type: "report", Params: Report{Format: "pdf"}, Expression: "every:1h", Jitter: time.Hour},
		{Key: "tenant 2", Type: "report", Params: Report{Format: "csv"}, Expression: "every:1h", Jitter: time.Hour},
		{Key: "tenant 3", Type: "report", Expression: "every:1x"},
	})
	fmt.Println(results)
	var te *crontab.TasksError
	if errors.As(err, &te) {
		fmt.Println(te.Errs[2])
	}
	err = c.RemoveTasks(ctx, []string{"tenant 1", "tenant 2", "tenant 9"})
	fmt.Println(errors.Is(err, crontab.ErrNotFound))

	// Output:
	// [created created failed]
	// crontab: set task "tenant 3": expression "every:1x": every: interval "1x" has an unknown unit; want s, m or h
	// true
}
