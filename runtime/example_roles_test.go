package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	crontab "github.com/gocrontab/crontab/runtime"
)

// exampleReport is a periodic task: the scheduler fleet's.
type exampleReport struct{ seen func(string) }

func (r exampleReport) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	r.seen(fmt.Sprintf("%s fired in %s", run.Task, run.Process))
	return nil
}

// exampleSMS is a job type: the worker fleet's.
type exampleSMS struct {
	To   string `json:"to"`
	seen func(string)
}

func (m exampleSMS) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	m.seen(fmt.Sprintf("%s to %s ran in %s", run.Task, m.To, run.Process))
	return nil
}

// One registry (one build) runs as two fleets: WithTasks gives each
// process its part. The scheduler fleet fires "report"; the worker fleet
// runs the "send sms" jobs; neither touches the other's.
func ExampleWithTasks() {
	rdb, stopRedis := exampleRedis()
	defer stopRedis()

	reported, sent := make(chan string, 10), make(chan string, 10)
	reg := crontab.NewRegistry()
	_ = reg.Add(crontab.TaskConfig{Name: "report", Expression: "every:1s",
		New: func() crontab.TaskInterface { return exampleReport{seen: func(s string) { reported <- s }} }})
	_ = reg.Add(crontab.TaskConfig{Name: "send sms",
		New: func() crontab.TaskInterface { return &exampleSMS{seen: func(s string) { sent <- s }} }})

	// A name the registry lacks is an error.
	_, err := crontab.NewScheduler(rdb, reg, crontab.WithTasks("send smss"))
	fmt.Println(err)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for id, names := range map[string][]string{"scheduler-1": {"report"}, "worker-1": {"send sms"}} {
		s, err := crontab.NewScheduler(rdb, reg, crontab.WithTasks(names...), crontab.WithProcessID(id),
			crontab.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			fmt.Println(err)
			return
		}
		wg.Go(func() { _ = s.Run(ctx) })
		<-s.Ready()
	}
	c := crontab.NewClient(rdb, reg)
	if _, err := c.Enqueue(ctx, exampleSMS{To: "+15550100"}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(<-sent)
	fmt.Println(<-reported)
	stop()
	wg.Wait()
	// Output:
	// crontab: WithTasks: "send smss" not registered (registered: "report", "send sms")
	// send sms to +15550100 ran in worker-1
	// report fired in scheduler-1
}
