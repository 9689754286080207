package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestBadDataIsLoggedAndSkipped puts foreign and corrupt values in every
// kind of key of a namespace, starts two schedulers on it, and checks that
// each one is logged and skipped, that the schedulers keep running, that a
// healthy task keeps firing once per instant and healthy jobs keep running,
// and that nothing else is lost.
func TestBadDataIsLoggedAndSkipped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	tick, probe := t.Name()+"/tick", t.Name()+"/probe"
	var fires fireLog
	behave(t, tick, func(ctx context.Context) error { fires.add(ctx); return nil })
	var probes fireLog
	behave(t, probe, func(ctx context.Context) error { probes.add(ctx); return nil })
	reg := testRegistry(t,
		TaskConfig{Name: tick, Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: probe, Expression: "every:1h", New: probeNew(1)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }})
	to := unique(t)

	for _, m := range []string{"bad-counters-2", "foreign-lock", "list-lock", "bad-history", "inf-score", "neg-inf-score",
		"huge-score", "as-string", "bad-next", "bad-status", "bad-type", "bad-expr", "bad-tz", "bad-counters"} {
		behave(t, m, func(ctx context.Context) error { probes.add(ctx); return nil })
	}

	// Register the healthy tasks first, as a running deployment would have.
	_, stop := runScheduler(t, rdb, reg)
	stop()

	now := time.Now().UnixMilli()
	due := strconv.FormatInt(now-500, 10)
	// taskHash writes a queued, due task hash of the probe type with the
	// given fields overriding the defaults.
	taskHash := func(member string, fields ...string) {
		t.Helper()
		h := map[string]string{"name": member, "class": "x", "type": probe, "expression": "every:1s", "tz": "UTC",
			"next_run": due, "status": "active", "timeout": "5000", "concurrent": "0", "misfire": "once",
			"source": sourceDynamic, "runs": "0", "failures": "0", "skips": "0"}
		for i := 0; i+1 < len(fields); i += 2 {
			h[fields[i]] = fields[i+1]
		}
		args := make([]any, 0, 2*len(h))
		for f, v := range h {
			args = append(args, f, v)
		}
		must(t, rdb.HSet(ctx, k.Task(member), args...).Err())
		must(t, rdb.SAdd(ctx, k.Tasks(), member).Err())
		must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 500), Member: member}).Err())
	}

	// Per-task keys.
	must(t, rdb.Set(ctx, k.Task("as-string"), "not a hash", 0).Err())
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 500), Member: "as-string"}).Err())
	must(t, rdb.SAdd(ctx, k.Tasks(), "as-string").Err())
	taskHash("bad-next", "next_run", "soon")
	taskHash("bad-status", "status", "zombie")
	taskHash("bad-type", "type", "os/exec.Cmd")
	taskHash("bad-expr", "expression", "every:banana")
	taskHash("bad-tz", "tz", "Mars/Olympus")
	taskHash("bad-params", "params", "{not json")
	taskHash("bad-counters", "runs", "lots", "failures", "many", "skips", "several", "status", "paused")
	taskHash("bad-counters-2", "runs", "lots", "failures", "many", "skips", "several")
	taskHash("foreign-lock")
	must(t, rdb.Set(ctx, k.Lock("foreign-lock"), "someone else, forever", 0).Err())
	taskHash("list-lock")
	must(t, rdb.RPush(ctx, k.Lock("list-lock"), "a", "b").Err())
	taskHash("bad-history")
	must(t, rdb.Set(ctx, k.History("bad-history"), "not a list", 0).Err())
	must(t, rdb.LPush(ctx, k.History(tick), "{garbage", `{"task":1}`, "null").Err())
	taskHash("inf-score")
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: math.Inf(1), Member: "inf-score"}).Err())
	taskHash("neg-inf-score")
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: math.Inf(-1), Member: "neg-inf-score"}).Err())
	taskHash("huge-score")
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: 1e300, Member: "huge-score"}).Err())
	taskHash("later-inf-score", "next_run", strconv.FormatInt(now+3600_000, 10))
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: math.Inf(1), Member: "later-inf-score"}).Err())
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 500), Member: "no-hash"}).Err())
	// Runs in progress with corrupt leases, of a process that never beats;
	// and an older release's running entries without a lease key.
	must(t, rdb.HSet(ctx, k.Runs(), "bad-lease@1000", "{not json").Err())
	must(t, rdb.SAdd(ctx, k.Running(), "no-at-sign", "no-lease@2000").Err())
	must(t, rdb.ZAdd(ctx, k.Declared(), redis.Z{Score: math.Inf(-1), Member: tick}).Err())
	must(t, rdb.ZAdd(ctx, k.Processes(), redis.Z{Score: math.Inf(1), Member: "immortal"}).Err())

	// Jobs.
	env := func(text string) string {
		b, _ := json.Marshal(envelope{Task: "sms", Payload: json.RawMessage(fmt.Sprintf(`{"to":%q,"text":%q}`, to, text))})
		return string(b)
	}
	rawJob := func(id, envelope string, score float64) {
		t.Helper()
		must(t, rdb.HSet(ctx, k.JobData(), id, envelope).Err())
		must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: score, Member: id}).Err())
	}
	rawJob("garbage-json", "{not json", float64(now))
	rawJob("invalid-utf8", "\xff\xfe{", float64(now))
	rawJob("no-task", `{"payload":{}}`, float64(now))
	rawJob("unknown-type", `{"task":"os/exec.Cmd","payload":{}}`, float64(now))
	rawJob("bad-payload", `{"task":"sms","payload":"not an object"}`, float64(now))
	rawJob("neg-inf-job", env("neg-inf"), math.Inf(-1))
	rawJob("inf-job", env("inf"), math.Inf(1))
	must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: float64(now), Member: "no-data"}).Err())
	must(t, rdb.HSet(ctx, k.Stats(), "sms:runs", "lots", "sms:failures", "many").Err())
	must(t, rdb.HSet(ctx, k.Attempts(), "neg-inf-job", "often").Err())
	must(t, rdb.ZAdd(ctx, k.Dead(), redis.Z{Score: float64(now), Member: "dead-without-data"}).Err())
	must(t, rdb.HSet(ctx, k.DeadData(), "dead-garbage", "{not json").Err())
	must(t, rdb.ZAdd(ctx, k.Dead(), redis.Z{Score: float64(now), Member: "dead-garbage"}).Err())

	// Singleton keys of the wrong type.
	must(t, rdb.Set(ctx, k.Meta(), "not a hash", 0).Err())
	must(t, rdb.RPush(ctx, k.Master(), "not", "a", "string").Err())
	must(t, rdb.Set(ctx, k.Stats()+"x", "unrelated key", 0).Err())

	logs, logger := newLogCapture()
	s1, _ := runScheduler(t, rdb, reg, WithLogger(logger))
	runScheduler(t, rdb, reg, WithLogger(logger))
	c := NewClient(rdb, reg)

	// Later, while they run, the queue and the job data become foreign
	// values too.
	time.Sleep(1500 * time.Millisecond)
	must(t, rdb.Del(ctx, k.Queue()).Err())
	must(t, rdb.Set(ctx, k.Queue(), "not a zset", 0).Err())
	must(t, rdb.Set(ctx, k.Jobs(), "not a zset", 0).Err())
	broken := time.Now()
	waitFor(t, 10*time.Second, "the tick to fire again after its queue was replaced", func() bool {
		return firstStartAfter(fires.snapshot(), broken.Add(500*time.Millisecond)).After(broken)
	})
	if _, err := c.Enqueue(ctx, smsJob{To: to, Text: "after"}); err != nil {
		t.Fatalf("enqueue after the job queue was replaced: %v", err)
	}
	waitFor(t, 10*time.Second, "a job after the job queue was replaced", func() bool {
		return len(smsTexts(to)["after"]) == 1
	})
	// The job at +inf lost its queue entry with the job queue moved aside;
	// its record is orphaned, and the invariant sweep queues it again.
	waitFor(t, 10*time.Second, "the orphaned job at +inf to be queued again by the sweep and run", func() bool {
		return len(smsTexts(to)["inf"]) == 1
	})
	time.Sleep(3 * time.Second)
	stopAll := time.Now()
	waitFor(t, 10*time.Second, "every job delivery to be acked", func() bool {
		return rdb.HLen(ctx, k.Owners()).Val() == 0 && rdb.ZCard(ctx, k.Leases()).Val() == 0
	})

	// The healthy task fired every second, once.
	all := fires.snapshot()
	if d := duplicates(all); len(d) > 0 {
		t.Errorf("instants fired more than once: %v", d)
	}
	var healthy []seenFire
	for _, f := range all {
		if f.task == tick {
			healthy = append(healthy, f)
		}
	}
	if len(healthy) < 4 || len(healthy) < int(stopAll.Sub(broken)/time.Second) {
		t.Errorf("the healthy task fired %d times in %v", len(healthy), stopAll.Sub(broken.Add(-1500*time.Millisecond)))
	}
	if hget(t, rdb, tick, "expression") != "every:1s" || hget(t, rdb, probe, "expression") != "every:1h" {
		t.Error("a healthy task hash was lost")
	}
	// Fires of the probe type: only the tasks whose data allows it.
	ran := map[string]int{}
	for _, f := range probes.snapshot() {
		ran[f.task]++
	}
	for _, m := range []string{"as-string", "bad-next", "bad-status", "bad-type", "bad-expr", "bad-tz", "bad-counters"} {
		if ran[m] > 0 {
			t.Errorf("task %s with bad data ran %d times", m, ran[m])
		}
	}
	if absurd, _ := rdb.ZRangeByScore(ctx, k.Queue(), &redis.ZRangeBy{Min: "(9007199254740992", Max: "+inf"}).Result(); len(absurd) > 0 {
		t.Errorf("queue entries still at absurd scores: %v", absurd)
	}
	for _, m := range []string{"bad-counters-2", "foreign-lock", "list-lock", "bad-history", "inf-score", "neg-inf-score", "huge-score"} {
		if ran[m] == 0 {
			t.Errorf("task %s never ran (runs %v)", m, ran)
		}
	}
	texts := smsTexts(to)
	if len(texts["neg-inf"]) != 1 || len(texts["inf"]) != 1 || len(texts["after"]) != 1 {
		t.Errorf("jobs ran %v; want neg-inf, inf (queued again by the sweep) and after once", texts)
	}
	dead, err := c.inspect().DeadJobs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	deadIDs := map[string]string{}
	for _, d := range dead {
		deadIDs[d.ID] = d.Error
	}
	for _, id := range []string{"garbage-json", "invalid-utf8", "no-task", "bad-payload"} {
		if deadIDs[id] == "" {
			t.Errorf("corrupt job %s not in the dead letters with its error (dead: %v)", id, deadIDs)
		}
	}
	if ok, _ := rdb.HExists(ctx, k.JobData(), "unknown-type").Result(); !ok {
		t.Error("the job of an unknown type was dropped")
	}
	if l := logs.lines("no longer ours"); len(l) > 0 {
		t.Errorf("acks failed half way (a garbage job counter): %s", strings.Join(l, "\n"))
	}
	if st, err := c.inspect().Stats(ctx, "sms"); err != nil || st.Runs < 2 {
		t.Errorf("sms stats %+v, %v; want the garbage counters reset and counting", st, err)
	}
	if oc := historyOutcomes(t, s1, "bad-params"); oc[OutcomeFailed] == 0 {
		t.Errorf("bad params: history %v, want failed runs", oc)
	}
	if recs, _ := s1.History(ctx, "bad-lease", 0); len(recs) != 1 || recs[0].Outcome != OutcomeAbandoned {
		t.Errorf("run with an unreadable lease: history %+v, want one abandoned record", recs)
	}

	for _, want := range [][]string{
		{"bad task data; skipped", "as-string"},
		{"bad task data; skipped", "bad-next"},
		{"unknown status", "bad-status"},
		{"task type not registered", "bad-type"},
		{"bad schedule", "bad-expr"},
		{"bad schedule", "bad-tz"},
		{"run failed", "bad-params"},
		{"lock without expiry", "foreign-lock"},
		{"lock without expiry", "list-lock"},
		{"history", "bad-history"},
		{"queue entry without task hash removed", "no-hash"},
		{"lease", "bad-lease"},
		{"bad job envelope", "garbage-json"},
		{"bad job envelope", "invalid-utf8"},
		{"bad job envelope", "no-task"},
		{"job type not registered", "os/exec.Cmd"},
		{"quarantine", k.Meta()},
		{"quarantine", k.Master()},
		{"quarantine", k.Queue()},
		{"quarantine", k.Jobs()},
	} {
		logs.expectLog(t, want...)
	}
	// Quarantined values are kept for the operator.
	for _, key := range []string{k.Meta(), k.Master(), k.Queue(), k.Jobs()} {
		if keys, _ := rdb.Keys(ctx, k.Prefix()+"quarantine:"+strings.TrimPrefix(key, k.Prefix())+":*").Result(); len(keys) == 0 {
			t.Errorf("the foreign value of %s was not kept", key)
		}
	}
	if v, _ := rdb.Get(ctx, k.Stats()+"x").Result(); v != "unrelated key" {
		t.Error("a key outside the layout was touched")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAbsurdQueueScoreIsRepaired checks maintenance's repair of queue
// scores that no scheduler writes (+inf, 1e300, NaN is refused by Redis):
// they sort last, so the task would never come due; requeue puts the
// entry back at the task's next_run, and a task missing from the queue back
// at its next instant. Requeue reads scores with ZMSCORE, whose reply
// differs between RESP2 (strings) and RESP3 (doubles): both are checked.
func TestAbsurdQueueScoreIsRepaired(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	k := newKeys("crontab")
	name := t.Name()
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", New: probeNew(0)})
	for _, proto := range []int{2, 3} {
		opts := srv.Options()
		opts.Protocol = proto
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		logs, logger := newLogCapture()
		s, err := NewScheduler(rdb, reg, WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		must(t, s.clock.Sync(ctx, 3))
		must(t, s.maint.register(ctx))
		next := hget(t, rdb, name, "next_run")
		for _, score := range []float64{math.Inf(1), 1e300, -5} {
			must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: score, Member: name}).Err())
			must(t, s.maint.requeue(ctx))
			if got, _ := rdb.ZScore(ctx, k.Queue(), name).Result(); strconv.FormatFloat(got, 'f', -1, 64) != next {
				t.Errorf("RESP%d: score %v repaired to %v, want next_run %s", proto, score, got, next)
			}
		}
		logs.expectLog(t, "absurd queue score replaced by the task's next_run")
		must(t, rdb.ZRem(ctx, k.Queue(), name).Err())
		must(t, s.maint.requeue(ctx))
		if _, err := rdb.ZScore(ctx, k.Queue(), name).Result(); err != nil {
			t.Errorf("RESP%d: task missing from the queue not requeued: %v", proto, err)
		}
	}
}

// TestForeignSingletonIsQuarantined covers, one by one, each key of the
// layout that doc.go says is moved aside when it holds the wrong type: a
// scheduler started on a namespace where that key holds a foreign value
// logs it, keeps the value for the operator under {ns}:quarantine:<name>:<ms>,
// does not crash, and its task keeps firing and its jobs keep running.
func TestForeignSingletonIsQuarantined(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cases := []struct {
		name string
		key  func(keys) string
		typ  string // the type the layout wants
	}{
		{"queue", keys.Queue, "zset"},
		{"lock:master", keys.Master, "string"},
		{"runs", keys.Runs, "hash"},
		{"running", keys.Running, "set"},
		{"tasks", keys.Tasks, "set"},
		{"unqueued", keys.Unqueued, "set"},
		{"classes", keys.Classes, "hash"},
		{"processes", keys.Processes, "zset"},
		{"declared", keys.Declared, "zset"},
		{"jobs", keys.Jobs, "zset"},
		{"jobs:data", keys.JobData, "hash"},
		{"jobs:attempt", keys.Attempts, "hash"},
		{"jobs:first", keys.FirstDue, "hash"},
		{"jobs:failed", keys.Failed, "hash"},
		{"jobs:lease", keys.Leases, "zset"},
		{"jobs:owner", keys.Owners, "hash"},
		{"dead", keys.Dead, "zset"},
		{"dead:data", keys.DeadData, "hash"},
		{"stats", keys.Stats, "hash"},
		{"stats:min", keys.StatsMinute, "hash"},
		{"alive", keys.Alive, "zset"},
		{"pulse", keys.Pulse, "hash"},
		{"sweep", keys.Sweep, "hash"},
		{"meta", keys.Meta, "hash"},
		{"unique", keys.UniqueIndex, "zset"},
	}
	// The table is the whole claim: every singleton key the scheduler checks.
	want := newKeys("x").SingletonTypes()
	if len(cases) != len(want) {
		t.Errorf("%d cases for %d singleton keys", len(cases), len(want))
	}
	for _, tc := range cases {
		if typ, ok := want[tc.key(newKeys("x"))]; !ok || typ != tc.typ {
			t.Errorf("case %s: the layout has type %q, the case %q", tc.name, typ, tc.typ)
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb := srv.Client(t)
			ns := fmt.Sprintf("q%d", i)
			k := newKeys(ns)
			key := tc.key(k)
			// The foreign value: a list where a string belongs, else a string.
			foreign := "string"
			if tc.typ == "string" {
				foreign = "list"
				must(t, rdb.RPush(ctx, key, "foreign", "value").Err())
			} else {
				must(t, rdb.Set(ctx, key, "foreign value", 0).Err())
			}
			var fires fireLog
			tick := t.Name()
			behave(t, tick, func(ctx context.Context) error { fires.add(ctx); return nil })
			to := unique(t)
			reg := testRegistry(t,
				TaskConfig{Name: tick, Expression: "every:1s", New: probeNew(0)},
				TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }})
			logs, logger := newLogCapture()
			runScheduler(t, rdb, reg, WithNamespace(ns), WithLogger(logger))

			logs.expectLog(t, "foreign value moved aside (quarantine)", key, "type="+foreign, "want="+tc.typ)
			moved, _ := rdb.Keys(ctx, k.Prefix()+"quarantine:"+strings.TrimPrefix(key, k.Prefix())+":*").Result()
			if len(moved) != 1 {
				t.Fatalf("quarantined copies of %s: %v, want one", key, moved)
			}
			if got, _ := rdb.Type(ctx, moved[0]).Result(); got != foreign {
				t.Errorf("%s holds a %s, want the foreign %s", moved[0], got, foreign)
			}
			if _, err := NewClient(rdb, reg, WithNamespace(ns)).Enqueue(ctx, smsJob{To: to, Text: "after"}); err != nil {
				t.Fatalf("enqueue: %v", err)
			}
			waitFor(t, 10*time.Second, "two fires and the job", func() bool {
				return len(fires.snapshot()) >= 2 && len(smsTexts(to)["after"]) == 1
			})
			if got, _ := rdb.Type(ctx, key).Result(); got != tc.typ && got != "none" {
				t.Errorf("%s holds a %s after the quarantine, want a %s or nothing", key, got, tc.typ)
			}
			if d := duplicates(fires.snapshot()); len(d) > 0 {
				t.Errorf("instants fired more than once: %v", d)
			}
		})
	}
}

// A foreign value in a flow-control key of a type this process runs (the
// running slots and rate window of a limited job type, the fire slots of
// a capped type) is moved aside like a singleton's, and the type's jobs
// run again under their limits.
func TestForeignLimitKeyIsQuarantined(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for i, c := range []struct {
		key  func(keys, string) string
		want string
	}{{keys.Slots, "hash"}, {keys.Rate, "zset"}, {keys.FireSlots, "zset"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb := srv.Client(t)
			ns := fmt.Sprintf("lim%d", i)
			k := newKeys(ns)
			reg := testRegistry(t, TaskConfig{Name: "sms", MaxRunning: 2, Rate: Rate{N: 100, Per: time.Second},
				New: func() TaskInterface { return new(smsJob) }})
			foreign := c.key(k, "sms")
			must(t, rdb.Set(ctx, foreign, "foreign value", 0).Err())
			logs, logger := newLogCapture()
			runScheduler(t, rdb, reg, WithNamespace(ns), WithLogger(logger))
			logs.expectLog(t, "foreign value moved aside (quarantine)", foreign, "type=string", "want="+c.want)
			to := unique(t)
			if _, err := NewClient(rdb, reg, WithNamespace(ns)).Enqueue(ctx, smsJob{To: to, Text: "after"}); err != nil {
				t.Fatalf("enqueue: %v", err)
			}
			waitFor(t, 10*time.Second, "the job", func() bool { return len(smsTexts(to)["after"]) == 1 })
		})
	}
}

// A RateKey window holding a foreign value (an operator's SET: its name
// comes with the jobs, so no check at start knows it) stops no claim: the
// other jobs run, the key is moved aside, and its jobs run then, once.
func TestForeignRateKeyWindowStopsNoClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	k := newKeys("crontab")
	reg := testRegistry(t, TaskConfig{Name: "sms", Rate: Rate{N: 100, Per: time.Second},
		New: func() TaskInterface { return new(smsJob) }})
	logs, logger := newLogCapture()
	runScheduler(t, rdb, reg, WithLogger(logger))
	bad := k.RateKey("sms", "bad")
	must(t, rdb.Set(ctx, bad, "an operator's", 0).Err())
	c := NewClient(rdb, reg)
	to := unique(t)
	for _, j := range []struct {
		text string
		opts []EnqueueOption
	}{
		{"bad", []EnqueueOption{RateKey("bad")}},
		{"plain", nil},
		{"bad", []EnqueueOption{RateKey("bad")}},
		{"good", []EnqueueOption{RateKey("good")}},
	} {
		if _, err := c.Enqueue(ctx, smsJob{To: to, Text: j.text}, j.opts...); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "every job", func() bool {
		got := smsTexts(to)
		return len(got["plain"]) == 1 && len(got["good"]) == 1 && len(got["bad"]) == 2
	})
	logs.expectLog(t, "foreign value moved aside (quarantine)", bad, "type=string", "want=zset")
	moved, _ := rdb.Keys(ctx, k.Prefix()+"quarantine:"+strings.TrimPrefix(bad, k.Prefix())+":*").Result()
	if len(moved) != 1 || rdb.Get(ctx, moved[0]).Val() != "an operator's" {
		t.Errorf("quarantined copies of %s: %v, want one with the operator's value", bad, moved)
	}
	time.Sleep(200 * time.Millisecond)
	if got := smsTexts(to); len(got["bad"]) != 2 {
		t.Errorf("the jobs of the foreign window ran %d times, want 2", len(got["bad"]))
	}
}
