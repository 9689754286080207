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

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// sweepOnly returns a scheduler that is never run, whose sweep a test calls
// directly, and the kinds its Repaired hook was told of.
func sweepOnly(t *testing.T, client redis.UniversalClient) (*Scheduler, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	told := map[string]int{}
	s, err := NewScheduler(client, NewRegistry(), WithProcessTTL(time.Second), WithProcessID("sweeper"), WithLogger(testLogger()),
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
	s.maint.sweeper = sweeper{}
	for ticks := 1; ticks < 1000; ticks++ {
		if err := s.maint.sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !s.maint.sweeper.active {
			return ticks
		}
	}
	t.Fatal("the sweep pass did not end in 1000 ticks")
	return 0
}

// repairedCounts reads Overview.Repaired.
func repairedCounts(t *testing.T, client redis.UniversalClient) map[string]int64 {
	t.Helper()
	ov, err := NewInspector(client, WithProcessTTL(time.Second)).Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ov.Repaired
}

// history reads a task's history records in the default namespace.
func historyOf(t *testing.T, client redis.UniversalClient, task string) []rdb.Record {
	t.Helper()
	raw, err := client.LRange(context.Background(), newKeys("crontab").History(task), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]rdb.Record, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatalf("history of %s: %v", task, err)
		}
	}
	return out
}

// TestSweepRepairsEachOrphanKind writes every kind of orphan into Redis by
// hand, beside the legitimate states that look like them (a pending, an
// in-flight and a dead job; a running run with its lock and lease, of an
// older release and of this one; the lock and the older release's lease
// of a live process that have no running entry), and checks
// that one pass repairs exactly the orphans, counts them, tells the hook,
// and that a second pass finds nothing more.
func TestSweepRepairsEachOrphanKind(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, told := sweepOnly(t, client)
	k := s.keys
	now, err := client.Time(ctx).Result()
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
	must(client.ZAdd(ctx, k.Processes(), redisZ(nowMS+60e3, "alive")).Err())
	for _, task := range []string{"t-pair", "t-lock", "t-junk", "t-run", "t-retaken", "t-live-lease", "t-field"} {
		must(client.HSet(ctx, k.Task(task), "name", task, "runs", 0, "failures", 0, "next_run", nowMS+3600e3).Err())
		must(client.SAdd(ctx, k.Tasks(), task).Err())
		must(client.ZAdd(ctx, k.Queue(), redisZ(nowMS+3600e3, task)).Err())
	}
	ttl := time.Minute
	// Orphans.
	must(client.HSet(ctx, k.JobData(), "lost", env("lost"), "stale-owner", env("stale-owner")).Err())
	must(client.HSet(ctx, k.Owners(), "stale-owner", rdb.OwnerValue("gone#1", 1234)).Err())
	must(client.HSet(ctx, k.FirstDue(), "gone-job", 77).Err()) // its job no longer exists
	must(client.ZAdd(ctx, k.Leases(), redisZ(nowMS+60e3, "gone#2")).Err())
	// (An older release's lease key without its running entry: this
	// release's runs are fields of runs, each its lease and entry at once.)
	must(client.Set(ctx, k.Run("t-pair@1000"), leaseValue("gone", "t-pair", 1000, 1000), ttl).Err())
	must(client.Set(ctx, k.Lock("t-pair"), "gone|1000", ttl).Err())
	must(client.Set(ctx, k.Lock("t-lock"), "gone|2000", ttl).Err())
	must(client.Set(ctx, k.Lock("t-junk"), "not a scheduler's", ttl).Err())
	must(client.ZAdd(ctx, k.Queue(), redisZ(nowMS+3600e3, "ghost")).Err())
	must(client.SAdd(ctx, k.Running(), "junk").Err()) // an older release's running set
	// A run-time task whose queue entry was lost: no index lists it.
	must(client.HSet(ctx, k.Task("t-lost-entry"), "type", "sms", "expression", "every:1h", "next_run", nowMS+3600e3).Err())
	// Legitimate states.
	must(client.HSet(ctx, k.Task("t-disabled"), "type", "sms", "expression", "every:1h", "next_run", 0, "status", "disabled").Err())
	must(client.SAdd(ctx, k.Unqueued(), "t-disabled").Err())
	must(client.HSet(ctx, k.Task("t-static"), "source", "static", "expression", "every:1h", "next_run", nowMS+3600e3).Err())
	must(client.SAdd(ctx, k.Tasks(), "t-static").Err())
	must(client.ZAdd(ctx, k.Queue(), redisZ(nowMS+3600e3, "t-static")).Err())
	must(client.Set(ctx, k.Task("not-a-hash"), "a foreign string", 0).Err())
	must(client.HSet(ctx, k.JobData(), "pending", env("pending"), "inflight", env("inflight")).Err())
	must(client.ZAdd(ctx, k.Jobs(), redisZ(nowMS+3600e3, "pending")).Err())
	must(client.HSet(ctx, k.Owners(), "inflight", "alive#1").Err())
	must(client.HSet(ctx, k.FirstDue(), "pending", 55).Err()) // a pending job put back before
	must(client.ZAdd(ctx, k.Leases(), redisZ(nowMS+60e3, "alive#1")).Err())
	must(client.ZAdd(ctx, k.Dead(), redisZ(nowMS, "dead")).Err())
	must(client.HSet(ctx, k.DeadData(), "dead", env("dead")).Err())
	must(client.SAdd(ctx, k.Running(), "t-run@3000").Err())
	must(client.Set(ctx, k.Run("t-run@3000"), leaseValue("gone", "t-run", 3000, 3000), ttl).Err()) // reap's: it has its entry
	// This release's run of a gone process, holding its lock: reap's too.
	must(client.HSet(ctx, k.Runs(), "t-field@6000", leaseValue("gone", "t-field", 6000, 6000)).Err())
	must(client.Set(ctx, k.Lock("t-field"), "gone|6000", ttl).Err())
	must(client.Set(ctx, k.Lock("t-run"), "gone|3000", ttl).Err())
	must(client.Set(ctx, k.Lock("t-retaken"), "alive|4000", ttl).Err()) // taken again after a data loss
	must(client.Set(ctx, k.Run("t-live-lease@5000"), leaseValue("alive", "t-live-lease", 5000, 5000), ttl).Err())

	sweepPass(t, s)

	want := map[string]int64{RepairJob: 2, RepairClaim: 1, RepairLease: 1, RepairRunning: 1, RepairLock: 2, RepairQueue: 1, RepairDue: 1,
		RepairIndex: 1}
	got := repairedCounts(t, client)
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
		if due, err := client.ZScore(ctx, k.Jobs(), id).Result(); err != nil || int64(due) < nowMS || int64(due) > nowMS+10e3 {
			t.Errorf("job %s: due %v, %v; want queued due now", id, due, err)
		}
	}
	if client.HExists(ctx, k.Owners(), "stale-owner").Val() {
		t.Error("the stale owner of a re-queued job is still there")
	}
	// The stale owner's claimed due is kept as the job's first due; the
	// first due of a gone job is removed, a pending job's kept.
	if got := client.HGet(ctx, k.FirstDue(), "stale-owner").Val(); got != "1234" {
		t.Errorf("first due of the re-queued stale-owner job = %q, want its claimed due 1234", got)
	}
	if client.HExists(ctx, k.FirstDue(), "gone-job").Val() {
		t.Error("the first due of a job that no longer exists is still there")
	}
	if got := client.HGet(ctx, k.FirstDue(), "pending").Val(); got != "55" {
		t.Errorf("first due of the pending job = %q, want 55 untouched", got)
	}
	if client.ZScore(ctx, k.Leases(), "gone#2").Err() != redis.Nil {
		t.Error("the claim lease that owns no job is still there")
	}
	// The lost run of the lease and its lock: one record, once.
	for _, key := range []string{k.Run("t-pair@1000"), k.Lock("t-pair"), k.Lock("t-lock"), k.Lock("t-junk")} {
		if client.Exists(ctx, key).Val() != 0 {
			t.Errorf("%s is still there", key)
		}
	}
	for task, fire := range map[string]int64{"t-pair": 1000, "t-lock": 2000} {
		h := historyOf(t, client, task)
		if len(h) != 1 || h[0].Outcome != string(OutcomeAbandoned) || h[0].Fire != fire || h[0].Process != "gone" ||
			!strings.Contains(h[0].Error, "invariant sweep") {
			t.Errorf("history of %s: %+v; want one abandoned record of fire %d naming the sweep", task, h, fire)
		}
		if hget(t, client, task, "last_result") != "abandoned" || hget(t, client, task, "failures") != "1" || hget(t, client, task, "runs") != "1" {
			t.Errorf("task %s: last_result %q runs %q failures %q; want abandoned, 1, 1", task,
				hget(t, client, task, "last_result"), hget(t, client, task, "runs"), hget(t, client, task, "failures"))
		}
	}
	if h := historyOf(t, client, "t-junk"); len(h) != 0 {
		t.Errorf("a lock that named no run left history %+v", h)
	}
	if client.ZScore(ctx, k.Queue(), "ghost").Err() != redis.Nil {
		t.Error("the queue member without a task hash is still queued")
	}
	if client.SIsMember(ctx, k.Running(), "junk").Val() {
		t.Error("the running entry that is no run id is still there")
	}
	// The task in no index is in the unqueued set (the requeue queues it);
	// the run-time tasks an older release listed in the tasks set (t-pair
	// and the others: no source) left it, being queued; the declared task
	// stayed.
	if !client.SIsMember(ctx, k.Unqueued(), "t-lost-entry").Val() {
		t.Error("the task in no index was not put in the unqueued set")
	}
	if members := client.SMembers(ctx, k.Tasks()).Val(); len(members) != 1 || members[0] != "t-static" {
		t.Errorf("tasks set %v, want only the declared t-static", members)
	}
	if un := client.SMembers(ctx, k.Unqueued()).Val(); len(un) != 2 {
		t.Errorf("unqueued set %v, want t-lost-entry and t-disabled (not the foreign string)", un)
	}
	// Nothing legitimate was touched.
	if due := client.ZScore(ctx, k.Jobs(), "pending").Val(); int64(due) != nowMS+3600e3 {
		t.Errorf("pending job moved to %v", due)
	}
	if client.ZScore(ctx, k.Jobs(), "inflight").Err() != redis.Nil || client.HGet(ctx, k.Owners(), "inflight").Val() != "alive#1" ||
		client.ZScore(ctx, k.Leases(), "alive#1").Err() != nil {
		t.Error("the in-flight job, its owner or its claim's lease was touched")
	}
	if client.ZScore(ctx, k.Jobs(), "dead").Err() != redis.Nil || client.ZScore(ctx, k.Dead(), "dead").Err() != nil {
		t.Error("the dead job was touched")
	}
	for _, key := range []string{k.Run("t-run@3000"), k.Lock("t-run"), k.Lock("t-retaken"), k.Run("t-live-lease@5000"), k.Lock("t-field")} {
		if client.Exists(ctx, key).Val() != 1 {
			t.Errorf("%s was removed", key)
		}
	}
	if !client.SIsMember(ctx, k.Running(), "t-run@3000").Val() {
		t.Error("the running entry with its lease was removed")
	}
	if !client.HExists(ctx, k.Runs(), "t-field@6000").Val() {
		t.Error("the run in runs was removed")
	}
	for _, task := range []string{"t-run", "t-retaken", "t-live-lease", "t-field"} {
		if h := historyOf(t, client, task); len(h) != 0 {
			t.Errorf("history of %s: %+v; want none", task, h)
		}
		if client.ZScore(ctx, k.Queue(), task).Err() != nil {
			t.Errorf("task %s left the queue", task)
		}
	}

	// A second pass finds nothing more.
	sweepPass(t, s)
	if again := repairedCounts(t, client); !maps.Equal(again, got) {
		t.Errorf("second pass: %v, want %v", again, got)
	}
}

// TestSweepCountsRunningWithoutLeaseOnce: an older release's running entry
// whose lease key is gone is the reap duty's (it records the run abandoned); it counts it as a
// repair of kind running, and the sweep neither records it again nor
// counts it twice.
func TestSweepCountsRunningWithoutLeaseOnce(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, told := sweepOnly(t, client)
	k := s.keys
	if err := client.HSet(ctx, k.Task("t"), "name", "t", "runs", 0, "failures", 0).Err(); err != nil {
		t.Fatal(err)
	}
	client.SAdd(ctx, k.Tasks(), "t")
	client.SAdd(ctx, k.Running(), "t@1000")
	client.Set(ctx, k.Lock("t"), "gone|1000", time.Minute)
	sweepPass(t, s) // before reap: the entry is reap's, and the lock is its run's
	if h := historyOf(t, client, "t"); len(h) != 0 {
		t.Fatalf("the sweep recorded a run that reap records: %+v", h)
	}
	if err := s.maint.reap(ctx); err != nil {
		t.Fatal(err)
	}
	sweepPass(t, s)
	h := historyOf(t, client, "t")
	if len(h) != 1 || h[0].Outcome != string(OutcomeAbandoned) {
		t.Errorf("history: %+v; want one abandoned record", h)
	}
	if n := repairedCounts(t, client)[RepairRunning]; n != 1 || told()[RepairRunning] != 1 {
		t.Errorf("running repairs: counted %d, hook told %d; want 1", n, told()[RepairRunning])
	}
	if client.Exists(ctx, k.Lock("t")).Val() != 0 || client.SCard(ctx, k.Running()).Val() != 0 {
		t.Error("reap left the lock or the running entry")
	}
}

// TestSweepIsBounded: 2,500 orphan job records are not repaired in one
// master tick (a tick makes at most sweepCallsPerTick scan calls of
// sweepCount), but all of them are over the ticks of one pass.
func TestSweepIsBounded(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, _ := sweepOnly(t, client)
	const n = 2500
	args := make([]any, 0, 2*n)
	for i := range n {
		id := "j" + strconv.Itoa(i)
		args = append(args, id, `{"task":"sms","payload":{},"enqueued":1}`)
	}
	if err := client.HSet(ctx, s.keys.JobData(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.maint.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	first := repairedCounts(t, client)[RepairJob]
	if first == 0 || first >= n || first > 2*sweepCallsPerTick*sweepCount {
		t.Errorf("one tick repaired %d of %d jobs; want some, at most about %d", first, n, sweepCallsPerTick*sweepCount)
	}
	ticks := 1
	for s.maint.sweeper.active {
		if err := s.maint.sweep(ctx); err != nil {
			t.Fatal(err)
		}
		ticks++
	}
	if got := repairedCounts(t, client)[RepairJob]; got != n || client.ZCard(ctx, s.keys.Jobs()).Val() != n {
		t.Errorf("after %d ticks: %d repaired, %d queued; want %d", ticks, got, client.ZCard(ctx, s.keys.Jobs()).Val(), n)
	}
	t.Logf("%d orphan jobs: %d repaired in the first tick, all in %d ticks", n, first, ticks)
	// The next pass waits sweepEvery heartbeats.
	if err := s.maint.sweep(ctx); err != nil || s.maint.sweeper.active {
		t.Errorf("a pass started right after one ended (err %v)", err)
	}
}

// TestSweepRequeuedJobRunsAndInFlightStateIsKept runs a scheduler whose
// master sweeps while a long job and a long non-concurrent task run: the
// job whose queue entry was lost runs, and the running job and task keep
// their owner, lease and lock (a sweep forced beside them as well).
func TestSweepRequeuedJobRunsAndInFlightStateIsKept(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
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
	reg := testRegistry(t,
		TaskConfig{Name: "sweep-long", Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
		TaskConfig{Name: "sweep-slow-job", New: probeNew(1)})
	behave(t, "sweep-slow-job", block)
	c := NewClient(client, reg)
	k := newKeys("crontab")
	to := "sweep-lost-" + strconv.FormatInt(time.Now().UnixNano(), 10) // unique under -count
	lostID, err := c.Enqueue(ctx, smsJob{To: to, Text: "hi"}, In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.ZRem(ctx, k.Jobs(), lostID).Err(); err != nil { // the queue entry is lost
		t.Fatal(err)
	}
	slowID, err := c.EnqueueRaw(ctx, "sweep-slow-job", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	runScheduler(t, client, reg)
	waitFor(t, 15*time.Second, "the job whose queue entry was lost to run", func() bool { return len(smsRuns(to)) == 1 })
	waitFor(t, 5*time.Second, "the long task and the slow job to run", func() bool {
		return client.Exists(ctx, k.Lock("sweep-long")).Val() == 1 && client.HExists(ctx, k.Owners(), slowID).Val()
	})
	lock := client.Get(ctx, k.Lock("sweep-long")).Val()
	owner := client.HGet(ctx, k.Owners(), slowID).Val()
	sweeper, _ := sweepOnly(t, client)
	sweepPass(t, sweeper)
	time.Sleep(2500 * time.Millisecond) // the master's own sweep comes by too (every 10 beats of 200ms)
	if got := client.Get(ctx, k.Lock("sweep-long")).Val(); got != lock {
		t.Errorf("lock of the running task: %q, was %q", got, lock)
	}
	process, fire, _ := rdb.ParseLockValue(lock)
	if id := rdb.RunID("sweep-long", fire); !client.HExists(ctx, k.Runs(), id).Val() {
		t.Errorf("the running task (process %s) lost its lease in runs", process)
	}
	claim, _ := rdb.ParseOwner(owner)
	if got := client.HGet(ctx, k.Owners(), slowID).Val(); got != owner || client.ZScore(ctx, k.Leases(), claim).Err() != nil {
		t.Errorf("the running job's owner %q (was %q) or its claim's lease was touched", got, owner)
	}
	got := repairedCounts(t, client)
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
	client := cl.ClusterClient(t)
	ctx := context.Background()
	s, _ := sweepOnly(t, client)
	k := s.keys
	client.HSet(ctx, k.Task("t"), "name", "t", "runs", 0, "failures", 0)
	client.SAdd(ctx, k.Tasks(), "t")
	client.Set(ctx, k.Run("t@1000"), leaseValue("gone", "t", 1000, 1000), time.Minute) // an older release's
	client.Set(ctx, k.Lock("t"), "gone|1000", time.Minute)
	client.HSet(ctx, k.JobData(), "lost", `{"task":"sms","payload":{},"enqueued":1}`)
	// A lock held for no run (repaired), and one held by a run in runs
	// (reap's, left alone).
	client.Set(ctx, k.Lock("v"), "gone|3000", time.Minute)
	client.HSet(ctx, k.Runs(), "w@4000", leaseValue("gone", "w", 4000, 4000))
	client.Set(ctx, k.Lock("w"), "gone|4000", time.Minute)
	sweepPass(t, s)
	got := repairedCounts(t, client)
	if got[RepairLease] != 1 || got[RepairJob] != 1 || got[RepairLock] != 1 {
		t.Errorf("Repaired = %v; want lease 1, job 1, lock 1 (v's: the lease repair takes t's lock, w's is its run's)", got)
	}
	if client.Exists(ctx, k.Lock("v")).Val() != 0 || client.Exists(ctx, k.Lock("w")).Val() != 1 {
		t.Error("the lock held for no run is still there, or the lock of the run in runs was taken")
	}
	if client.Exists(ctx, k.Run("t@1000"), k.Lock("t")).Val() != 0 || len(historyOf(t, client, "t")) != 1 {
		t.Error("the orphan lease or its lock is still there, or no history record")
	}
	// The index scripts run on the namespace's slot too: t, in no index
	// but the tasks set, was put in the unqueued set and counted; the
	// requeue's uncounted indexing works the same.
	if got[RepairIndex] != 1 || !client.SIsMember(ctx, k.Unqueued(), "t").Val() {
		t.Errorf("index repairs %d, t unqueued %v; want 1, true", got[RepairIndex], client.SIsMember(ctx, k.Unqueued(), "t").Val())
	}
	client.HSet(ctx, k.Task("u"), "type", "sms", "expression", "at:1", "next_run", 0)
	if added, err := s.maint.db.IndexUnqueued(ctx, []string{"u"}); err != nil || len(added) != 1 {
		t.Errorf("IndexUnqueued on Redis Cluster: %v, %v; want [u]", added, err)
	}
}
