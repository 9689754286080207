// Package sms holds the delayed-job example's job type. A type whose
// //crontab: directive has no expression is a job type: it never fires on
// its own; it runs when a producer enqueues a value of it.
package sms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

// SendSMS sends a text message. Its fields are the job's payload: the
// producer's value is JSON-encoded and decoded into a new SendSMS before
// Handle runs.
//
//crontab:name="send sms" timeout=10s retries=3
type SendSMS struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

// Handle "sends" the message by printing it. A number starting with +000
// fails, to show retries with backoff and the dead-letter set.
func (m SendSMS) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	if strings.HasPrefix(m.To, "+000") {
		return errors.New("carrier rejected the number")
	}
	fmt.Printf("%s  sent to %s: %q (job %s, due %s, attempt %d)\n", time.Now().Format("15:04:05.000"),
		m.To, m.Text, run.JobID, run.Fire.Format("15:04:05.000"), run.Attempt)
	return nil
}
