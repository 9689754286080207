package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestInspectorTaskSchedule reads a declared task's schedule from its hash:
// the expression and zone parsed, its status and next_run, at Redis time.
func TestInspectorTaskSchedule(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t,
		TaskConfig{Name: "nightly", Expression: "daily:03:00", TZ: "Europe/Berlin", Status: StatusPaused, New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
	)
	_, stop := runScheduler(t, rdb, reg)
	in := NewInspector(rdb)
	waitFor(t, 4*time.Second, "nightly registered", func() bool {
		_, err := in.Task(ctx, "nightly")
		return err == nil
	})
	ts, err := in.TaskSchedule(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	want := ts.Schedule.Next(ts.Now)
	if ts.Expression != "daily:03:00" || ts.TZ != "Europe/Berlin" || ts.Location.String() != "Europe/Berlin" ||
		ts.Status != StatusPaused || !ts.Queued || !ts.NextRun.Equal(want) || ts.NextRun.Location().String() != "Europe/Berlin" {
		t.Errorf("TaskSchedule = %+v, want next_run %v", ts, want)
	}
	if h, m, _ := ts.NextRun.In(berlin).Clock(); h != 3 || m != 0 {
		t.Errorf("next run %v: want 03:00 in Berlin", ts.NextRun)
	}
	if d := time.Since(ts.Now); d < -time.Second || d > 5*time.Second {
		t.Errorf("Now %v is not Redis time now", ts.Now)
	}

	if _, err := in.TaskSchedule(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TaskSchedule(nope): %v, want ErrNotFound", err)
	}
	// A hash whose expression no longer parses: the error names it. (The
	// scheduler is stopped first, so it does not write the hash again.)
	stop()
	if err := rdb.HSet(ctx, rdbOf(rdb).Keys().Task("nightly"), "expression", "cron:61 * * * *").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.TaskSchedule(ctx, "nightly"); err == nil || !strings.Contains(err.Error(), `expression "cron:61 * * * *"`) {
		t.Errorf("bad expression: %v", err)
	}
}

// TestInspectorSetTask sets a run-time task without the task code: the type
// must be one a live process runs, every other check is Client.SetTask's,
// and a rejected spec writes nothing.
func TestInspectorSetTask(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t,
		TaskConfig{Name: "report", Expression: "daily:06:00", Timeout: time.Minute, New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
	)
	runScheduler(t, rdb, reg)
	in := NewInspector(rdb)
	waitFor(t, 4*time.Second, "a live process", func() bool {
		ps, err := in.Processes(ctx)
		return err == nil && len(ps) == 1 && ps[0].Alive
	})

	// A job type: any JSON params, no timeout of its own (0: the type's,
	// nothing stored), class unknown.
	spec := TaskSpec{Key: "dyn", Type: "sms", Params: json.RawMessage(`{"to":"x"}`), Expression: "every:1h", TZ: "Europe/Berlin"}
	if err := in.SetTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	ti, err := in.Task(ctx, "dyn")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Source != SourceDynamic || ti.Type != "sms" || ti.Class != classUnknown || ti.TZ != "Europe/Berlin" ||
		string(ti.Params) != `{"to":"x"}` || ti.Timeout != 0 || ti.Next.IsZero() {
		t.Errorf("dyn = %+v", ti)
	}
	// Its hash stores no status (active): the schedule reads it active.
	if ts, err := in.TaskSchedule(ctx, "dyn"); err != nil || ts.Status != StatusActive {
		t.Errorf("TaskSchedule(dyn): status %q, %v; want active", ts.Status, err)
	}
	// The type of a declared task: its class; the timeout is the type's at
	// run time (none stored).
	if err := in.SetTask(ctx, TaskSpec{Key: "dyn2", Type: "report", Expression: "every:2h"}); err != nil {
		t.Fatal(err)
	}
	decl, _ := in.Task(ctx, "report")
	if ti, _ := in.Task(ctx, "dyn2"); ti.Class != decl.Class || ti.Class == classUnknown || ti.Timeout != 0 {
		t.Errorf("dyn2 = %+v, want class %q, timeout 0 (the type's)", ti, decl.Class)
	}

	for _, bad := range []struct {
		spec TaskSpec
		want string
	}{
		{TaskSpec{Key: "x", Type: "nope", Expression: "every:1h"}, `set task "x": type "nope" is not registered`},
		{TaskSpec{Key: "x", Type: "sms", Expression: "cron:61 * * * *"}, `set task "x": expression "cron:61 * * * *"`},
		{TaskSpec{Key: "x", Type: "sms", Expression: "every:1h", TZ: "Mars/Base"}, `set task "x": tz "Mars/Base"`},
		{TaskSpec{Key: "x", Type: "sms", Expression: "every:1h", Params: json.RawMessage(`{"to":`)}, `set task "x": encode params`},
		{TaskSpec{Key: "report", Type: "sms", Expression: "every:1h"}, `set task "report": a task declared in code has that name`},
	} {
		err := in.SetTask(ctx, bad.spec)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("SetTask(%+v) = %v, want %q", bad.spec, err, bad.want)
		}
	}
	if _, err := in.Task(ctx, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a rejected spec wrote task x: %v", err)
	}
	// Updating keeps the class it has.
	spec.Expression = "every:30m"
	if err := in.SetTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if ti, _ := in.Task(ctx, "dyn"); ti.Expression != "every:30m" || ti.Class != classUnknown {
		t.Errorf("after update: %+v", ti)
	}
}
