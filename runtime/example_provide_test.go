package runtime_test

import (
	"context"
	"fmt"
	"io"
	"os"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Greet is a job type with a dependency: Out, where it writes. Out is
// tagged `json:"-"`, so the payload leaves it alone.
type Greet struct {
	Out  io.Writer `json:"-"`    // the dependency, given with Provide
	Name string    `json:"name"` // the payload
}

// Handle writes the greeting to the provided writer.
func (g Greet) Handle(ctx context.Context) error {
	_, err := fmt.Fprintf(g.Out, "hello, %s\n", g.Name)
	return err
}

// A job's payload is decoded into a copy of the value given to Provide, so
// its handler has both the payload and the dependency.
func ExampleProvide() {
	rdb, stopRedis := exampleRedis()
	defer stopRedis()
	reg := crontab.NewRegistry() // crontabgen's Register fills it from //crontab: directives
	if err := reg.Add(crontab.TaskConfig{Name: "greet", New: func() crontab.TaskInterface { return new(Greet) }}); err != nil {
		fmt.Println(err)
		return
	}

	ctx, stop := context.WithCancel(context.Background())
	s, err := crontab.NewScheduler(rdb, reg,
		crontab.Provide(Greet{Out: os.Stdout}),
		crontab.WithLogger(nil),
		crontab.WithListener(crontab.ListenerFunc(func(context.Context, crontab.Result) { stop() })),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := crontab.NewClient(rdb, reg).Enqueue(ctx, Greet{Name: "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Run(ctx); err != nil { // returns once the listener stopped it
		fmt.Println(err)
	}
	// Output: hello, Ada
}
