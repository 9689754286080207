// Package tasks holds the roles example's tasks: two periodic tasks and
// the "send sms" job type, in one package, so one build runs as either
// fleet (see ../doc.go). The periodic "send reminders" enqueues a "send
// sms" job at each instant: the scheduler fleet fires it, the worker fleet
// runs the jobs.
package tasks

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

// jobs is the client the periodic tasks enqueue with (Use sets it).
var jobs atomic.Pointer[crontab.Client]

// Use sets the client that "send reminders" enqueues its jobs with. A
// process of the worker fleet needs none.
func Use(c *crontab.Client) { jobs.Store(c) }

// SendReminders enqueues one reminder SMS per instant, for the worker
// fleet. The job's id is derived from the instant, so a fire retried after
// its process died does not enqueue it twice.
//
//crontab:name="send reminders" expression="every:1s"
type SendReminders struct{}

// Handle enqueues the instant's reminder.
func (SendReminders) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	c := jobs.Load()
	if c == nil {
		return fmt.Errorf("send reminders: no client (call tasks.Use)")
	}
	id := fmt.Sprintf("reminder-%d", run.Fire.UnixMilli())
	_, err := c.Enqueue(ctx, SendSMS{To: "+15550100", Text: "your appointment is at " + run.Fire.Add(time.Hour).Format("15:04:05")},
		crontab.WithID(id))
	if err != nil {
		return err
	}
	fmt.Printf("fire task=%q at=%d process=%s enqueued=%s\n", run.Task, run.Fire.UnixMilli(), run.Process, id)
	return nil
}

// Report prints a line every two seconds: a second periodic task of the
// scheduler fleet.
//
//crontab:name="report" expression="every:2s"
type Report struct{}

// Handle prints the report line.
func (Report) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	fmt.Printf("fire task=%q at=%d process=%s\n", run.Task, run.Fire.UnixMilli(), run.Process)
	return nil
}

// SendSMS sends a text message: a job type (no expression), run by the
// worker fleet. Its fields are the job's payload.
//
//crontab:name="send sms" timeout=10s retries=3
type SendSMS struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

// Handle "sends" the message by printing it.
func (m SendSMS) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	fmt.Printf("job task=%q id=%s process=%s to=%s text=%q\n", run.Task, run.JobID, run.Process, m.To, m.Text)
	return nil
}
