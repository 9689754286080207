package runtime_test

import (
	"context"
	"fmt"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Backup is a task; crontabgen writes the TaskConfig of an annotated type,
// and a program can add its own.
type Backup struct{}

// Handle runs one backup.
func (Backup) Handle(ctx context.Context) error { return nil }

// Vacuum is another task, given a bad expression below.
type Vacuum struct{}

// Handle runs one vacuum.
func (Vacuum) Handle(ctx context.Context) error { return nil }

// A Registry holds the task and job types a process knows. Add checks each
// TaskConfig (its name, expression, zone and fields) and fills in the
// defaults.
func ExampleNewRegistry() {
	reg := crontab.NewRegistry()
	err := reg.Add(crontab.TaskConfig{
		Name:       "backup",
		Expression: "cron:30 2 * * SUN",
		New:        func() crontab.TaskInterface { return new(Backup) },
	})
	fmt.Println("add:", err)

	cfg, _ := reg.Lookup("backup")
	fmt.Println(cfg.Class)
	fmt.Println("timeout:", cfg.Timeout, "status:", cfg.Status, "concurrent:", cfg.Concurrent)

	err = reg.Add(crontab.TaskConfig{
		Name:       "vacuum",
		Expression: "cron:30 25 * * *",
		New:        func() crontab.TaskInterface { return new(Vacuum) },
	})
	fmt.Println("add:", err)

	// Output:
	// add: <nil>
	// github.com/gocrontab/crontab/runtime_test.Backup
	// timeout: 5m0s status: active concurrent: false
	// add: task "vacuum": expression "cron:30 25 * * *": cron: hour field "25": value 25 out of range 0-23
}
