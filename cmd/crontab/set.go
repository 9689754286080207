package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// optValue is a flag that remembers whether it was given, so set changes
// only the fields whose flags are on the command line.
type optValue struct {
	v      string
	given  bool
	isBool bool // a boolean flag: -concurrent alone means true
}

func (o *optValue) String() string {
	if o == nil {
		return ""
	}
	return o.v
}

func (o *optValue) Set(s string) error { o.v, o.given = s, true; return nil }

// IsBoolFlag lets a boolean flag be given without a value.
func (o *optValue) IsBoolFlag() bool { return o.isBool }

// setOpts are the flags of set: one per field of crontab.TaskSpec that an
// operator sets (Rate and Priority are not: SetTask refuses any value of
// them for a run-time task; retries are the type's, TaskSpec has none).
type setOpts struct {
	typ, expression, tz, params, status, timeout, concurrent, misfire, maxRunning optValue
}

func setFlags(fs *flag.FlagSet, o *cmdOpts) {
	s := &o.set
	s.concurrent.isBool = true
	fs.Var(&s.typ, "type", "the registered `TYPE` that runs it (required to create; a type a live process runs)")
	fs.Var(&s.expression, "expression", "the schedule `EXPR`, e.g. daily:03:00 or \"cron:0 8 * * 1-5\" (required to create)")
	fs.Var(&s.tz, "tz", "the schedule's IANA `ZONE` (default UTC)")
	fs.Var(&s.params, "params", "the task's parameters as `JSON`, decoded into the type before each run (default none)")
	fs.Var(&s.status, "status", "`STATUS` active, paused or disabled (default active on create; a change keeps the current one)")
	fs.Var(&s.timeout, "timeout", "each run's time limit, a Go `DURATION` such as 30s; 0 means the type's")
	fs.Var(&s.concurrent, "concurrent", "let runs overlap (-concurrent=false: skip a fire while a run goes on)")
	fs.Var(&s.misfire, "misfire", "`POLICY` after downtime: once (run one missed fire) or skip (default once)")
	fs.Var(&s.maxRunning, "max-running", "cap `N` of runs in progress at once across processes, 0 (no cap) to "+strconv.Itoa(crontab.MaxMaxRunning)+"; above 1 needs -concurrent")
}

func cmdSet(ctx context.Context, c *cli, o *cmdOpts, args []string) error {
	key, f := args[0], &o.set
	spec := crontab.TaskSpec{Key: key}
	cur, err := c.inspector.Task(ctx, key)
	created := errors.Is(err, crontab.ErrNotFound)
	switch {
	case created:
		if !f.typ.given {
			return usagef("set: -type is required to create task %q", key)
		}
		if !f.expression.given {
			return usagef("set: -expression is required to create task %q", key)
		}
	case err != nil:
		return err
	default: // a change: what no flag gives stays as it is
		spec.Type, spec.Expression, spec.TZ = cur.Type, cur.Expression, cur.TZ
		spec.Timeout, spec.Concurrent, spec.Misfire, spec.MaxRunning = cur.Timeout, cur.Concurrent, cur.Misfire, cur.MaxRunning
		if cur.Params != nil {
			spec.Params = cur.Params
		}
	}
	if f.typ.given {
		spec.Type = f.typ.v
	}
	if f.expression.given {
		spec.Expression = f.expression.v
	}
	if f.tz.given {
		spec.TZ = f.tz.v
	}
	if f.status.given {
		spec.Status = crontab.Status(f.status.v)
	}
	if f.misfire.given {
		spec.Misfire = crontab.Misfire(f.misfire.v)
	}
	if f.params.given {
		var v any
		if err := json.Unmarshal([]byte(f.params.v), &v); err != nil {
			return usagef("set: -params %q: not JSON: %v", f.params.v, err)
		}
		spec.Params = json.RawMessage(f.params.v)
	}
	if f.timeout.given {
		d, err := time.ParseDuration(f.timeout.v)
		if err != nil || d < 0 {
			return usagef("set: -timeout %q: want a Go duration of 0 (the type's) or more, such as 30s", f.timeout.v)
		}
		spec.Timeout = d
	}
	if f.concurrent.given {
		b, err := strconv.ParseBool(f.concurrent.v)
		if err != nil {
			return usagef("set: -concurrent %q: want true or false", f.concurrent.v)
		}
		spec.Concurrent = b
	}
	if f.maxRunning.given {
		n, err := strconv.Atoi(f.maxRunning.v)
		if err != nil {
			return usagef("set: -max-running %q: want a whole number 0 (no cap) to %d", f.maxRunning.v, crontab.MaxMaxRunning)
		}
		spec.MaxRunning = n
	}
	if err := c.inspector.SetTask(ctx, spec); err != nil {
		return err
	}
	t, err := c.inspector.Task(ctx, key)
	if err != nil {
		return err
	}
	action := map[bool]string{true: "created", false: "changed"}[created]
	if c.output == "json" {
		return c.out(map[string]any{"task": key, "action": action, "status": t.Status, "next": t.Next}, nil)
	}
	fmt.Fprintf(c.stdout, "%s %q: %s, %s, next run %s\n", action, key, schedule(t), t.Status, fmtTime(t.Next))
	return nil
}
