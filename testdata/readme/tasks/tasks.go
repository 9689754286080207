// Package tasks is the README's worked example: TestREADME checks that the
// README shows what crontabgen makes of it.
package tasks

import "context"

//go:generate go tool crontabgen -o crontab_gen.go .

// Report builds the morning report on weekdays, in Berlin time.
//
//crontab:name="morning report" expression="cron:0 8 * * 1-5" tz="Europe/Berlin" timeout=2m
type Report struct{}

func (*Report) Handle(ctx context.Context) error { return nil }

// SendSMS is a job type (no expression): it runs when enqueued; its value is the payload.
//
//crontab:name="send sms" timeout=10s retries=3
type SendSMS struct{ To, Text string }

func (s *SendSMS) Handle(ctx context.Context) error { return nil }
