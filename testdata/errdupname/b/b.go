// Package b declares the name "report" again, and "twice" twice.
package b

import "context"

// Report has the name of a.Report.
//
//crontab:name=report expression=every:2m
type Report struct{}

// Once is the first "twice".
//
//crontab:name=twice
type Once struct{}

// Again is the second "twice".
//
//crontab:name=twice
type Again struct{}

func (Report) Handle(context.Context) error { return nil }
func (Once) Handle(context.Context) error   { return nil }
func (Again) Handle(context.Context) error  { return nil }
