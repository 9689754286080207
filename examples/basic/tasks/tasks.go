// Package tasks holds the example's annotated tasks. crontabgen reads the
// //crontab: directives below and writes crontab_gen.go beside them.
package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

// Heartbeat says it is alive every five seconds.
//
//crontab:name="heartbeat" expression="every:5s" timeout=2s
type Heartbeat struct{}

// Handle logs the fire.
func (Heartbeat) Handle(ctx context.Context) error {
	slog.InfoContext(ctx, "heartbeat", "fire", crontab.FireTime(ctx).Format(time.TimeOnly))
	return nil
}

// Report builds a (pretend) report at the top of every minute, in Berlin
// time, takes a few seconds doing it, and files it in Store, a dependency
// that main gives the scheduler with crontab.Provide.
//
//crontab:name="minute report" expression="cron:* * * * *" tz="Europe/Berlin" timeout=30s
type Report struct {
	Store *Reports `json:"-"` // a dependency, not a parameter
}

// Handle pretends to work for two seconds, or until ctx ends, then files
// the report.
func (r *Report) Handle(ctx context.Context) error {
	select {
	case <-time.After(2 * time.Second):
		fire := crontab.FireTime(ctx)
		n := r.Store.File(fire)
		slog.InfoContext(ctx, "report done", "fire", fire.Format(time.TimeOnly), "reports", n)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("report interrupted: %w", ctx.Err())
	}
}

// Reports is an in-process store of the reports built, by fire time. It is
// safe for concurrent use, as a dependency shared by every run must be.
type Reports struct {
	mu    sync.Mutex
	fires []time.Time
}

// File stores the report of the fire at t and returns how many reports
// this process has filed.
func (s *Reports) File(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fires = append(s.fires, t)
	return len(s.fires)
}

// CleanLogs removes log files older than a week.
//
//crontab:name="clean logs" expression="daily:03:00"
type CleanLogs struct{}

// Handle would clean the logs.
func (CleanLogs) Handle(ctx context.Context) error { return nil }

// Flaky fails every third run, to show failures in the log and history.
//
//crontab:name="flaky" expression="every:10s" misfire=skip
type Flaky struct{}

// Handle fails when the fire's second is a multiple of 30.
func (Flaky) Handle(ctx context.Context) error {
	if crontab.FireTime(ctx).Second()%30 == 0 {
		return fmt.Errorf("flaky: the upstream was away")
	}
	return nil
}
