package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// noopTask's runs succeed at once.
type noopTask struct{}

func (*noopTask) Handle(context.Context) error { return nil }

// noopTask2 is another type of noopTask's (a type runs one declared task).
type noopTask2 struct{ noopTask }

// TestWithHistoryNone: WithHistory(0, age) keeps no run history (no
// history key is written) while the task hash still has its last result
// and counters; a negative count is refused, naming the option.
func TestWithHistoryNone(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	if _, err := NewScheduler(rc, testRegistry(t), WithHistory(-1, time.Hour)); err == nil || !strings.Contains(err.Error(), "WithHistory") {
		t.Fatalf("WithHistory(-1): %v, want an error naming the option", err)
	}
	reg := testRegistry(t, TaskConfig{Name: "tick", Expression: "every:1s", New: func() TaskInterface { return new(noopTask) }},
		TaskConfig{Name: "kept", Expression: "every:1s", New: func() TaskInterface { return new(noopTask2) }})
	k := newKeys("crontab")
	// A history an earlier setting kept: left as it is, not added to.
	old := `{"task":"kept","fire":1,"start_ms":1,"end_ms":1,"outcome":"ok","process":"p","attempt":1}`
	must(t, rc.LPush(ctx, k.History("kept"), old).Err())
	runScheduler(t, rc, reg, WithHistory(0, time.Hour))
	waitFor(t, 5*time.Second, "two runs of tick", func() bool {
		return rc.HGet(ctx, k.Task("tick"), "runs").Val() >= "2"
	})
	if got := rc.HGet(ctx, k.Task("tick"), "last_result").Val(); got != "ok" {
		t.Errorf("last_result %q, want ok", got)
	}
	waitFor(t, 5*time.Second, "two runs of kept", func() bool {
		return rc.HGet(ctx, k.Task("kept"), "runs").Val() >= "2"
	})
	if got := rc.LRange(ctx, k.History("kept"), 0, -1).Val(); len(got) != 1 || got[0] != old {
		t.Errorf("the history kept before: %v, want it untouched", got)
	}
	if n := rc.Exists(ctx, k.History("tick")).Val(); n != 0 {
		t.Errorf("a history was written with WithHistory(0, ...): %v", rc.LRange(ctx, k.History("tick"), 0, -1).Val())
	}
}
