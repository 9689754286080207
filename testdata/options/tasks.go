// Package options passes -tags and scans a directory: the task in extra.go
// counts only with -tags extra, and testdata, vendor, _old and .hidden are
// skipped (each holds a misplaced directive that would be an error).
package options

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -tags extra .

// Plain is always built.
//
//crontab:name=plain expression=every:1m
type Plain struct{}

func (Plain) Handle(context.Context) error { return nil }
