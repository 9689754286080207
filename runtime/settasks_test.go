package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// SetTasks validates each spec on its own: the invalid ones are reported
// with their key and field and not written, the valid ones are; a key
// given twice is the last entry's; a key declared in code is refused.
func TestSetTasksPerTaskErrors(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	c := NewClient(rc, reg)
	if _, _, err := rdbOf(rc).Register(ctx, 1, []rdb.TaskDecl{{Key: "static", Type: "sms", Expression: "every:1h",
		TZ: "UTC", Status: "active", NextMS: 1 << 40, Misfire: "once"}}); err != nil {
		t.Fatal(err)
	}
	specs := []TaskSpec{
		{Key: "ok1", Type: "sms", Expression: "every:1h", Params: smsJob{To: "a"}},
		{Key: "badtype", Type: "nope", Expression: "every:1h"},
		{Key: "badexpr", Type: "sms", Expression: "every:banana"},
		{Key: "badzone", Type: "sms", Expression: "every:1h", TZ: "Mars/Base"},
		{Key: "badparams", Type: "sms", Expression: "every:1h", Params: []int{1}},
		{Key: "dup", Type: "sms", Expression: "every:1h", Params: smsJob{Text: "first"}},
		{Key: "static", Type: "sms", Expression: "every:1h"},
		{Key: "dup", Type: "sms", Expression: "every:2h", Params: smsJob{Text: "last"}},
		{Key: "ok2", Type: "sms", Expression: "daily:03:00", TZ: "Europe/Paris"},
		{Key: "badtimeout", Type: "sms", Expression: "every:1h", Timeout: -time.Second},
	}
	res, err := c.SetTasks(ctx, specs)
	var te *TasksError
	if !errors.As(err, &te) || len(te.Errs) != len(specs) {
		t.Fatalf("SetTasks: %v, want a *TasksError with %d entries", err, len(specs))
	}
	wantErr := map[int]string{1: `"badtype": type "nope" is not registered`, 2: `"badexpr": expression "every:banana"`,
		3: `"badzone": tz "Mars/Base"`, 4: `"badparams": params do not decode`, 6: `"static": a task declared in code`,
		9: `"badtimeout": timeout -1s: want 0 (the type's) or more`}
	want := []TaskResult{TaskCreated, TaskFailed, TaskFailed, TaskFailed, TaskFailed, TaskSuperseded, TaskFailed, TaskCreated, TaskCreated, TaskFailed}
	for i := range specs {
		if res[i] != want[i] {
			t.Errorf("entry %d (%s): %v, want %v", i, specs[i].Key, res[i], want[i])
		}
		if w, ok := wantErr[i]; ok != (te.Errs[i] != nil) || ok && !strings.Contains(te.Errs[i].Error(), w) {
			t.Errorf("entry %d: error %v, want one containing %q", i, te.Errs[i], w)
		}
	}
	if !strings.Contains(err.Error(), "6 of 10 failed") {
		t.Errorf("error %q does not count the failures", err)
	}
	for _, k := range []string{"badtype", "badexpr", "badzone", "badparams", "badtimeout"} {
		if n := rc.Exists(ctx, newKeys("crontab").Task(k)).Val(); n != 0 {
			t.Errorf("invalid task %q was written", k)
		}
		if _, err := rc.ZScore(ctx, newKeys("crontab").Queue(), k).Result(); err == nil {
			t.Errorf("invalid task %q was queued", k)
		}
	}
	if got := hget(t, rc, "static", "source"); got != "static" {
		t.Errorf("the declared task's source became %q", got)
	}
	if got := hget(t, rc, "dup", "expression"); got != "every:2h" || !strings.Contains(hget(t, rc, "dup", "params"), "last") {
		t.Errorf("dup: expression %q params %q, want the last entry's", got, hget(t, rc, "dup", "params"))
	}
	for _, k := range []string{"ok1", "ok2", "dup"} {
		if _, err := rc.ZScore(ctx, newKeys("crontab").Queue(), k).Result(); err != nil {
			t.Errorf("valid task %q is not queued: %v", k, err)
		}
		if rc.SIsMember(ctx, newKeys("crontab").Tasks(), k).Val() {
			t.Errorf("run-time task %q is in the tasks set, which lists declared tasks only", k)
		}
	}
	// Again: unchanged schedules are updated in place, a changed one is
	// rescheduled.
	res, err = c.SetTasks(ctx, []TaskSpec{specs[0], {Key: "ok2", Type: "sms", Expression: "daily:04:00", TZ: "Europe/Paris"}})
	if err != nil || res[0] != TaskUpdated || res[1] != TaskRescheduled {
		t.Errorf("second SetTasks: %v, %v; want [updated rescheduled]", res, err)
	}
}

// A batch whose call fails (a foreign value in one of its task keys)
// writes none of its tasks and reports each of them; the other batches
// are written.
func TestSetTasksFailedBatchWritesNothing(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rc, smsRegistry(t, 0))
	n := rdb.DefaultTaskBatch + 100
	specs := make([]TaskSpec, n)
	for i := range specs {
		specs[i] = TaskSpec{Key: fmt.Sprintf("t%04d", i), Type: "sms", Expression: "every:1h"}
	}
	foreign := 10
	if err := rc.Set(ctx, newKeys("crontab").Task(specs[foreign].Key), "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := c.SetTasks(ctx, specs)
	var te *TasksError
	if !errors.As(err, &te) {
		t.Fatalf("SetTasks: %v, want a *TasksError", err)
	}
	for i := range specs {
		inFailed := i < rdb.DefaultTaskBatch
		if inFailed != (te.Errs[i] != nil) || inFailed != (res[i] == TaskFailed) {
			t.Fatalf("entry %d: %v, %v; want failed: %v", i, res[i], te.Errs[i], inFailed)
		}
	}
	if e := te.Errs[0].Error(); !strings.Contains(e, "WRONGTYPE") || !strings.Contains(e, specs[foreign].Key) || !strings.Contains(e, `"t0000"`) {
		t.Errorf("batch error %q does not name the foreign key and the task", e)
	}
	if q := rc.ZCard(ctx, newKeys("crontab").Queue()).Val(); q != 100 {
		t.Errorf("%d tasks queued, want the 100 of the second batch", q)
	}
	if s := rc.SCard(ctx, newKeys("crontab").Unqueued()).Val(); s != 0 {
		t.Errorf("%d tasks in the unqueued set, want none", s)
	}
	if rc.Exists(ctx, newKeys("crontab").Task(specs[0].Key)).Val() != 0 {
		t.Error("a task of the failed batch was written")
	}
}

// RemoveTasks removes the run-time tasks and reports the missing keys
// (ErrNotFound) and the declared ones per key.
func TestRemoveTasksPerKey(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rc, smsRegistry(t, 0))
	if _, _, err := rdbOf(rc).Register(ctx, 1, []rdb.TaskDecl{{Key: "static", Type: "sms", Expression: "every:1h",
		TZ: "UTC", Status: "active", NextMS: 1 << 40, Misfire: "once"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetTasks(ctx, []TaskSpec{{Key: "a", Type: "sms", Expression: "every:1h"}, {Key: "b", Type: "sms", Expression: "every:1h"}}); err != nil {
		t.Fatal(err)
	}
	err := c.RemoveTasks(ctx, []string{"a", "missing", "static", "b", "a"})
	var te *TasksError
	if !errors.As(err, &te) || len(te.Errs) != 5 {
		t.Fatalf("RemoveTasks: %v, want a *TasksError with 5 entries", err)
	}
	if te.Errs[0] != nil || te.Errs[3] != nil || te.Errs[4] != nil {
		t.Errorf("removed tasks reported: %v", te.Errs)
	}
	if !errors.Is(te.Errs[1], ErrNotFound) || !strings.Contains(te.Errs[1].Error(), `"missing"`) {
		t.Errorf("missing key: %v, want ErrNotFound naming it", te.Errs[1])
	}
	if te.Errs[2] == nil || !strings.Contains(te.Errs[2].Error(), "declared in code") {
		t.Errorf("declared key: %v", te.Errs[2])
	}
	if !errors.Is(err, ErrNotFound) {
		t.Error("errors.Is does not see the per-key ErrNotFound")
	}
	k := newKeys("crontab")
	for _, key := range []string{"a", "b"} {
		if rc.Exists(ctx, k.Task(key)).Val() != 0 || rc.SIsMember(ctx, k.Tasks(), key).Val() {
			t.Errorf("task %q not removed", key)
		}
		if _, err := rc.ZScore(ctx, k.Queue(), key).Result(); err == nil {
			t.Errorf("task %q still queued", key)
		}
	}
	if rc.Exists(ctx, k.Task("static")).Val() != 1 {
		t.Error("the declared task was removed")
	}
	if err := c.RemoveTasks(ctx, []string{"static2"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("RemoveTasks of a missing key alone: %v", err)
	}
}

// Tasks written by SetTasks fire on a running scheduler.
func TestSetTasksFire(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	runScheduler(t, rc, reg)
	c := NewClient(rc, reg)
	to := unique(t)
	specs := make([]TaskSpec, 20)
	for i := range specs {
		specs[i] = TaskSpec{Key: fmt.Sprintf("bulk %d", i), Type: "sms", Params: smsJob{To: to, Text: fmt.Sprint(i)}, Expression: "every:1s"}
	}
	if _, err := c.SetTasks(ctx, specs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "every bulk task to fire", func() bool {
		seen := map[string]bool{}
		for _, r := range smsRuns(to) {
			seen[r.run.Task] = true
		}
		return len(seen) == len(specs)
	})
	if err := c.RemoveTasks(ctx, func() []string {
		keys := make([]string, len(specs))
		for i, s := range specs {
			keys[i] = s.Key
		}
		return keys
	}()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	n := len(smsRuns(to))
	time.Sleep(1500 * time.Millisecond)
	if m := len(smsRuns(to)); m != n {
		t.Errorf("removed tasks ran %d more times", m-n)
	}
}
