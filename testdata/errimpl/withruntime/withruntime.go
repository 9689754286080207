// Package withruntime imports the runtime, so the generator checks its
// types against the runtime's own TaskInterface.
package withruntime

import (
	"context"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Variadic takes a context and more.
//
//crontab:name=variadic expression=every:1m
type Variadic struct{}

func (Variadic) Handle(ctx context.Context, more ...string) error { return nil }

// Good is a task.
//
//crontab:name=good expression=every:1m
type Good struct{}

func (Good) Handle(context.Context) error { return nil }

var _ crontab.TaskInterface = Good{}
