package runtime_test

import (
	"context"
	"fmt"

	crontab "github.com/gocrontab/crontab/runtime"
)

// RotateKeys is a task that runs every night.
type RotateKeys struct{}

// Handle rotates the keys.
func (RotateKeys) Handle(ctx context.Context) error { return nil }

// An Inspector acts as an operator: it lists the tasks of a namespace and
// pauses and resumes them. A paused task keeps its place in the queue and
// skips its fires until it is resumed.
func ExampleInspector_Pause() {
	rdb, stop := exampleRedis() // a go-redis client on a private redis-server
	defer stop()

	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name:       "rotate keys",
		Expression: "daily:03:00",
		TZ:         "Europe/Berlin",
		New:        func() crontab.TaskInterface { return new(RotateKeys) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	defer func() { cancel(); <-ran }() // stop the scheduler, wait for Run to return

	// Ready is closed once the scheduler has written its tasks to Redis.
	<-s.Ready()

	in := crontab.NewInspector(rdb)
	if err := in.Pause(ctx, "rotate keys"); err != nil {
		fmt.Println(err)
		return
	}
	tasks, err := in.ListTasks(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tasks {
		fmt.Printf("%s (%s): %s, %s\n", t.Name, t.Source, t.Interval, t.Status)
	}

	if err := in.Resume(ctx, "rotate keys"); err != nil {
		fmt.Println(err)
		return
	}
	t, err := in.Task(ctx, "rotate keys")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Name, "is", t.Status)

	// Output:
	// rotate keys (static): at 03:00 every day (Europe/Berlin), paused
	// rotate keys is active
}
