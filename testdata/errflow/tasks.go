// Package errflow has flow-control keys the generator rejects.
package errflow

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Overlap caps at 2 a scheduled task that is not concurrent, which runs
// at most once at a time anyway.
//
//crontab:name=overlap expression=every:5m max_running=2
type Overlap struct{}

func (Overlap) Handle(context.Context) error { return nil }

// Ranges has every flow-control value out of range.
//
//crontab:name=ranges max_running=2000000 rate=0/s priority=1001
type Ranges struct{}

func (Ranges) Handle(context.Context) error { return nil }

// BadRate has a window that is not whole milliseconds, and a typo.
//
//crontab:name=bad-rate rate="5/1.5ms" prio=3
type BadRate struct{}

func (BadRate) Handle(context.Context) error { return nil }

// Fine caps a job type, whose jobs may always overlap: no error.
//
//crontab:name=fine max_running=2
type Fine struct{}

func (Fine) Handle(context.Context) error { return nil }

// Urgent gives a scheduled task a priority: only jobs queue.
//
//crontab:name=urgent expression=every:1m priority=3
type Urgent struct{}

func (Urgent) Handle(context.Context) error { return nil }

// Spread has a jitter on a job type, which runs when it is due.
//
//crontab:name=spread jitter=1m
type Spread struct{}

func (Spread) Handle(context.Context) error { return nil }

// TooSpread has a jitter over 24h.
//
//crontab:name=too-spread expression=every:1h jitter=25h
type TooSpread struct{}

func (TooSpread) Handle(context.Context) error { return nil }
