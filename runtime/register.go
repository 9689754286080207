package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// sourceStatic marks tasks declared in code (by crontabgen or Registry.Add);
// only they are pruned when no live process declares them any more.
const sourceStatic = "static"

// register writes every scheduled task of the registry to Redis: created
// if absent, rescheduled if its expression or zone changed, the operator's
// status kept. It also marks each task declared by a live process, so
// maintenance never prunes a task that a running build still declares.
func (mt *maintainer) register(ctx context.Context) error {
	return mt.registerFrom(ctx, mt.clock.Now())
}

// registerFrom is register with the first instant of a task written anew
// (a new task, a changed schedule) strictly after first. It runs at the
// start and in the maintenance goroutine (checkData), which own dataEpoch.
func (mt *maintainer) registerFrom(ctx context.Context, first time.Time) error {
	var tasks []*registry.Entry
	for _, reg := range mt.reg.Entries() {
		if reg.Schedule() != nil { // job types run only when enqueued
			tasks = append(tasks, reg)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	now := mt.clock.Now()
	decls := make([]rdb.TaskDecl, len(tasks))
	for i, reg := range tasks {
		c := reg.Config()
		decls[i] = rdb.TaskDecl{Key: c.Name, Class: c.Class, Type: c.Name, Expression: c.Expression, TZ: c.TZ,
			Interval: schedule.Describe(reg.Schedule()), Status: string(c.Status), NextMS: ms(reg.Schedule().Next(first)),
			Timeout: c.Timeout, Concurrent: c.Concurrent, Misfire: string(c.Misfire), Retries: c.Retries,
			MaxRunning: c.MaxRunning, Rate: c.Rate, Priority: c.Priority, Jitter: c.Jitter}
	}
	written, epoch, err := mt.db.Register(ctx, ms(now), decls)
	if err != nil {
		return fmt.Errorf("crontab: register tasks: %w", err)
	}
	// The data this registration wrote into: a later loss shows as a
	// change of it (checkData), even before the first check.
	mt.dataEpoch = epoch
	changed := 0
	for i, ch := range written {
		if ch {
			changed++
			mt.log.Debug("task scheduled", "task", tasks[i].Config().Name, "expression", tasks[i].Config().Expression)
		}
	}
	mt.log.Info("tasks registered", "declared", len(tasks), "changed", changed)
	if changed > 0 {
		_ = mt.db.Wake(ctx, "register")
	}
	return nil
}

// refreshDeclared tells maintenance that this process still declares its
// tasks: every scheduled task of its build, those WithTasks leaves to other
// processes too, so that the master does not prune another fleet's tasks
// while a process of the build runs (roles.go).
func (mt *maintainer) refreshDeclared(ctx context.Context, nowMS int64) error {
	var tasks []string
	for _, reg := range mt.all.Entries() {
		if reg.Schedule() != nil {
			tasks = append(tasks, reg.Config().Name)
		}
	}
	return mt.db.Declare(ctx, nowMS, tasks)
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
