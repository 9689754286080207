package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// During a rolling upgrade an older release's processes share the
// namespace: they list a run in progress in the running set with a lease
// key of its own (run:<id>), where this release writes a field of the runs
// hash. This release's master reaps both: an older release's run of a dead
// process is recorded abandoned once, its running entry, lease key and
// lock removed, as that release's own reap did.
func TestReapRecordsAnOlderReleasesRun(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	s, _ := sweepOnly(t, client)
	k := s.keys
	must(t, client.HSet(ctx, k.Task("old"), "name", "old", "runs", 0, "failures", 0).Err())
	// As the older release's claim script wrote them, for a process that
	// no longer beats: SADD running, SET run:<id> PX, the lock.
	must(t, client.SAdd(ctx, k.Running(), "old@1000").Err())
	must(t, client.Set(ctx, k.Run("old@1000"), leaseValue("gone", "old", 1000, 1000), time.Minute).Err())
	must(t, client.Set(ctx, k.Lock("old"), "gone|1000", time.Minute).Err())
	// And one of this release, of the same dead process.
	must(t, client.HSet(ctx, k.Task("new"), "name", "new", "runs", 0, "failures", 0).Err())
	must(t, client.HSet(ctx, k.Runs(), "new@2000", leaseValue("gone", "new", 2000, 2000)).Err())
	must(t, client.Set(ctx, k.Lock("new"), "gone|2000", time.Minute).Err())

	for range 2 { // the second finds nothing more to record
		if err := s.maint.reap(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for task, fire := range map[string]int64{"old": 1000, "new": 2000} {
		h := historyOf(t, client, task)
		if len(h) != 1 || h[0].Outcome != string(OutcomeAbandoned) || h[0].Fire != fire || h[0].Process != "gone" {
			t.Errorf("history of %s: %+v; want one abandoned record of gone's run of %d", task, h, fire)
		}
		if hget(t, client, task, "last_result") != "abandoned" || hget(t, client, task, "runs") != "1" {
			t.Errorf("task %s: last_result %q, runs %q", task, hget(t, client, task, "last_result"), hget(t, client, task, "runs"))
		}
	}
	if n := client.Exists(ctx, k.Running(), k.Run("old@1000"), k.Lock("old"), k.Runs(), k.Lock("new")).Val(); n != 0 {
		t.Errorf("%d of running, run:old@1000, the locks and runs left", n)
	}
	// A lease key that is there is not a repair: the running kind counts
	// only an entry whose lease key expired.
	if n := repairedCounts(t, client)[RepairRunning]; n != 0 {
		t.Errorf("running repairs %d, want 0", n)
	}
}

// A run of this release is a field of runs only: it is not in the running
// set nor has a run:<id> key, so the reap of an older release's master,
// which reads the running set and records a member without its lease key
// abandoned, does not see it at all.
func TestRunIsInvisibleToAnOlderRelease(t *testing.T) {
	t.Parallel()
	rdbc, _, _, runID := longRun(t) // waits for the run, found in runs
	ctx := context.Background()
	k := newKeys("crontab")
	// The older release's read: SMEMBERS running, then GET run:<id> each.
	if members := rdbc.SMembers(ctx, k.Running()).Val(); len(members) != 0 {
		t.Errorf("running holds %v, want nothing of this release's runs", members)
	}
	if keys := rdbc.Keys(ctx, k.Prefix()+"run:*").Val(); len(keys) != 0 {
		t.Errorf("lease keys %v written, want none", keys)
	}
	if _, err := rdbc.HGet(ctx, k.Runs(), runID).Result(); err != nil {
		t.Errorf("the run's lease in runs: %v", err)
	}
}
