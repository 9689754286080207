package runtime

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// flowHash returns the flow-control fields present in a task's hash.
func flowHash(t *testing.T, c redis.UniversalClient, task string) map[string]string {
	t.Helper()
	h, err := c.HGetAll(context.Background(), newKeys("crontab").Task(task)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) == 0 {
		t.Fatalf("task %q has no hash", task)
	}
	out := map[string]string{}
	for _, f := range []string{rdb.FieldMaxRunning, rdb.FieldRateN, rdb.FieldRatePerMS, rdb.FieldPriority} {
		if v, ok := h[f]; ok {
			out[f] = v
		}
	}
	return out
}

// TaskSpec's MaxRunning reaches the task hash only when set, and comes back
// in Inspector.Task; out-of-range values, and a Rate or Priority (not
// supported for scheduled tasks yet), are errors naming the field, and
// nothing is written.
func TestTaskSpecFlowControl(t *testing.T) {
	t.Parallel()
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	client := NewClient(c, smsRegistry(t, 0))
	in := NewInspector(c)

	if err := client.SetTask(ctx, TaskSpec{Key: "plain", Type: "sms", Expression: "every:1h"}); err != nil {
		t.Fatal(err)
	}
	if got := flowHash(t, c, "plain"); len(got) != 0 {
		t.Errorf("a TaskSpec without flow control wrote %v", got)
	}
	spec := TaskSpec{Key: "capped", Type: "sms", Expression: "every:1h", Concurrent: true,
		MaxRunning: 7}
	if err := client.SetTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{rdb.FieldMaxRunning: "7"}
	if got := flowHash(t, c, "capped"); !maps.Equal(got, want) {
		t.Errorf("hash fields %v, want %v", got, want)
	}
	ti, err := in.Task(ctx, "capped")
	if err != nil {
		t.Fatal(err)
	}
	if ti.MaxRunning != 7 || !ti.Rate.IsZero() || ti.Priority != 0 {
		t.Errorf("Inspector.Task: max running %d, rate %v, priority %d", ti.MaxRunning, ti.Rate, ti.Priority)
	}
	// An update without them removes them.
	spec.MaxRunning = 0
	if err := client.SetTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if got := flowHash(t, c, "capped"); len(got) != 0 {
		t.Errorf("after the update: fields %v", got)
	}
	// max_running=1 on a task that is not concurrent is what its lock does.
	if err := client.SetTask(ctx, TaskSpec{Key: "one", Type: "sms", Expression: "every:1h", MaxRunning: 1}); err != nil {
		t.Errorf("MaxRunning 1 without Concurrent: %v", err)
	}

	for _, bad := range []struct {
		spec TaskSpec
		want string
	}{
		{TaskSpec{MaxRunning: -1, Concurrent: true}, `max_running -1: want 0 (no cap) to 1048576`},
		{TaskSpec{MaxRunning: MaxMaxRunning + 1, Concurrent: true}, `max_running 1048577: want 0 (no cap) to 1048576`},
		{TaskSpec{MaxRunning: 2}, `max_running 2 needs Concurrent`},
		{TaskSpec{Priority: MinPriority - 1}, `priority -1001: want -1000 to 1000`},
		{TaskSpec{Priority: MaxPriority + 1}, `priority 1001: want -1000 to 1000`},
		{TaskSpec{Rate: Rate{N: 5, Per: time.Second}}, `rate 5/1s: the fires of a scheduled task are not rate-limited yet`},
		{TaskSpec{Rate: Rate{N: 0, Per: time.Second}}, `rate 0/1s: the fires of a scheduled task are not rate-limited yet`},
		{TaskSpec{Priority: 3}, `priority 3: a task's fires run at their instant`},
	} {
		s := bad.spec
		s.Key, s.Type, s.Expression = "bad", "sms", "every:1h"
		err := client.SetTask(ctx, s)
		if err == nil || !strings.Contains(err.Error(), `crontab: set task "bad": `+bad.want) {
			t.Errorf("SetTask(%+v): %v, want %q", s, err, bad.want)
		}
	}
	if n, _ := c.Exists(ctx, newKeys("crontab").Task("bad")).Result(); n != 0 {
		t.Errorf("a rejected TaskSpec wrote its hash")
	}
}

// A declared task's MaxRunning, Rate and Priority reach its hash when it
// registers, only when set.
func TestRegisterWritesFlowControl(t *testing.T) {
	t.Parallel()
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t,
		TaskConfig{Name: "capped", Expression: "daily:03:00", Concurrent: true, MaxRunning: 4, New: probeNew(0)},
		TaskConfig{Name: "plain", Expression: "daily:03:00", New: probeNew(1)},
	)
	runScheduler(t, c, reg)
	in := NewInspector(c)
	waitFor(t, 5*time.Second, "both tasks registered", func() bool {
		tasks, err := in.ListTasks(ctx)
		return err == nil && len(tasks) == 2
	})
	want := map[string]string{rdb.FieldMaxRunning: "4"}
	if got := flowHash(t, c, "capped"); !maps.Equal(got, want) {
		t.Errorf("capped: fields %v, want %v", got, want)
	}
	if got := flowHash(t, c, "plain"); len(got) != 0 {
		t.Errorf("plain: fields %v", got)
	}
	ti, err := in.Task(ctx, "capped")
	if err != nil {
		t.Fatal(err)
	}
	if ti.MaxRunning != 4 || !ti.Rate.IsZero() || ti.Priority != 0 {
		t.Errorf("Inspector.Task: max running %d, rate %v, priority %d", ti.MaxRunning, ti.Rate, ti.Priority)
	}
}
