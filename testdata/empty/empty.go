// Package empty has no annotated type: the generated file still defines
// Register, NewScheduler and NewClient, which register nothing.
package empty

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Task is not annotated.
type Task struct{}
