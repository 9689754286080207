// Package basic has a scheduled task with a value receiver and a job type
// with a pointer receiver, generated into their own package.
package basic

import (
	"context"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// CleanLogs removes log files older than a week.
//
//crontab:name="clean logs" expression="daily:03:00"
type CleanLogs struct{}

// Handle has a value receiver.
func (CleanLogs) Handle(context.Context) error { return nil }

var _ crontab.TaskInterface = CleanLogs{}

// SendSMS is a job type: it has no expression and runs when enqueued.
//
//crontab:name=send-sms timeout=30s retries=3
type SendSMS struct {
	To   string
	Text string
}

// Handle has a pointer receiver.
func (s *SendSMS) Handle(context.Context) error { return nil }

// NotATask has no directive, so it is not registered.
type NotATask struct{}

func (NotATask) Handle(context.Context) error { return nil }
