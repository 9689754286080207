// Package tasks has an unexported task, which the generated file in
// another package cannot name.
package tasks

import "context"

// hidden is unexported.
//
//crontab:name=hidden expression=every:1m
type hidden struct{}

func (hidden) Handle(context.Context) error { return nil }

// Visible is fine.
//
//crontab:name=visible expression=every:1m
type Visible struct{}

func (Visible) Handle(context.Context) error { return nil }
