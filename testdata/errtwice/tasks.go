// Package errtwice has types with two directives.
package errtwice

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Twice has two directive lines.
//
//crontab:name=first expression=every:1m
//crontab:name=second expression=every:2m
type Twice struct{}

// InGroup has a directive on the declaration and one on its spec.
//
//crontab:name=outer
type (
	// InGroup is the only type of its group.
	//
	//crontab:name=inner
	InGroup struct{}
)

func (Twice) Handle(context.Context) error   { return nil }
func (InGroup) Handle(context.Context) error { return nil }
