package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// finishRig writes the Redis state of runs in progress by hand and builds
// the runEnd values the finish queue writes, so a test can finish any mix
// of runs in one batch.
type finishRig struct {
	t   *testing.T
	rdb *redis.Client
	s   *Scheduler
	k   keys
}

func newFinishRig(t *testing.T, rdb *redis.Client, opts ...Option) *finishRig {
	t.Helper()
	s, err := NewScheduler(rdb, NewRegistry(), append([]Option{WithProcessID("me")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &finishRig{t: t, rdb: rdb, s: s, k: newKeys("crontab")}
}

// task writes a queued task hash with zeroed counters and next_run next.
func (r *finishRig) task(member string, next int64) {
	r.t.Helper()
	ctx := context.Background()
	must(r.t, r.rdb.HSet(ctx, r.k.Task(member), "name", member, "expression", "every:1s", "next_run", next,
		"status", "active", "runs", 0, "failures", 0, "skips", 0).Err())
	must(r.t, r.rdb.SAdd(ctx, r.k.Tasks(), member).Err())
	if next != 0 {
		must(r.t, r.rdb.ZAdd(ctx, r.k.Queue(), redis.Z{Score: float64(next), Member: member}).Err())
	}
}

// started writes what the claim script writes for a run of member at
// fireMS (its lock with lockHolder, "" for none; its lease in runs) and
// returns the run's end, with outcome err.
func (r *finishRig) started(member string, fireMS int64, lockHolder string, once bool, err error) *runEnd {
	r.t.Helper()
	ctx := context.Background()
	runID := rdb.RunID(member, fireMS)
	run := &inflightRun{task: member, runID: runID, lockValue: rdb.LockValue(r.s.id, fireMS), ttl: time.Minute}
	if lockHolder != "" {
		must(r.t, r.rdb.Set(ctx, r.k.Lock(member), lockHolder, time.Minute).Err())
	}
	must(r.t, r.rdb.HSet(ctx, r.k.Runs(), runID, leaseValue(r.s.id, member, fireMS, fireMS)).Err())
	at := time.UnixMilli(fireMS)
	rec := Record{Task: member, Fire: at, Start: at, End: at.Add(7 * time.Millisecond), Outcome: OutcomeOK,
		Process: r.s.id, Attempt: 1}
	if err != nil {
		rec.Outcome, rec.Error = OutcomeFailed, err.Error()
	}
	f := &fire{state: taskState{Member: member}, at: at, runID: runID, once: once}
	return &runEnd{f: f, run: run, rec: rec, cost: 7 * time.Millisecond, done: make(chan struct{})}
}

// history returns the fires (unix ms) of member's history, newest first.
func (r *finishRig) history(member string) []int64 {
	r.t.Helper()
	recs, err := r.s.History(context.Background(), member, 0)
	if err != nil {
		r.t.Fatalf("history of %s: %v", member, err)
	}
	out := make([]int64, len(recs))
	for i, rec := range recs {
		out[i] = ms(rec.Fire)
	}
	return out
}

// TestFinishBatchKeepsEachRunsSemantics finishes, in one batch, runs that
// each take one branch of the finish: ok and failed runs, a lock held by
// someone else, a once task (removed) and a once run whose task got a next
// instant meanwhile (kept), several runs of one concurrent task, more runs
// of one task than the history keeps, a history key holding a foreign
// value and a task key that is not a hash. Each run is recorded as the
// one-run finish recorded it, and the foreign keys fail no other run.
func TestFinishBatchKeepsEachRunsSemantics(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	logs, logger := newLogCapture()
	r := newFinishRig(t, rdb, WithHistory(3, time.Hour), WithLogger(logger))
	fire := time.Now().Truncate(time.Second).UnixMilli() - 10_000 // recent: history drops records older than its age
	next := fire + 1000

	for _, m := range []string{"ok", "failed", "foreign-lock", "conc", "many", "bad-history"} {
		r.task(m, next)
	}
	r.task("once", 0)
	r.task("once-rescheduled", next)
	// Counters as HINCRBY sees them: refused (reset to 1), exact beyond a
	// Lua number's integers, negative, absent.
	for _, m := range []string{"odd-counters", "big-counters", "no-counters"} {
		r.task(m, next)
	}
	must(t, rdb.HSet(ctx, r.k.Task("odd-counters"), "runs", "007", "failures", "lots").Err())
	must(t, rdb.HSet(ctx, r.k.Task("big-counters"), "runs", "99999999999999999", "failures", "-12").Err())
	must(t, rdb.HDel(ctx, r.k.Task("no-counters"), "runs", "failures").Err())
	must(t, rdb.Set(ctx, r.k.History("bad-history"), "not a list", 0).Err())
	must(t, rdb.Set(ctx, r.k.Task("not-a-hash"), "a string", 0).Err())

	mine := func(fireMS int64) string { return r.s.id + "|" + strconv.FormatInt(fireMS, 10) }
	batch := []*runEnd{
		r.started("ok", fire, mine(fire), false, nil),
		r.started("failed", fire, mine(fire), false, errors.New("boom")),
		r.started("foreign-lock", fire, "other|"+strconv.FormatInt(fire, 10), false, nil),
		r.started("once", fire, mine(fire), true, nil),
		r.started("once-rescheduled", fire, mine(fire), true, nil),
		r.started("conc", fire, "", false, nil),
		r.started("conc", fire+1000, "", false, errors.New("conc failed")),
		r.started("bad-history", fire, mine(fire), false, nil),
		r.started("not-a-hash", fire, mine(fire), false, nil),
		r.started("odd-counters", fire, mine(fire), false, errors.New("odd")),
		r.started("big-counters", fire, mine(fire), false, errors.New("big")),
		r.started("no-counters", fire, mine(fire), false, errors.New("none")),
	}
	for i := range 5 {
		batch = append(batch, r.started("many", fire+int64(i)*1000, "", false, nil))
	}
	r.s.tasks.writeFinishes(batch)

	// Nothing of any run is left in progress.
	if n, _ := rdb.HLen(ctx, r.k.Runs()).Result(); n != 0 {
		t.Errorf("runs holds %d leases after the batch, want 0", n)
	}
	// Locks: ours released, someone else's kept.
	for _, m := range []string{"ok", "failed", "once", "once-rescheduled", "bad-history", "not-a-hash"} {
		if n, _ := rdb.Exists(ctx, r.k.Lock(m)).Result(); n != 0 {
			t.Errorf("lock of %s (ours) not released", m)
		}
	}
	if v, _ := rdb.Get(ctx, r.k.Lock("foreign-lock")).Result(); v != "other|"+strconv.FormatInt(fire, 10) {
		t.Errorf("a lock held by someone else was touched: %q", v)
	}

	// Task hashes: results and counters.
	for _, c := range []struct {
		task, result, err, runs, failures string
	}{
		{"ok", "ok", "", "1", "0"},
		{"failed", "failed", "boom", "1", "1"},
		{"foreign-lock", "ok", "", "1", "0"},
		{"once-rescheduled", "ok", "", "1", "0"},
		{"conc", "failed", "conc failed", "2", "1"}, // the last run of the batch sets last_*
		{"many", "ok", "", "5", "0"},
		{"bad-history", "ok", "", "1", "0"},
		{"odd-counters", "failed", "odd", "1", "1"},
		{"big-counters", "failed", "big", "100000000000000000", "-11"},
		{"no-counters", "failed", "none", "1", "1"},
	} {
		got := []string{hget(t, rdb, c.task, "last_result"), hget(t, rdb, c.task, "last_error"),
			hget(t, rdb, c.task, "runs"), hget(t, rdb, c.task, "failures"), hget(t, rdb, c.task, "last_duration")}
		want := []string{c.result, c.err, c.runs, c.failures, "7"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("task %s: last_result, last_error, runs, failures, last_duration = %q, want %q", c.task, got, want)
		}
	}
	// The once task is gone, from its hash, the queue and the task set;
	// the rescheduled one is kept.
	if n, _ := rdb.Exists(ctx, r.k.Task("once")).Result(); n != 0 {
		t.Error("once task not removed after its run")
	}
	if ok, _ := rdb.SIsMember(ctx, r.k.Tasks(), "once").Result(); ok {
		t.Error("once task still in the task set")
	}
	if ok, _ := rdb.SIsMember(ctx, r.k.Tasks(), "once-rescheduled").Result(); !ok {
		t.Error("a once run whose task has a next instant removed the task")
	}
	if _, err := rdb.ZScore(ctx, r.k.Queue(), "once-rescheduled").Result(); err != nil {
		t.Errorf("a once run whose task has a next instant took it out of the queue: %v", err)
	}
	// A task key that is not a hash is left alone.
	if v, _ := rdb.Get(ctx, r.k.Task("not-a-hash")).Result(); v != "a string" {
		t.Errorf("a task key holding a string was changed: %q", v)
	}

	// History: one record per run, newest first, capped at 3.
	for _, c := range []struct {
		task string
		want []int64
	}{
		{"ok", []int64{fire}},
		{"once", []int64{fire}},
		{"conc", []int64{fire + 1000, fire}},
		{"many", []int64{fire + 4000, fire + 3000, fire + 2000}},
		{"not-a-hash", []int64{fire}},
	} {
		if got := r.history(c.task); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("history of %s: fires %v, want %v", c.task, got, c.want)
		}
	}
	if v, _ := rdb.Get(ctx, r.k.History("bad-history")).Result(); v != "not a list" {
		t.Errorf("a history key holding a string was changed: %q", v)
	}
	if recs, _ := rdb.LRange(ctx, r.k.History("failed"), 0, -1).Result(); len(recs) != 1 {
		t.Errorf("history of failed: %d records, want 1", len(recs))
	} else if rec, err := decodeRecord(recs[0]); err != nil || rec.Outcome != OutcomeFailed || rec.Error != "boom" {
		t.Errorf("history of failed: %+v, %v; want a failed record with its error", rec, err)
	}
	if l := logs.lines("history key holds a foreign value", "bad-history"); len(l) != 1 {
		t.Errorf("foreign history logged %d times, want once:\n%s", len(l), logs)
	}
	if l := logs.lines("history key holds a foreign value"); len(l) != 1 {
		t.Errorf("foreign history warnings for other tasks:\n%s", logs)
	}
}

// TestFinishBatchWaitsForRedis finishes runs while Redis is down: the
// finish queue retries, and the runs are recorded, each once, when Redis is
// back (with its data, from the AOF). The runs stay in flight until then,
// and leave it once written.
func TestFinishBatchWaitsForRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	rdb := srv.Client(t)
	ctx := context.Background()
	r := newFinishRig(t, rdb)
	fire := time.Now().Truncate(time.Second).UnixMilli() - 10_000 // recent: history drops records older than its age
	var ends []*runEnd
	for i := range 3 {
		m := "t" + strconv.Itoa(i)
		r.task(m, fire+1000)
		ends = append(ends, r.started(m, fire, r.s.id+"|"+strconv.FormatInt(fire, 10), false, nil))
	}
	for _, e := range ends {
		r.s.tasks.inflight[e.f.runID] = e.run // as startRun puts them
	}
	srv.Kill()
	var wg sync.WaitGroup
	for _, e := range ends {
		wg.Go(func() { r.s.tasks.finishes.add(e); <-e.done })
	}
	time.Sleep(500 * time.Millisecond)
	if n := r.s.tasks.count(); n != 3 {
		t.Errorf("%d runs in flight while their finishes wait for Redis, want 3 (their locks and leases renewed)", n)
	}
	srv.Restart(t)
	wg.Wait()
	if n := r.s.tasks.count(); n != 0 {
		t.Errorf("%d runs in flight once their finishes are written, want 0", n)
	}
	for i := range 3 {
		m := "t" + strconv.Itoa(i)
		if runs := hget(t, rdb, m, "runs"); runs != "1" {
			t.Errorf("task %s: runs %q after Redis came back, want 1", m, runs)
		}
		if h := r.history(m); len(h) != 1 {
			t.Errorf("task %s: %d history records, want 1", m, len(h))
		}
		if n, _ := rdb.Exists(ctx, r.k.Lock(m)).Result(); n != 0 {
			t.Errorf("task %s: lock not released", m)
		}
	}
	if n, _ := rdb.HLen(ctx, r.k.Runs()).Result(); n != 0 {
		t.Errorf("runs holds %d leases, want 0", n)
	}
}

// TestFinishBatchManyTasksAtOneInstant runs more every:1s tasks than the
// workers of two schedulers, so their runs finish together in batches,
// and checks that every run is recorded once: the task's run counter, its
// history and the handler's calls agree, and no lock, lease or running
// entry is left once the schedulers stopped.
func TestFinishBatchManyTasksAtOneInstant(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	typ := t.Name()
	var fires fireLog
	const tasks = 24
	reg := testRegistry(t, TaskConfig{Name: typ, New: probeNew(0)})
	c := NewClient(rdb, reg)
	for i := range tasks {
		key := fmt.Sprintf("%s/%02d", typ, i)
		behave(t, key, func(ctx context.Context) error { fires.add(ctx); return nil })
		must(t, c.SetTask(ctx, TaskSpec{Key: key, Type: typ, Expression: "every:1s"}))
	}
	_, stop1 := runScheduler(t, rdb, reg, WithWorkers(5))
	_, stop2 := runScheduler(t, rdb, reg, WithWorkers(5))
	waitFor(t, 20*time.Second, "three instants of every task", func() bool {
		return len(fires.snapshot()) >= 3*tasks
	})
	stop1()
	stop2()

	k := newKeys("crontab")
	seen := map[string]int{}
	for _, f := range fires.snapshot() {
		seen[f.task]++
	}
	if d := duplicates(fires.snapshot()); len(d) > 0 {
		t.Errorf("instants fired more than once: %v", d)
	}
	for i := range tasks {
		key := fmt.Sprintf("%s/%02d", typ, i)
		runs, _ := strconv.Atoi(hget(t, rdb, key, "runs"))
		hist, err := rdb.LLen(ctx, k.History(key)).Result()
		if err != nil || runs != seen[key] || int(hist) != seen[key] || runs == 0 {
			t.Errorf("task %s: %d handler calls, runs counter %d, %d history records (%v); want all equal",
				key, seen[key], runs, hist, err)
		}
		if hget(t, rdb, key, "last_result") != "ok" {
			t.Errorf("task %s: last_result %q", key, hget(t, rdb, key, "last_result"))
		}
		if n, _ := rdb.Exists(ctx, k.Lock(key)).Result(); n != 0 {
			t.Errorf("task %s: lock left after the schedulers stopped", key)
		}
	}
	if n, _ := rdb.HLen(ctx, k.Runs()).Result(); n != 0 {
		t.Errorf("runs holds %d leases after the schedulers stopped", n)
	}
	if n, _ := rdb.Exists(ctx, k.Running()).Result(); n != 0 {
		t.Error("the schedulers wrote an older release's running set")
	}
	if leases, _ := rdb.Keys(ctx, k.Prefix()+"run:*").Result(); len(leases) != 0 {
		t.Errorf("an older release's lease keys written: %v", leases)
	}
}
