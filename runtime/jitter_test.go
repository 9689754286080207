package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// A jittered run-time task fires at its expression's instants plus the
// stable offset of its key, once per instant across two schedulers, and
// never before that instant.
func TestJitterFiresAtTheOffsetInstant(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	runScheduler(t, rc, reg)
	runScheduler(t, rc, reg)
	c := NewClient(rc, reg)
	to := unique(t)
	const key = "jittered sms"
	offset := schedule.JitterOffset(key, time.Second)
	if offset == 0 {
		t.Fatal("pick a key whose offset is not 0")
	}
	if err := c.SetTask(ctx, TaskSpec{Key: key, Type: "sms", Params: smsJob{To: to}, Expression: "every:2s", Jitter: time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := hget(t, rc, key, "jitter"); got != "1000" {
		t.Errorf("hash field jitter = %q, want 1000", got)
	}
	waitFor(t, 8*time.Second, "three fires", func() bool { return len(smsRuns(to)) >= 3 })
	seen := map[int64]int{}
	for _, r := range smsRuns(to) {
		fire := r.run.Fire.UnixMilli()
		seen[fire]++
		if got := time.Duration(fire%2000) * time.Millisecond; got != offset {
			t.Errorf("fire %v is %v into its 2s period, want the offset %v", r.run.Fire, got, offset)
		}
		if r.started.Before(r.run.Fire) {
			t.Errorf("run of %v started %v early", r.run.Fire, r.run.Fire.Sub(r.started))
		}
	}
	for fire, n := range seen {
		if n != 1 {
			t.Errorf("instant %d ran %d times", fire, n)
		}
	}
	info, err := NewInspector(rc).Task(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if info.Jitter != time.Second || info.JitterOffset != offset {
		t.Errorf("Inspector: jitter %v offset %v, want 1s and %v", info.Jitter, info.JitterOffset, offset)
	}
	if next := info.Next.UnixMilli(); time.Duration(next%2000)*time.Millisecond != offset {
		t.Errorf("queued next %v is not at the offset", info.Next)
	}
}

// The jitter is validated per task, and a changed jitter reschedules the
// task; dropping it removes the hash field.
func TestJitterSetTasks(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rc, smsRegistry(t, 0))
	res, err := c.SetTasks(ctx, []TaskSpec{
		{Key: "j", Type: "sms", Expression: "every:1h", Jitter: time.Hour},
		{Key: "neg", Type: "sms", Expression: "every:1h", Jitter: -time.Second},
		{Key: "big", Type: "sms", Expression: "every:1h", Jitter: 25 * time.Hour},
		{Key: "frac", Type: "sms", Expression: "every:1h", Jitter: 1500 * time.Microsecond},
	})
	var te *TasksError
	if !errors.As(err, &te) || res[0] != TaskCreated {
		t.Fatalf("SetTasks: %v, %v", res, err)
	}
	for i, want := range []string{"", `"neg": jitter -1s: want 0 (none) to 24h0m0s`, `"big": jitter 25h0m0s`, `"frac": jitter 1.5ms: want a whole number of milliseconds`} {
		if (want == "") != (te.Errs[i] == nil) || want != "" && !strings.Contains(te.Errs[i].Error(), want) {
			t.Errorf("entry %d: %v, want %q", i, te.Errs[i], want)
		}
	}
	next := func() int64 { return int64(rc.ZScore(ctx, newKeys("crontab").Queue(), "j").Val()) }
	if got, want := time.Duration(next()%3_600_000)*time.Millisecond, schedule.JitterOffset("j", time.Hour); got != want {
		t.Errorf("queued at %v into the hour, want the offset %v", got, want)
	}
	res, err = c.SetTasks(ctx, []TaskSpec{{Key: "j", Type: "sms", Expression: "every:1h", Jitter: 30 * time.Minute}})
	if err != nil || res[0] != TaskRescheduled {
		t.Errorf("changed jitter: %v, %v; want rescheduled", res, err)
	}
	if got, want := time.Duration(next()%3_600_000)*time.Millisecond, schedule.JitterOffset("j", 30*time.Minute); got != want {
		t.Errorf("rescheduled at %v into the hour, want the new offset %v", got, want)
	}
	res, err = c.SetTasks(ctx, []TaskSpec{{Key: "j", Type: "sms", Expression: "every:1h"}})
	if err != nil || res[0] != TaskRescheduled || hget(t, rc, "j", "jitter") != "" {
		t.Errorf("jitter dropped: %v, %v, field %q; want rescheduled and no field", res, err, hget(t, rc, "j", "jitter"))
	}
	if next()%3_600_000 != 0 {
		t.Errorf("without jitter queued at %d, want the hour", next())
	}
}

// A task declared with a Jitter is registered at its offset instant, with
// the jitter in its hash.
func TestJitterDeclaredTask(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	reg := testRegistry(t, TaskConfig{Name: "declared jitter", Expression: "every:1h", Jitter: time.Hour,
		New: func() TaskInterface { return new(smsJob) }})
	runScheduler(t, rc, reg)
	if got := hget(t, rc, "declared jitter", "jitter"); got != "3600000" {
		t.Errorf("hash field jitter = %q", got)
	}
	score := int64(rc.ZScore(context.Background(), newKeys("crontab").Queue(), "declared jitter").Val())
	if got, want := time.Duration(score%3_600_000)*time.Millisecond, schedule.JitterOffset("declared jitter", time.Hour); got != want {
		t.Errorf("queued %v into the hour, want the offset %v", got, want)
	}
}
