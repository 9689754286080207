// Package tasks is the end-to-end fixture: the test generates its
// registration file, then builds and runs ../cmd/show, which registers the
// tasks through the generated Register and prints what the registry holds.
package tasks

import (
	"context"
	"time"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go ../...

// Backup runs every night in Berlin.
//
//crontab:name=backup expression="cron:30 2 * * *" tz=Europe/Berlin timeout=1h misfire=skip
type Backup struct{}

func (Backup) Handle(context.Context) error { return nil }

// Poll runs every ten seconds and may overlap itself.
//
//crontab:name=poll expression=every:10s concurrent=true timeout=250ms status=paused
type Poll struct{}

func (*Poll) Handle(context.Context) error { return nil }

// Notify is a job type.
//
//crontab:name=notify retries=2
type Notify struct {
	User string        `json:"user"`
	In   time.Duration `json:"in"`
}

func (*Notify) Handle(context.Context) error { return nil }
