// Package erroutput already declares names the generated file declares.
package erroutput

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Job is fine.
//
//crontab:name=job
type Job struct{}

func (*Job) Handle(context.Context) error { return nil }

// Register is declared by hand.
func Register() {}

var time = 3
