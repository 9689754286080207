// Package a declares the name "report" first.
package a

import "context"

// Report is first.
//
//crontab:name=report expression=every:1m
type Report struct{}

func (Report) Handle(context.Context) error { return nil }
