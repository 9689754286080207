package runtime

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// sweepOnly returns a scheduler that is never run, whose sweep a test calls
// directly, and the kinds its Repaired hook was told of.
func sweepOnly(t *testing.T, rdb redis.UniversalClient) (*Scheduler, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	told := map[string]int{}
	s, err := NewScheduler(rdb, NewRegistry(), WithProcessTTL(time.Second), WithProcessID("sweeper"), WithLogger(testLogger()),
		WithHooks(Hooks{Repaired: func(_ context.Context, kind string, n int) {
			mu.Lock()
			told[kind] += n
			mu.Unlock()
		}}))
	if err != nil {
		t.Fatal(err)
	}
	return s, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range told {
			out[k] = v
		}
		return out
	}
}

// sweepPass runs master ticks of s's sweep until a pass ends and returns
// how many ticks it took.
func sweepPass(t *testing.T, s *Scheduler) int {
	t.Helper()
	s.sweeper = sweeper{}
	for ticks := 1; ticks < 1000; ticks++ {
		if err := s.sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !s.sweeper.active {
			return ticks
		}
	}
	t.Fatal("the sweep pass did not end in 1000 ticks")
	return 0
}

// repairedCounts reads Overview.Repaired.
func repairedCounts(t *testing.T, rdb redis.UniversalClient) map[string]int64 {
	t.Helper()
	ov, err := NewClient(rdb, nil, WithProcessTTL(time.Second)).Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ov.Repaired
}

// history reads a task's history records in the default namespace.
func historyOf(t *testing.T, rdb redis.UniversalClient, task string) []wireRecord {
	t.Helper()
	raw, err := rdb.LRange(context.Background(), newKeys("crontab").history(task), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]wireRecord, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatalf("history of %s: %v", task, err)
		}
	}
	return out
}

// TestSweepRepairsEachOrphanKind writes every kind of orphan into Redis by
// hand, beside the legitimate states that look like them (a pending, an
// in-flight and a dead job; a running run with its lock and lease; the lock
// and the lease of a live process that have no running entry), and checks
// that one pass repairs exactly the orphans, counts them, tells the hook,
// and that a second pass finds nothing more.
func TestSweepRepairsEachOrphanKind(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, told := sweepOnly(t, rdb)
	k := s.keys
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	nowMS := ms(now)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	env := func(id string) string { return `{"task":"sms","payload":{"to":"` + id + `"},"enqueued":1}` }
	// A live process ("alive") and a dead one ("gone", no heartbeat).
	must(rdb.ZAdd(ctx, k.processes(), redisZ(nowMS+60e3, "alive")).Err())
	for _, task := range []string{"t-pair", "t-lock", "t-junk", "t-run", "t-retaken", "t-live-lease"} {
		must(rdb.HSet(ctx, k.task(task), "name", task, "runs", 0, "failures", 0, "next_run", nowMS+3600e3).Err())
		must(rdb.SAdd(ctx, k.tasks(), task).Err())
		must(rdb.ZAdd(ctx, k.queue(), redisZ(nowMS+3600e3, task)).Err())
	}
	ttl := time.Minute
	// Orphans.
	must(rdb.HSet(ctx, k.jobData(), "lost", env("lost"), "stale-owner", env("stale-owner")).Err())
	must(rdb.HSet(ctx, k.owners(), "stale-owner", "gone#1").Err())
	must(rdb.ZAdd(ctx, k.leases(), redisZ(nowMS+60e3, "gone#2")).Err())
	must(rdb.Set(ctx, k.run("t-pair@1000"), leaseValue("gone", "t-pair", 1000, 1000), ttl).Err())
	must(rdb.Set(ctx, k.lock("t-pair"), "gone|1000", ttl).Err())
	must(rdb.Set(ctx, k.lock("t-lock"), "gone|2000", ttl).Err())
	must(rdb.Set(ctx, k.lock("t-junk"), "not a scheduler's", ttl).Err())
	must(rdb.ZAdd(ctx, k.queue(), redisZ(nowMS+3600e3, "ghost")).Err())
	must(rdb.SAdd(ctx, k.running(), "junk").Err())
	// Legitimate states.
	must(rdb.HSet(ctx, k.jobData(), "pending", env("pending"), "inflight", env("inflight")).Err())
	must(rdb.ZAdd(ctx, k.jobs(), redisZ(nowMS+3600e3, "pending")).Err())
	must(rdb.HSet(ctx, k.owners(), "inflight", "alive#1").Err())
	must(rdb.ZAdd(ctx, k.leases(), redisZ(nowMS+60e3, "alive#1")).Err())
	must(rdb.ZAdd(ctx, k.dead(), redisZ(nowMS, "dead")).Err())
	must(rdb.HSet(ctx, k.deadData(), "dead", env("dead")).Err())
	must(rdb.SAdd(ctx, k.running(), "t-run@3000").Err())
	must(rdb.Set(ctx, k.run("t-run@3000"), leaseValue("gone", "t-run", 3000, 3000), ttl).Err()) // reap's: it has its entry
	must(rdb.Set(ctx, k.lock("t-run"), "gone|3000", ttl).Err())
	must(rdb.Set(ctx, k.lock("t-retaken"), "alive|4000", ttl).Err()) // taken again after a data loss
	must(rdb.Set(ctx, k.run("t-live-lease@5000"), leaseValue("alive", "t-live-lease", 5000, 5000), ttl).Err())

	sweepPass(t, s)

	want := map[string]int64{RepairJob: 2, RepairClaim: 1, RepairLease: 1, RepairRunning: 1, RepairLock: 2, RepairQueue: 1}
	got := repairedCounts(t, rdb)
	for kind, n := range want {
		if got[kind] != n {
			t.Errorf("Overview.Repaired[%s] = %d, want %d (all: %v)", kind, got[kind], n, got)
		}
		if h := told()[kind]; int64(h) != n {
			t.Errorf("Repaired hook told %d of %s, want %d", h, kind, n)
		}
	}
	// The orphan jobs are due now; the stale owner is gone.
	for _, id := range []string{"lost", "stale-owner"} {
		if due, err := rdb.ZScore(ctx, k.jobs(), id).Result(); err != nil || int64(due) < nowMS || int64(due) > nowMS+10e3 {
			t.Errorf("job %s: due %v, %v; want queued due now", id, due, err)
		}
	}
	if rdb.HExists(ctx, k.owners(), "stale-owner").Val() {
		t.Error("the stale owner of a re-queued job is still there")
	}
	if rdb.ZScore(ctx, k.leases(), "gone#2").Err() != redis.Nil {
		t.Error("the claim lease that owns no job is still there")
	}
	// The lost run of the lease and its lock: one record, once.
	for _, key := range []string{k.run("t-pair@1000"), k.lock("t-pair"), k.lock("t-lock"), k.lock("t-junk")} {
		if rdb.Exists(ctx, key).Val() != 0 {
			t.Errorf("%s is still there", key)
		}
	}
	for task, fire := range map[string]int64{"t-pair": 1000, "t-lock": 2000} {
		h := historyOf(t, rdb, task)
		if len(h) != 1 || h[0].Outcome != string(OutcomeAbandoned) || h[0].Fire != fire || h[0].Process != "gone" ||
			!strings.Contains(h[0].Error, "invariant sweep") {
			t.Errorf("history of %s: %+v; want one abandoned record of fire %d naming the sweep", task, h, fire)
		}
		if hget(t, rdb, task, "last_result") != "abandoned" || hget(t, rdb, task, "failures") != "1" || hget(t, rdb, task, "runs") != "1" {
			t.Errorf("task %s: last_result %q runs %q failures %q; want abandoned, 1, 1", task,
				hget(t, rdb, task, "last_result"), hget(t, rdb, task, "runs"), hget(t, rdb, task, "failures"))
		}
	}
	if h := historyOf(t, rdb, "t-junk"); len(h) != 0 {
		t.Errorf("a lock that named no run left history %+v", h)
	}
	if rdb.ZScore(ctx, k.queue(), "ghost").Err() != redis.Nil {
		t.Error("the queue member without a task hash is still queued")
	}
	if rdb.SIsMember(ctx, k.running(), "junk").Val() {
		t.Error("the running entry that is no run id is still there")
	}
	// Nothing legitimate was touched.
	if due := rdb.ZScore(ctx, k.jobs(), "pending").Val(); int64(due) != nowMS+3600e3 {
		t.Errorf("pending job moved to %v", due)
	}
	if rdb.ZScore(ctx, k.jobs(), "inflight").Err() != redis.Nil || rdb.HGet(ctx, k.owners(), "inflight").Val() != "alive#1" ||
		rdb.ZScore(ctx, k.leases(), "alive#1").Err() != nil {
		t.Error("the in-flight job, its owner or its claim's lease was touched")
	}
	if rdb.ZScore(ctx, k.jobs(), "dead").Err() != redis.Nil || rdb.ZScore(ctx, k.dead(), "dead").Err() != nil {
		t.Error("the dead job was touched")
	}
	for _, key := range []string{k.run("t-run@3000"), k.lock("t-run"), k.lock("t-retaken"), k.run("t-live-lease@5000")} {
		if rdb.Exists(ctx, key).Val() != 1 {
			t.Errorf("%s was removed", key)
		}
	}
	if !rdb.SIsMember(ctx, k.running(), "t-run@3000").Val() {
		t.Error("the running entry with its lease was removed")
	}
	for _, task := range []string{"t-run", "t-retaken", "t-live-lease"} {
		if h := historyOf(t, rdb, task); len(h) != 0 {
			t.Errorf("history of %s: %+v; want none", task, h)
		}
		if rdb.ZScore(ctx, k.queue(), task).Err() != nil {
			t.Errorf("task %s left the queue", task)
		}
	}

	// A second pass finds nothing more.
	sweepPass(t, s)
	if again := repairedCounts(t, rdb); !maps.Equal(again, got) {
		t.Errorf("second pass: %v, want %v", again, got)
	}
}

// TestSweepCountsRunningWithoutLeaseOnce: a running entry whose lease is
// gone is the reap duty's (it records the run abandoned); it counts it as a
// repair of kind running, and the sweep neither records it again nor
// counts it twice.
func TestSweepCountsRunningWithoutLeaseOnce(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, told := sweepOnly(t, rdb)
	k := s.keys
	if err := rdb.HSet(ctx, k.task("t"), "name", "t", "runs", 0, "failures", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.SAdd(ctx, k.tasks(), "t")
	rdb.SAdd(ctx, k.running(), "t@1000")
	rdb.Set(ctx, k.lock("t"), "gone|1000", time.Minute)
	sweepPass(t, s) // before reap: the entry is reap's, and the lock is its run's
	if h := historyOf(t, rdb, "t"); len(h) != 0 {
		t.Fatalf("the sweep recorded a run that reap records: %+v", h)
	}
	if err := s.reap(ctx); err != nil {
		t.Fatal(err)
	}
	sweepPass(t, s)
	h := historyOf(t, rdb, "t")
	if len(h) != 1 || h[0].Outcome != string(OutcomeAbandoned) {
		t.Errorf("history: %+v; want one abandoned record", h)
	}
	if n := repairedCounts(t, rdb)[RepairRunning]; n != 1 || told()[RepairRunning] != 1 {
		t.Errorf("running repairs: counted %d, hook told %d; want 1", n, told()[RepairRunning])
	}
	if rdb.Exists(ctx, k.lock("t")).Val() != 0 || rdb.SCard(ctx, k.running()).Val() != 0 {
		t.Error("reap left the lock or the running entry")
	}
}

// TestSweepIsBounded: 2,500 orphan job records are not repaired in one
// master tick (a tick makes at most sweepCallsPerTick scan calls of
// sweepCount), but all of them are over the ticks of one pass.
func TestSweepIsBounded(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, _ := sweepOnly(t, rdb)
	const n = 2500
	args := make([]any, 0, 2*n)
	for i := range n {
		id := "j" + strconv.Itoa(i)
		args = append(args, id, `{"task":"sms","payload":{},"enqueued":1}`)
	}
	if err := rdb.HSet(ctx, s.keys.jobData(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	first := repairedCounts(t, rdb)[RepairJob]
	if first == 0 || first >= n || first > 2*sweepCallsPerTick*sweepCount {
		t.Errorf("one tick repaired %d of %d jobs; want some, at most about %d", first, n, sweepCallsPerTick*sweepCount)
	}
	ticks := 1
	for s.sweeper.active {
		if err := s.sweep(ctx); err != nil {
			t.Fatal(err)
		}
		ticks++
	}
	if got := repairedCounts(t, rdb)[RepairJob]; got != n || rdb.ZCard(ctx, s.keys.jobs()).Val() != n {
		t.Errorf("after %d ticks: %d repaired, %d queued; want %d", ticks, got, rdb.ZCard(ctx, s.keys.jobs()).Val(), n)
	}
	t.Logf("%d orphan jobs: %d repaired in the first tick, all in %d ticks", n, first, ticks)
	// The next pass waits sweepEvery heartbeats.
	if err := s.sweep(ctx); err != nil || s.sweeper.active {
		t.Errorf("a pass started right after one ended (err %v)", err)
	}
}

// TestSweepRequeuedJobRunsAndInFlightStateIsKept runs a scheduler whose
// master sweeps while a long job and a long non-concurrent task run: the
// job whose queue entry was lost runs, and the running job and task keep
// their owner, lease and lock (a sweep forced beside them as well).
func TestSweepRequeuedJobRunsAndInFlightStateIsKept(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	release := make(chan struct{})
	var once sync.Once
	stopAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(stopAll)
	block := func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	behave(t, "sweep-long", block)
	reg := registry(t,
		TaskConfig{Name: "sweep-long", Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
		TaskConfig{Name: "sweep-slow-job", New: probeNew(1)})
	behave(t, "sweep-slow-job", block)
	c := NewClient(rdb, reg)
	k := newKeys("crontab")
	to := "sweep-lost-" + strconv.FormatInt(time.Now().UnixNano(), 10) // unique under -count
	lostID, err := c.Enqueue(ctx, smsJob{To: to, Text: "hi"}, In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZRem(ctx, k.jobs(), lostID).Err(); err != nil { // the queue entry is lost
		t.Fatal(err)
	}
	slowID, err := c.EnqueueRaw(ctx, "sweep-slow-job", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	runScheduler(t, rdb, reg)
	waitFor(t, 15*time.Second, "the job whose queue entry was lost to run", func() bool { return len(smsRuns(to)) == 1 })
	waitFor(t, 5*time.Second, "the long task and the slow job to run", func() bool {
		return rdb.Exists(ctx, k.lock("sweep-long")).Val() == 1 && rdb.HExists(ctx, k.owners(), slowID).Val()
	})
	lock := rdb.Get(ctx, k.lock("sweep-long")).Val()
	owner := rdb.HGet(ctx, k.owners(), slowID).Val()
	sweeper, _ := sweepOnly(t, rdb)
	sweepPass(t, sweeper)
	time.Sleep(2500 * time.Millisecond) // the master's own sweep comes by too (every 10 beats of 200ms)
	if got := rdb.Get(ctx, k.lock("sweep-long")).Val(); got != lock {
		t.Errorf("lock of the running task: %q, was %q", got, lock)
	}
	process, fire, _ := cutLast(lock, "|")
	if !rdb.SIsMember(ctx, k.running(), "sweep-long@"+fire).Val() || rdb.Exists(ctx, k.run("sweep-long@"+fire)).Val() != 1 {
		t.Errorf("the running task (process %s) lost its running entry or lease", process)
	}
	if got := rdb.HGet(ctx, k.owners(), slowID).Val(); got != owner || rdb.ZScore(ctx, k.leases(), owner).Err() != nil {
		t.Errorf("the running job's owner %q (was %q) or its claim's lease was touched", got, owner)
	}
	got := repairedCounts(t, rdb)
	for _, kind := range RepairKinds() {
		if want := int64(map[string]int{RepairJob: 1}[kind]); got[kind] != want {
			t.Errorf("Repaired[%s] = %d, want %d", kind, got[kind], want)
		}
	}
	stopAll()
}

// TestSweepOnCluster runs a pass over a Redis Cluster, where SCAN of the
// run leases must go to the node holding the namespace's slot.
func TestSweepOnCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.ClusterClient(t)
	ctx := context.Background()
	s, _ := sweepOnly(t, rdb)
	k := s.keys
	rdb.HSet(ctx, k.task("t"), "name", "t", "runs", 0, "failures", 0)
	rdb.SAdd(ctx, k.tasks(), "t")
	rdb.Set(ctx, k.run("t@1000"), leaseValue("gone", "t", 1000, 1000), time.Minute)
	rdb.Set(ctx, k.lock("t"), "gone|1000", time.Minute)
	rdb.HSet(ctx, k.jobData(), "lost", `{"task":"sms","payload":{},"enqueued":1}`)
	sweepPass(t, s)
	got := repairedCounts(t, rdb)
	if got[RepairLease] != 1 || got[RepairJob] != 1 || got[RepairLock] != 0 {
		t.Errorf("Repaired = %v; want lease 1, job 1, lock 0 (the lease repair takes the lock)", got)
	}
	if rdb.Exists(ctx, k.run("t@1000"), k.lock("t")).Val() != 0 || len(historyOf(t, rdb, "t")) != 1 {
		t.Error("the orphan lease or its lock is still there, or no history record")
	}
}
