package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// TestSet creates a run-time task, changes it, and refuses bad values
// with nothing written; show and list see the task.
func TestSet(t *testing.T) {
	e := setup(t)
	ctx := context.Background()

	out := e.ok(t, "set", "nightly mail", "-type", "mail", "-expression", "daily:21:00", "-tz", "Europe/Berlin",
		"-params", `{"to":"ops@example.com"}`, "-timeout", "30s", "-misfire", "skip")
	if !strings.HasPrefix(out, `created "nightly mail": daily:21:00 (Europe/Berlin), active, next run `) {
		t.Errorf("set (create): %q", out)
	}
	ti, err := e.inspector.Task(ctx, "nightly mail")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Source != crontab.SourceDynamic || ti.Type != "mail" || ti.Expression != "daily:21:00" || ti.TZ != "Europe/Berlin" ||
		string(ti.Params) != `{"to":"ops@example.com"}` || ti.Timeout != 30*time.Second || ti.Misfire != crontab.MisfireSkip ||
		ti.Status != crontab.StatusActive || ti.Next.IsZero() {
		t.Errorf("created task: %+v", ti)
	}

	// A change: only the flags given change; the rest stays.
	out = e.ok(t, "set", "nightly mail", "-expression", "every:2h", "-status", "paused", "-concurrent", "-max-running", "3")
	if !strings.HasPrefix(out, `changed "nightly mail": every:2h (Europe/Berlin), paused, next run `) {
		t.Errorf("set (change): %q", out)
	}
	ti, _ = e.inspector.Task(ctx, "nightly mail")
	if ti.Type != "mail" || ti.Expression != "every:2h" || ti.TZ != "Europe/Berlin" || string(ti.Params) != `{"to":"ops@example.com"}` ||
		ti.Timeout != 30*time.Second || ti.Misfire != crontab.MisfireSkip || ti.Status != crontab.StatusPaused || !ti.Concurrent || ti.MaxRunning != 3 {
		t.Errorf("changed task: %+v", ti)
	}
	before := ti

	// -o json: what was done, and the task's status and next run.
	out = e.ok(t, "-o", "json", "set", "nightly mail", "-params", `{"to":"b@example.com"}`)
	var res struct {
		Task, Action, Status string
		Next                 time.Time
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ti, _ = e.inspector.Task(ctx, "nightly mail"); res.Task != "nightly mail" || res.Action != "changed" || res.Status != "paused" ||
		!res.Next.Equal(ti.Next) || string(ti.Params) != `{"to":"b@example.com"}` || ti.Expression != "every:2h" {
		t.Errorf("-o json set: %s, task %+v", out, ti)
	}
	before = ti

	for _, bad := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"set", "x", "-type", "mail", "-expression", "cron:61 * * * *"}, exitFailure, `set task "x": expression "cron:61 * * * *": cron: minute field "61"`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-tz", "Mars/Base"}, exitFailure, `set task "x": tz "Mars/Base": unknown time zone Mars/Base`},
		{[]string{"set", "x", "-type", "nope", "-expression", "every:1h"}, exitFailure, `set task "x": type "nope" is not registered`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-status", "asleep"}, exitFailure, `set task "x": status "asleep": want active, paused or disabled`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-misfire", "all"}, exitFailure, `set task "x": misfire "all": want once or skip`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-max-running", "2"}, exitFailure, `set task "x": max_running 2 needs Concurrent`},
		{[]string{"set", "nightly", "-type", "mail", "-expression", "every:1h"}, exitFailure, `set task "nightly": a task declared in code has that name`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-params", `{"to":`}, exitUsage, `set: -params "{\"to\":": not JSON`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-timeout", "soon"}, exitUsage, `set: -timeout "soon": want a Go duration`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-timeout", "-1s"}, exitUsage, `set: -timeout "-1s"`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-max-running", "many"}, exitUsage, `set: -max-running "many": want a whole number`},
		{[]string{"set", "x", "-type", "mail", "-expression", "every:1h", "-concurrent=maybe"}, exitUsage, `set: -concurrent "maybe": want true or false`},
		{[]string{"set", "x", "-expression", "every:1h"}, exitUsage, `set: -type is required to create task "x"`},
		{[]string{"set", "x", "-type", "mail"}, exitUsage, `set: -expression is required to create task "x"`},
		{[]string{"set", "nightly mail", "-expression", "weekly:1"}, exitFailure, `set task "nightly mail": expression "weekly:1"`},
		{[]string{"set", "nightly mail", "-tz", "Nowhere/Land"}, exitFailure, `set task "nightly mail": tz "Nowhere/Land"`},
	} {
		out, errs, code := e.crontab(t, bad.args...)
		if code != bad.code || out != "" || !strings.Contains(errs, bad.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", bad.args, code, out, errs, bad.code, bad.want)
		}
	}
	if _, err := e.inspector.Task(ctx, "x"); !errors.Is(err, crontab.ErrNotFound) {
		t.Errorf("a refused set wrote task x: %v", err)
	}
	if ti, _ := e.inspector.Task(ctx, "nightly mail"); ti.Expression != before.Expression || ti.TZ != before.TZ {
		t.Errorf("a refused change changed the task: %+v", ti)
	}

	show := e.ok(t, "show", "nightly mail")
	for _, want := range []string{"nightly mail", "mail", "dynamic", "paused", "every:2h in Europe/Berlin", `{"to":"b@example.com"}`, "30s", "max running:"} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
	// next reads a run-time task's schedule as it reads a declared one's.
	next, _, code := e.crontabTZ("UTC", "next", "nightly mail", "-n", "2")
	if berlin, _ := time.LoadLocation("Europe/Berlin"); code != 0 || !strings.HasPrefix(next, `task "nightly mail": every:2h: `) ||
		!strings.Contains(next, "status: paused") || !strings.Contains(next, before.Next.In(berlin).Format(instantLayout)) ||
		!strings.Contains(next, before.Next.Add(2*time.Hour).In(berlin).Format(instantLayout)) {
		t.Errorf("next of the run-time task: exit %d\n%s", code, next)
	}
	if list := e.ok(t, "list"); !strings.Contains(list, "nightly mail") || !strings.Contains(list, "every:2h (Europe/Berlin)") {
		t.Errorf("list:\n%s", list)
	}
}
