// Package tasks is the other package named tasks: the generated file
// imports it under another name.
package tasks

import "context"

// Mail has the same type name as beta's, and another task name.
//
//crontab:name=gamma-mail expression=daily:23:59
type Mail struct{}

func (*Mail) Handle(context.Context) error { return nil }
