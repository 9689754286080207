// Package tasks is one of two packages named tasks.
package tasks

import "context"

// Mail is a job type with a pointer receiver.
//
//crontab:name=mail
type Mail struct{ To []string }

func (*Mail) Handle(context.Context) error { return nil }
