// Package good is fine.
package good

import "context"

// Good is fine.
//
//crontab:name=good expression=every:1m
type Good struct{}

func (Good) Handle(context.Context) error { return nil }
