package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestRegistrationKeepsStatusAndReschedulesOnChange(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(context.Context) error { return nil })
	k := newKeys("crontab")

	_, stop := runScheduler(t, rdb, testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", New: probeNew(0)}))
	stop()
	for _, f := range []string{"class", "name", "expression", "next_run", "last_run", "status", "interval", "created_at", "tz", "timeout", "concurrent"} {
		if ok, _ := rdb.HExists(ctx, k.Task(name), f).Result(); !ok {
			t.Errorf("task hash lacks the seed field %q", f)
		}
	}
	hourly, err := Parse("every:1h", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hget(t, rdb, name, "interval"), Describe(hourly); got != want || got == "" {
		t.Errorf("interval = %q, want the readable %q", got, want)
	}
	next1, _ := strconv.ParseInt(hget(t, rdb, name, "next_run"), 10, 64)
	created := hget(t, rdb, name, "created_at")
	rdb.HSet(ctx, k.Task(name), "status", "paused")

	// Same declaration again: nothing moves, the operator's status stays.
	_, stop = runScheduler(t, rdb, testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", New: probeNew(0)}))
	stop()
	if got := hget(t, rdb, name, "status"); got != "paused" {
		t.Errorf("status after redeploy = %q, want the operator's paused", got)
	}
	if got := hget(t, rdb, name, "next_run"); got != strconv.FormatInt(next1, 10) {
		t.Errorf("next_run moved from %d to %s on an unchanged redeploy", next1, got)
	}
	if got := hget(t, rdb, name, "created_at"); got != created {
		t.Errorf("created_at changed from %s to %s", created, got)
	}

	// A changed expression reschedules, and still keeps the status.
	_, stop = runScheduler(t, rdb, testRegistry(t, TaskConfig{Name: name, Expression: "every:2s", New: probeNew(0)}))
	stop()
	next2, _ := strconv.ParseInt(hget(t, rdb, name, "next_run"), 10, 64)
	if next2 >= next1 || next2 > time.Now().Add(3*time.Second).UnixMilli() {
		t.Errorf("next_run %d after changing every:1h to every:2s, want within 2s (was %d)", next2, next1)
	}
	if got := hget(t, rdb, name, "expression"); got != "every:2s" {
		t.Errorf("expression = %q", got)
	}
	if got := hget(t, rdb, name, "status"); got != "paused" {
		t.Errorf("status after an expression change = %q, want paused", got)
	}
	if score, _ := rdb.ZScore(ctx, k.Queue(), name).Result(); int64(score) != next2 {
		t.Errorf("queue score %v, want next_run %d", score, next2)
	}
}

func TestMisfirePolicies(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	once, skip := t.Name()+"/once", t.Name()+"/skip"
	var log fireLog
	behave(t, once, func(ctx context.Context) error { log.add(ctx); return nil })
	behave(t, skip, func(ctx context.Context) error { log.add(ctx); return nil })
	reg := testRegistry(t,
		TaskConfig{Name: once, Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: skip, Expression: "every:1h", Misfire: MisfireSkip, New: probeNew(1)})
	_, stop := runScheduler(t, rdb, reg)
	stop()

	// Pretend every process was down for five hours.
	missed := time.Now().Add(-5 * time.Hour).Truncate(time.Hour)
	for _, name := range []string{once, skip} {
		rdb.HSet(ctx, k.Task(name), "next_run", missed.UnixMilli())
		rdb.ZAdd(ctx, k.Queue(), redisZ(missed.UnixMilli(), name))
	}
	// Three processes come back at once: the policy applies exactly once.
	for range 3 {
		runScheduler(t, rdb, reg)
	}
	waitFor(t, 5*time.Second, "the catch-up run", func() bool { return len(log.snapshot()) > 0 })
	time.Sleep(500 * time.Millisecond)
	fires := log.snapshot()
	if len(fires) != 1 || fires[0].task != once || !fires[0].fire.Equal(missed) {
		t.Fatalf("fires after downtime: %+v; want exactly one catch-up run of %q at %v", fires, once, missed)
	}
	nextHour := time.Now().Truncate(time.Hour).Add(time.Hour).UnixMilli()
	for _, name := range []string{once, skip} {
		if got := hget(t, rdb, name, "next_run"); got != strconv.FormatInt(nextHour, 10) {
			t.Errorf("%s: next_run %s after catch-up, want the next future instant %d", name, got, nextHour)
		}
	}
	hist, _ := readHistory(ctx, rdbOf(rdb), skip, 0)
	if len(hist) != 1 || hist[0].Outcome != OutcomeSkipped {
		t.Errorf("misfire=skip history %+v, want one skipped record", hist)
	}
}

func TestRedisRestartedEmptyReregisters(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	name := t.Name()
	var log fireLog
	behave(t, name, func(ctx context.Context) error { log.add(ctx); return nil })
	runScheduler(t, rdb, testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)}))
	waitFor(t, 3*time.Second, "a fire", func() bool { return len(log.snapshot()) > 0 })

	srv.Kill()
	srv.Restart(t)
	restarted := time.Now()
	waitFor(t, 10*time.Second, "a fire after Redis came back empty", func() bool {
		fires := log.snapshot()
		return fires[len(fires)-1].start.After(restarted)
	})
	if hget(t, rdb, name, "expression") != "every:1s" {
		t.Error("task hash not written again")
	}
}

func TestSkewedLocalClocksAgree(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var log fireLog
	behave(t, name, func(ctx context.Context) error { log.add(ctx); return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	for _, skew := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		runScheduler(t, rdb, reg, WithLocalClock(func() time.Time { return time.Now().Add(skew) }))
	}
	time.Sleep(4500 * time.Millisecond)
	fires := log.snapshot()
	if len(fires) < 3 {
		t.Fatalf("%d fires in 4.5s", len(fires))
	}
	for i, f := range fires {
		if lag := f.start.Sub(f.fire); lag < 0 || lag > 5*time.Second {
			t.Errorf("fire %v started at %v: a skewed clock was believed", f.fire, f.start)
		}
		if i > 0 && f.fire.Sub(fires[i-1].fire) != time.Second {
			t.Errorf("fire %v after %v: duplicate or gap", f.fire, fires[i-1].fire)
		}
	}
}

func TestUndeclaredTaskIsPrunedOnlyWhenNoProcessDeclaresIt(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	oldTask, kept := t.Name()+"/old", t.Name()+"/kept"
	behave(t, oldTask, func(context.Context) error { return nil })
	behave(t, kept, func(context.Context) error { return nil })
	oldBuild := testRegistry(t,
		TaskConfig{Name: oldTask, Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: kept, Expression: "every:1h", New: probeNew(1)})
	newBuild := testRegistry(t, TaskConfig{Name: kept, Expression: "every:1h", New: probeNew(1)})

	_, stopOld := runScheduler(t, rdb, oldBuild)
	_, stopNew := runScheduler(t, rdb, newBuild)
	// Rolling deploy: both builds run; the old task must stay.
	time.Sleep(4 * time.Second)
	if n, _ := rdb.Exists(ctx, k.Task(oldTask)).Result(); n != 1 {
		t.Fatal("a task was pruned while a live process still declares it")
	}
	stopOld()
	waitFor(t, 10*time.Second, "the undeclared task to be pruned", func() bool {
		n, _ := rdb.Exists(ctx, k.Task(oldTask)).Result()
		return n == 0
	})
	if _, err := rdb.ZScore(ctx, k.Queue(), oldTask).Result(); err == nil {
		t.Error("pruned task still queued")
	}
	if n, _ := rdb.Exists(ctx, k.Task(kept)).Result(); n != 1 {
		t.Error("a declared task was pruned")
	}
	stopNew()
}

func TestFailedFireIsRetriedWithoutMovingTheSchedule(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	var log fireLog
	behave(t, name, func(ctx context.Context) error {
		log.add(ctx)
		run, _ := Run(ctx)
		if run.JobID == "" {
			return errors.New("scheduled run fails")
		}
		return nil
	})
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", Retries: 1, New: probeNew(0)})
	runScheduler(t, rdb, reg, WithRetryBackoff(50*time.Millisecond))
	k := newKeys("crontab")
	// Make the hourly instant due now.
	fire := time.Now().Truncate(time.Second)
	rdb.HSet(context.Background(), k.Task(name), "next_run", fire.UnixMilli())
	rdb.ZAdd(context.Background(), k.Queue(), redisZ(fire.UnixMilli(), name))
	rdb.Publish(context.Background(), k.Wake(), "test")
	waitFor(t, 5*time.Second, "the retry", func() bool { return len(log.snapshot()) == 2 })
	runs := log.snapshot()
	if !runs[0].fire.Equal(fire) || runs[1].fire.Before(fire) {
		t.Errorf("runs %+v", runs)
	}
	next := hget(t, rdb, name, "next_run")
	if want := fmt.Sprint(fire.Truncate(time.Hour).Add(time.Hour).UnixMilli()); next != want {
		t.Errorf("next_run %s after a retried failure, want the next hour %s", next, want)
	}
}
