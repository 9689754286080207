package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// sourceStatic marks tasks declared in code (by crontabgen or Registry.Add);
// only they are pruned when no live process declares them any more.
const sourceStatic = "static"

// register writes every scheduled task of the registry to Redis: created
// if absent, rescheduled if its expression or zone changed, the operator's
// status kept. It also marks each task declared by a live process, so
// maintenance never prunes a task that a running build still declares.
func (s *Scheduler) register(ctx context.Context) error {
	return s.registerFrom(ctx, s.clock.Now())
}

// registerFrom is register with the first instant of a task written anew
// (a new task, a changed schedule) strictly after first.
func (s *Scheduler) registerFrom(ctx context.Context, first time.Time) error {
	var tasks []*registry.Entry
	for _, reg := range s.reg.Entries() {
		if reg.Schedule() != nil { // job types run only when enqueued
			tasks = append(tasks, reg)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	now := s.clock.Now()
	cmds, err := pipelined(ctx, s.rdb, []*redis.Script{registerScript}, func(pipe redis.Pipeliner) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(tasks))
		for i, reg := range tasks {
			c := reg.Config()
			cmds[i] = registerScript.EvalSha(ctx, pipe,
				[]string{s.keys.task(c.Name), s.keys.queue(), s.keys.tasks(), s.keys.meta(), s.keys.declared()},
				c.Name, ms(now), ms(reg.Schedule().Next(first)), string(c.Status), c.Expression, c.TZ,
				schedule.Describe(reg.Schedule()), c.Class, c.Name, c.Timeout.Milliseconds(), boolArg(c.Concurrent),
				string(c.Misfire), c.Retries, sourceStatic)
		}
		return cmds
	})
	if err != nil {
		return fmt.Errorf("crontab: register tasks: %w", err)
	}
	changed := 0
	for i, cmd := range cmds {
		if n, _ := cmd.Int64(); n == 1 {
			changed++
			s.log.Debug("task scheduled", "task", tasks[i].Config().Name, "expression", tasks[i].Config().Expression)
		}
	}
	s.log.Info("tasks registered", "declared", len(tasks), "changed", changed)
	if changed > 0 {
		s.rdb.Publish(ctx, s.keys.wake(), "register")
	}
	return nil
}

// refreshDeclared tells maintenance that this process still declares its
// tasks.
func (s *Scheduler) refreshDeclared(ctx context.Context, nowMS int64) error {
	args := []any{"ZADD", s.keys.declared()}
	for _, reg := range s.reg.Entries() {
		if reg.Schedule() != nil {
			args = append(args, strconv.FormatInt(nowMS, 10), reg.Config().Name)
		}
	}
	if len(args) == 2 {
		return nil
	}
	return s.rdb.Do(ctx, args...).Err()
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
