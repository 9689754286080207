package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestClusterRunsEveryScript runs two schedulers and a client through a
// *redis.ClusterClient on a 3-master Redis Cluster and drives every Lua
// script of the engine: register, advance (fire, locked skip, disabled),
// renew, finish, master, release, requeue, prune, abandon, enqueue (one and
// many), claim, ack (ok, retry, dead), renew jobs, redeliver, cancel, retry
// dead, set task and remove task. A second namespace whose slot lives on
// another master runs beside it.
func TestClusterRunsEveryScript(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.ClusterClient(t)
	ctx := context.Background()
	k := newKeys("crontab")

	tick, slow, dyn := t.Name()+"/tick", t.Name()+"/slow", t.Name()+"/dyn"
	var fires fireLog
	spans := newSpanLog()
	behave(t, tick, func(ctx context.Context) error { fires.add(ctx); return nil })
	behave(t, dyn, func(ctx context.Context) error { fires.add(ctx); return nil })
	// Longer than a heartbeat (200ms), so its lock is renewed, and than the
	// interval, so fires find it locked.
	behave(t, slow, func(ctx context.Context) error { return spans.run(ctx, 1500*time.Millisecond) })
	reg := testRegistry(t,
		TaskConfig{Name: tick, Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: slow, Expression: "every:1s", Timeout: 10 * time.Second, New: probeNew(1)},
		TaskConfig{Name: "sms", Retries: 1, New: func() TaskInterface { return new(smsJob) }})
	to := unique(t)

	// Leftovers of a process that died: a run in progress and a job under
	// lease, both of a process that never beats. The master must reap the
	// run (abandon) and deliver the job again (redeliver).
	// One as this release writes it (a field of runs), one as an older
	// release did (a running entry and its lease key).
	rdb.HSet(ctx, k.Runs(), "ghost@2000", leaseValue("ghost-process", "ghost", 2000, 2000))
	ghostRun := "ghost@1000"
	rdb.SAdd(ctx, k.Running(), ghostRun)
	rdb.Set(ctx, k.Run(ghostRun), leaseValue("ghost-process", "ghost", 1000, 1000), time.Minute)
	env, _ := json.Marshal(envelope{Task: "sms", Payload: json.RawMessage(`{"to":"` + to + `","text":"redelivered"}`)})
	rdb.HSet(ctx, k.JobData(), "ghost-job", string(env))
	rdb.HSet(ctx, k.Owners(), "ghost-job", "ghost-process#1")
	rdb.ZAdd(ctx, k.Leases(), redis.Z{Score: 1000, Member: "ghost-process#1"})
	// A static task no process declares any more: pruned.
	rdb.HSet(ctx, k.Task("gone"), "type", "gone", "source", sourceStatic, "next_run", 0)
	rdb.SAdd(ctx, k.Tasks(), "gone")
	rdb.ZAdd(ctx, k.Declared(), redis.Z{Score: 1, Member: "gone"})

	s1, stop1 := runScheduler(t, rdb, reg)
	_, stop2 := runScheduler(t, rdb, reg)

	// A second namespace on another master runs beside the first.
	otherNS := otherShardNamespace(t, rdb, "crontab")
	other := t.Name() + "/other"
	behave(t, other, func(ctx context.Context) error { fires.add(ctx); return nil })
	_, stop3 := runScheduler(t, rdb, testRegistry(t, TaskConfig{Name: other, Expression: "every:1s", New: probeNew(2)}),
		WithNamespace(otherNS))

	c := NewClient(rdb, reg)
	if err := c.SetTask(ctx, TaskSpec{Key: dyn, Type: tick, Expression: "every:1s"}); err != nil {
		t.Fatalf("SetTask: %v", err)
	}
	if _, err := c.Enqueue(ctx, smsJob{To: to, Text: "one"}, In(300*time.Millisecond)); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	ids, err := c.EnqueueMany(ctx, []Job{
		{Value: smsJob{To: to, Text: "many"}},
		{Value: smsJob{To: to, Text: "fail twice"}},
		{Value: smsJob{To: to, Text: "cancelled"}, Options: []EnqueueOption{In(time.Hour)}},
	})
	if err != nil {
		t.Fatalf("EnqueueMany: %v", err)
	}
	if err := c.Cancel(ctx, ids[2]); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	waitFor(t, 15*time.Second, "the dead letter of the failing job", func() bool {
		dead, _ := c.inspect().DeadJobs(ctx, 0)
		return len(dead) == 1
	})
	if err := c.inspect().RetryDead(ctx, ids[1]); err != nil {
		t.Fatalf("RetryDead: %v", err)
	}

	// Disable the tick, then enable it again: it leaves the queue, and
	// maintenance (requeue) puts it back.
	rdb.HSet(ctx, k.Task(tick), "status", "disabled")
	waitFor(t, 5*time.Second, "the disabled task to leave the queue", func() bool {
		return rdb.ZScore(ctx, k.Queue(), tick).Err() == redis.Nil
	})
	rdb.HSet(ctx, k.Task(tick), "status", "active")
	reenabled := time.Now()
	waitFor(t, 5*time.Second, "the task enabled again to fire", func() bool {
		return !firstStartAfter(fires.snapshot(), reenabled).IsZero()
	})
	waitFor(t, 10*time.Second, "three runs of the slow task", func() bool { return len(spans.snapshot()) >= 3 })
	if err := c.RemoveTask(ctx, dyn); err != nil {
		t.Fatalf("RemoveTask: %v", err)
	}
	waitFor(t, 10*time.Second, "the ghost's runs to be abandoned and its job delivered again", func() bool {
		recs, _ := s1.History(ctx, "ghost", 0)
		return len(recs) == 2 && recs[0].Outcome == OutcomeAbandoned && recs[1].Outcome == OutcomeAbandoned &&
			len(smsTexts(to)["redelivered"]) == 1
	})
	waitFor(t, 10*time.Second, "the undeclared task to be pruned", func() bool {
		return rdb.Exists(ctx, k.Task("gone")).Val() == 0
	})
	stop1()
	stop2()
	stop3()

	all := fires.snapshot()
	if d := duplicates(all); len(d) > 0 {
		t.Errorf("instants fired more than once: %v", d)
	}
	count := map[string]int{}
	for _, f := range all {
		count[f.task]++
	}
	if count[tick] < 3 || count[dyn] < 1 || count[other] < 3 {
		t.Errorf("fires by task %v: want the tick, the run-time task and the other namespace's task to fire", count)
	}
	if o := spans.overlaps(); len(o) > 0 {
		t.Errorf("non-concurrent runs overlapped: %v", o)
	}
	if oc := historyOutcomes(t, s1, slow); oc[OutcomeSkipped] == 0 || oc[OutcomeOK] < 3 {
		t.Errorf("slow task history %v, want ok runs and skipped fires", oc)
	}
	texts := smsTexts(to)
	for text, want := range map[string]int{"one": 1, "many": 1, "fail twice": 4, "cancelled": 0, "redelivered": 1} {
		if got := len(texts[text]); got != want {
			t.Errorf("job %q ran %d times, want %d (runs %v)", text, got, want, texts)
		}
	}
	if st, err := c.inspect().Stats(ctx, "sms"); err != nil || st.Runs != 7 || st.Failures != 4 {
		t.Errorf("sms stats %+v, %v; want 7 runs, 4 failures", st, err)
	}
	if n := rdb.ZCard(ctx, k.Processes()).Val(); n != 0 {
		t.Errorf("%d processes still registered after every scheduler stopped", n)
	}
	if v := rdb.Get(ctx, k.Master()).Val(); v != "" {
		t.Errorf("master lock still held by %q after shutdown", v)
	}
}

// smsTexts returns the attempts of the sms jobs sent to to, by text.
func smsTexts(to string) map[string][]int {
	out := map[string][]int{}
	for _, r := range smsRuns(to) {
		out[r.job.Text] = append(out[r.job.Text], r.run.Attempt)
	}
	return out
}

// otherShardNamespace returns a namespace whose slot is served by a master
// other than ns's.
func otherShardNamespace(t testing.TB, rdb *redis.ClusterClient, ns string) string {
	t.Helper()
	ctx := context.Background()
	first, err := rdb.MasterForKey(ctx, newKeys(ns).Queue())
	if err != nil {
		t.Fatal(err)
	}
	for _, cand := range []string{"crontab-1", "crontab-2", "crontab-3", "crontab-4", "crontab-5", "crontab-6", "crontab-7", "crontab-8"} {
		m, err := rdb.MasterForKey(ctx, newKeys(cand).Queue())
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr != first.Options().Addr {
			return cand
		}
	}
	t.Fatal("no namespace found on another master")
	return ""
}

// TestClusterFailover kills the master that holds the namespace's slot on a
// cluster with one replica per master: the replica is promoted, firing
// resumes through the same ClusterClient, nothing fires twice, and jobs run.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 1)
	rdb := cl.ClusterClient(t)
	ctx := context.Background()
	fires, logs, reg := runFailoverPair(t, rdb)

	slot, err := rdb.ClusterKeySlot(ctx, "{crontab}").Result()
	if err != nil {
		t.Fatal(err)
	}
	master, err := rdb.MasterForKey(ctx, newKeys("crontab").Queue())
	if err != nil {
		t.Fatal(err)
	}
	var victim *redistest.Server
	for _, n := range cl.Nodes() {
		if n.Addr() == master.Options().Addr {
			victim = n
		}
	}
	if victim == nil {
		t.Fatalf("master %s of slot %d is not a node of the cluster", master.Options().Addr, slot)
	}
	c := NewClient(rdb, reg)
	to := unique(t)
	// A job due during the failover.
	if _, err := c.Enqueue(ctx, smsJob{To: to, Text: "during"}, In(time.Second)); err != nil {
		t.Fatal(err)
	}
	// Replication is asynchronous: a write acked just before a SIGKILL
	// may not have reached the replica (Redis loses it, not the
	// scheduler; CI saw it once). WAIT makes this test about the failover.
	if n, err := master.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n < 1 {
		t.Fatalf("WAIT for the replica: %d, %v", n, err)
	}
	victim.Kill()
	killed := time.Now()
	t.Logf("killed master %s of slot %d (CLUSTER KEYSLOT {crontab})", victim.Addr(), slot)

	waitFor(t, 30*time.Second, "a fire after the failover", func() bool {
		return !firstStartAfter(fires.snapshot(), killed.Add(500*time.Millisecond)).IsZero()
	})
	recovered := firstStartAfter(fires.snapshot(), killed.Add(500*time.Millisecond))
	if _, err := c.Enqueue(ctx, smsJob{To: to, Text: "after"}); err != nil {
		t.Fatalf("enqueue after the failover: %v", err)
	}
	waitFor(t, 15*time.Second, "both jobs", func() bool { return len(smsRuns(to)) >= 2 })
	time.Sleep(3 * time.Second)

	all := fires.snapshot()
	if d := duplicates(all); len(d) > 0 {
		t.Errorf("instants fired more than once across the failover: %v", d)
	}
	texts := smsTexts(to)
	if len(texts["during"]) != 1 || len(texts["after"]) != 1 {
		t.Errorf("jobs across the failover ran %v, want each once", texts)
	}
	newMaster, err := rdb.MasterForKey(ctx, newKeys("crontab").Queue())
	if err != nil || newMaster.Options().Addr == victim.Addr() {
		t.Errorf("slot %d still on the killed master (%v)", slot, err)
	}
	if len(logs.lines("claim failed; retrying")) == 0 && len(logs.lines("heartbeat failed")) == 0 {
		t.Errorf("the outage left no log line; the log:\n%s", tail(logs.String(), 40))
	}
	t.Logf("failover: first fire %v after the kill; %d instants missed; %d fires, 0 duplicates",
		recovered.Sub(killed).Round(time.Millisecond), missed(all), len(all))
}
