// Package flow has tasks with the flow-control keys max_running, rate and
// priority, and jitter; the generated file sets those fields only where
// they are set.
package flow

import (
	"context"

	"github.com/redis/go-redis/v9"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Resize is a job type with every flow-control key.
//
//crontab:name=resize max_running=50 rate=100/s priority=5
type Resize struct {
	Image string
}

// Handle has a pointer receiver.
func (r *Resize) Handle(context.Context) error { return nil }

// Report is a concurrent scheduled task with a cap.
//
//crontab:name=report expression=every:1m concurrent=true max_running=3
type Report struct{}

// Handle has a value receiver.
func (Report) Handle(context.Context) error { return nil }

// Ping has a quoted sub-second rate window and no cap: only Rate is set.
//
//crontab:name=ping rate="20/1500ms"
type Ping struct{}

// Handle has a value receiver.
func (Ping) Handle(context.Context) error { return nil }

// Plain sets none of the keys (max_running=0 and priority=0 are the
// defaults): its config is as before they existed.
//
//crontab:name=plain expression=hourly:30 max_running=0 priority=0
type Plain struct{}

// Handle has a value receiver.
func (Plain) Handle(context.Context) error { return nil }

// Digest is a scheduled task whose fires are spread over 10 minutes.
//
//crontab:name=digest expression=every:1h jitter=10m
type Digest struct{}

// Handle has a value receiver.
func (Digest) Handle(context.Context) error { return nil }

// Start uses what the generated file declares.
func Start(rdb redis.UniversalClient) error {
	_, err := NewScheduler(rdb)
	return err
}
