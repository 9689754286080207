// Package tasks holds the tasks of the end-to-end test worker. Each one
// records what it did in Redis lists, where the tests read it back.
package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

// Recorder is where the tasks record their runs; main sets it.
var Recorder redis.UniversalClient

// The lists the tasks append to.
const (
	// FiresKey gets "task|fire_ms|process|start_ms" per run of Tick.
	FiresKey = "e2e:fires"
	// SlowKey gets "start_ms|end_ms|process|fire_ms" per run of Slow.
	SlowKey = "e2e:slow"
	// AbandonedKey gets "task|fire_ms|process|reporter" per call of the
	// worker's Abandoned hook (the worker writes it, not a task).
	AbandonedKey = "e2e:abandoned"
	// ProducedKey gets "n|result|id|before_us|after_us|process|error" per
	// enqueue of the worker's producer mode (the worker writes it): result
	// is ok, dup (id is then the job holding the identity) or err; before
	// and after are the Redis server's time around the enqueue.
	ProducedKey = "e2e:produced"
)

// Tick records every fire.
//
//crontab:name="tick" expression="every:1s" timeout=5s
type Tick struct{}

// Handle records the fire.
func (Tick) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	rec := fmt.Sprintf("%s|%d|%s|%d", run.Task, run.Fire.UnixMilli(), run.Process, time.Now().UnixMilli())
	return record(ctx, FiresKey, rec)
}

// record appends rec to the list key, retrying for a while: on a loaded
// machine a write can time out, and a fire that ran must not look missed.
func record(ctx context.Context, key, rec string) error {
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := range 10 {
		if err = Recorder.RPush(ctx, key, rec).Err(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return fmt.Errorf("record %s: %w", key, err)
}

// Slow runs for 2.5s every second: a non-concurrent task that must never
// overlap itself.
//
//crontab:name="slow" expression="every:1s" timeout=10s
type Slow struct{}

// Handle sleeps 2.5s and records the run's span.
func (Slow) Handle(ctx context.Context) error {
	start := time.Now()
	select {
	case <-time.After(2500 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	run, _ := crontab.Run(ctx)
	rec := fmt.Sprintf("%d|%d|%s|%d", start.UnixMilli(), time.Now().UnixMilli(), run.Process, run.Fire.UnixMilli())
	return record(ctx, SlowKey, rec)
}

// JobsKey gets "n|process|attempt" per run of Count as it ends, and
// JobStartsKey the same as it starts.
const (
	JobsKey      = "e2e:jobs"
	JobStartsKey = "e2e:jobs:starts"
)

// Count is a job that records its number. With Sleep set it first sleeps,
// so a test can kill its process mid-run.
//
//crontab:name="count" timeout=30s
type Count struct {
	N     int           `json:"n"`
	Sleep time.Duration `json:"sleep,omitempty"`
	// Spans, when set, records "n|process|attempt|unix_us" in SpanStartsKey
	// as the run starts and in SpanEndsKey as it ends, for tests of how
	// many run at once.
	Spans bool `json:"spans,omitempty"`
}

// SpanStartsKey and SpanEndsKey get the spans of Count runs (Count.Spans).
const (
	SpanStartsKey = "e2e:spans:starts"
	SpanEndsKey   = "e2e:spans:ends"
)

// Handle records the job.
func (c Count) Handle(ctx context.Context) error {
	run, _ := crontab.Run(ctx)
	rec := fmt.Sprintf("%d|%s|%d", c.N, run.Process, run.Attempt)
	if c.Spans {
		if err := record(ctx, SpanStartsKey, fmt.Sprintf("%s|%d", rec, time.Now().UnixMicro())); err != nil {
			return err
		}
		defer func() {
			_ = record(context.WithoutCancel(ctx), SpanEndsKey, fmt.Sprintf("%s|%d", rec, time.Now().UnixMicro()))
		}()
	}
	if err := record(ctx, JobStartsKey, rec); err != nil {
		return err
	}
	if c.Sleep > 0 {
		select {
		case <-time.After(c.Sleep):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return record(ctx, JobsKey, rec)
}

// LimitCount returns a registry of reg's tasks in which the count job type
// has maxRunning and rate as its flow control (TaskConfig.MaxRunning,
// Rate), for the workers and the clients of the flow-control tests.
func LimitCount(reg *crontab.Registry, maxRunning int, rate crontab.Rate) (*crontab.Registry, error) {
	out := crontab.NewRegistry()
	for _, e := range reg.Entries() {
		cfg := e.Config()
		if cfg.Name == "count" {
			cfg.MaxRunning, cfg.Rate = maxRunning, rate
		}
		if err := out.Add(cfg); err != nil {
			return nil, fmt.Errorf("limit count: %w", err)
		}
	}
	return out, nil
}
