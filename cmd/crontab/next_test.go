package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// crontabTZ runs the command line against e's Redis with $TZ set to tz.
func (e *env) crontabTZ(tz string, args ...string) (stdout, stderr string, code int) {
	return runEnv(map[string]string{"REDIS_URL": e.url, "TZ": tz}, args...)
}

// TestNext lists a task's next instants from its hash: the first is the
// next_run the schedulers claim, then each next instant of its expression
// in its zone, printed in the zone and in the local zone; the status says
// what happens to them.
func TestNext(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	s, err := crontab.Parse("daily:03:00", berlin)
	if err != nil {
		t.Fatal(err)
	}
	task, err := e.inspector.Task(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}

	out, errs, code := e.crontabTZ("Asia/Tokyo", "next", "nightly", "-n", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], `task "nightly": daily:03:00: `) || !strings.HasSuffix(lines[0], ", Europe/Berlin") ||
		lines[1] != "status: active" {
		t.Fatalf("next nightly:\n%s", out)
	}
	at := task.Next
	for i, l := range lines[2:] {
		if i > 0 {
			at = s.Next(at)
		}
		want := at.In(berlin).Format(instantLayout) + "   " + at.In(tokyo).Format(instantLayout)
		if !strings.HasPrefix(l, want) {
			t.Errorf("instant %d: %q, want %q", i, l, want)
		}
	}

	// Paused: the same instants, each to be skipped.
	e.ok(t, "pause", "nightly")
	out, _, _ = e.crontabTZ("UTC", "next", "nightly", "-n", "2")
	if !strings.Contains(out, "status: paused: these fires are skipped") || !strings.Contains(out, task.Next.In(berlin).Format(instantLayout)) {
		t.Errorf("paused:\n%s", out)
	}
	// Disabled: not queued; from Redis time, what enabling would give.
	e.ok(t, "disable", "nightly")
	out, _, _ = e.crontabTZ("UTC", "-o", "json", "next", "nightly", "-n", "2")
	var v struct {
		Status   string    `json:"status"`
		Now      time.Time `json:"now"`
		Instants []instant `json:"instants"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Status != "disabled" || len(v.Instants) != 2 || !v.Instants[0].At.Equal(s.Next(v.Now)) || !v.Instants[1].At.Equal(s.Next(v.Instants[0].At)) ||
		time.Since(v.Now).Abs() > 5*time.Second {
		t.Errorf("disabled: %+v", v)
	}
	out, _, _ = e.crontabTZ("UTC", "next", "nightly")
	if !strings.Contains(out, "status: disabled: it does not fire") || strings.Count(out, "\n") != 12 {
		t.Errorf("disabled, default -n 10:\n%s", out)
	}

	for _, bad := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"next", "nightly", "-n", "0"}, exitUsage, "next: -n 0: want 1 to 1000"},
		{[]string{"next", "nightly", "-n", "1001"}, exitUsage, "next: -n 1001: want 1 to 1000"},
		{[]string{"next", "nope"}, exitFailure, `schedule of "nope": `},
		{[]string{"next", "mail"}, exitFailure, `schedule of "mail": `}, // a job type has no task hash
	} {
		out, errs, code := e.crontabTZ("UTC", bad.args...)
		if code != bad.code || out != "" || !strings.Contains(errs, bad.want) || (code == exitFailure && !strings.Contains(errs, "not found")) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", bad.args, code, out, errs, bad.code, bad.want)
		}
	}
}
