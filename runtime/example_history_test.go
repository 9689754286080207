package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// ChargeCard is a job type whose handler fails for large amounts.
type ChargeCard struct {
	Cents int `json:"cents"`
}

// Handle runs one charge; an error marks the run failed.
func (j ChargeCard) Handle(ctx context.Context) error {
	if j.Cents > 10000 {
		return errors.New("card declined")
	}
	return nil
}

// Every run of a task or job type leaves a record in its history: when it
// ran, on which process, how it ended and with what error. History returns
// the records newest first.
func ExampleInspector_History() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name: "charge card",
		New:  func() crontab.TaskInterface { return new(ChargeCard) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	c := crontab.NewClient(rdb, reg)
	_, err = c.Enqueue(ctx, ChargeCard{Cents: 500}, crontab.WithID("order-1"), crontab.In(50*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.Enqueue(ctx, ChargeCard{Cents: 99900}, crontab.WithID("order-2"), crontab.In(150*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}

	// Run a scheduler until both jobs completed.
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
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(runCtx) }()
	<-completed
	<-completed
	cancel()
	<-ran

	records, err := crontab.NewInspector(rdb).History(ctx, "charge card", 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, rec := range records {
		fmt.Printf("%s: %s, attempt %d %q\n", rec.JobID, rec.Outcome, rec.Attempt, rec.Error)
	}

	// Output:
	// order-2: failed, attempt 1 "card declined"
	// order-1: ok, attempt 1 ""
}
