package rdb

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A claim that finds a task's lock held takes it over only when the
// holder's run lease expired while the pulse was steady for a whole lease
// TTL; it then records the holder's run abandoned, once.
func TestClaimTakesOverOnlyADeadHoldersLock(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	held := RunID("a", 1000)
	ttl := testLeases.TTL.Milliseconds()
	for _, tc := range []struct {
		name     string
		deadline int64 // the holder's run lease, from now (ms); 0: none
		last     int64 // the pulse, from now; 1: none
		since    int64
		takeover bool
	}{
		{"expired, steady", -100, 0, -60_000, true},
		{"expired by 1 ms, steady for exactly a TTL", -1, 0, -ttl, true},
		{"alive", 500, 0, -60_000, false},
		{"no run lease (an older version, or data lost)", 0, 0, -60_000, false},
		{"no pulse", -100, 1, 1, false},
		{"pulse older than the gap: Redis stalled, or every process did", -100, -testLeases.Gap.Milliseconds() - 1, -60_000, false},
		{"pulse steady for less than a TTL: just after a stall", -100, 0, -ttl + 50, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, c.FlushAll(ctx).Err())
			running(t, r)
			now := c.Time(ctx).Val().UnixMilli()
			if tc.deadline != 0 {
				must(t, c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: float64(now + tc.deadline), Member: held}).Err())
			} else {
				must(t, c.ZRem(ctx, r.k.Alive(), held).Err())
			}
			if tc.last != 1 {
				must(t, c.HSet(ctx, r.k.Pulse(), "last", now+tc.last, "since", now+tc.since).Err())
			}
			out, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{next("a")}), 1)
			if err != nil {
				t.Fatal(err)
			}
			hist := c.LRange(ctx, r.k.History("a"), 0, -1).Val()
			lock := c.Get(ctx, r.k.Lock("a")).Val()
			if !tc.takeover {
				if out[0].Outcome != FireLocked || lock != LockValue("p", 1000) || !c.HExists(ctx, r.k.Runs(), held).Val() {
					t.Fatalf("outcome %s, lock %q: want the fire skipped and the lock left to its holder", out[0].Outcome, lock)
				}
				return
			}
			if out[0].Outcome != FireTakeover || out[0].Holder != (Holder{Process: "p", FireMS: 1000}) {
				t.Fatalf("result %+v, want a takeover of p's run of 1000", out[0])
			}
			if lock != LockValue("q", 2000) {
				t.Errorf("lock %q, want q's", lock)
			}
			if ids := c.HKeys(ctx, r.k.Runs()).Val(); !slices.Equal(ids, []string{RunID("a", 2000)}) {
				t.Errorf("runs %v, want only the new run", ids)
			}
			if ids := c.ZRange(ctx, r.k.Alive(), 0, -1).Val(); !slices.Equal(ids, []string{RunID("a", 2000)}) {
				t.Errorf("alive %v, want only the new run's lease", ids)
			}
			if len(hist) != 1 || !strings.Contains(hist[0], `"outcome":"abandoned"`) || !strings.Contains(hist[0], `"process":"p"`) {
				t.Errorf("history %q, want one abandoned record of p's run", hist)
			}
			h := c.HMGet(ctx, r.k.Task("a"), "last_result", "runs", "failures", "next_run").Val()
			if h[0] != "abandoned" || h[1] != "1" || h[2] != "1" || h[3] != "3000" {
				t.Errorf("task hash last_result, runs, failures, next_run = %v", h)
			}
		})
	}
}

// A takeover records the holder's run abandoned only if the master's reap
// has not already: a run is recorded once.
func TestTakeoverAfterReapRecordsNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	heldByDeadRun(t, r)
	must(t, c.HDel(ctx, r.k.Runs(), RunID("a", 1000)).Err()) // recorded elsewhere, lock left behind
	out, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{next("a")}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Outcome != FireWon {
		t.Fatalf("outcome %s, want a plain fire", out[0].Outcome)
	}
	if n := c.LLen(ctx, r.k.History("a")).Val(); n != 0 {
		t.Errorf("%d history records, want none", n)
	}
}

// A claim takes over the lock of an older release's run (its running
// entry and lease key, no field of runs) whose run lease expired, and
// records it abandoned once: the SREM of its running entry decides, as it
// did in that release.
func TestTakeoverOfAnOlderReleasesRun(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	legacyRunning(t, r)
	deadRunLease(t, r)
	out, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{next("a")}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Outcome != FireTakeover || out[0].Holder != (Holder{Process: "p", FireMS: 1000}) {
		t.Fatalf("result %+v, want a takeover of p's run of 1000", out[0])
	}
	if n := c.SCard(ctx, r.k.Running()).Val(); n != 0 {
		t.Errorf("running has %d members, want the old run out", n)
	}
	if ids := c.HKeys(ctx, r.k.Runs()).Val(); !slices.Equal(ids, []string{RunID("a", 2000)}) {
		t.Errorf("runs %v, want only the new run", ids)
	}
	if n := c.LLen(ctx, r.k.History("a")).Val(); n != 1 {
		t.Errorf("%d history records, want the abandoned one", n)
	}
}

// RenewRunLeases moves the deadlines of the runs that still have a run
// lease, even past their deadline (a renewal landing after a Redis stall),
// reports the others, and keeps the pulse's since while pulses come at
// most the gap apart.
func TestRenewRunLeases(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	running(t, r)
	id := RunID("a", 1000)
	if d := c.ZScore(ctx, r.k.Alive(), id).Val(); d < float64(c.Time(ctx).Val().UnixMilli()) {
		t.Fatalf("the claim gave the run a lease until %v, in the past", d)
	}
	must(t, c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: 1, Member: id}).Err()) // long expired
	lost, err := r.RenewRunLeases(ctx, testLeases, []string{id, "gone@5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := c.Time(ctx).Val().UnixMilli()
	if !slices.Equal(lost, []string{"gone@5"}) {
		t.Errorf("lost %v, want [gone@5]", lost)
	}
	if c.ZScore(ctx, r.k.Alive(), "gone@5").Err() != redis.Nil {
		t.Error("a lost run got a lease back")
	}
	if d := int64(c.ZScore(ctx, r.k.Alive(), id).Val()); d < now+testLeases.TTL.Milliseconds()-100 {
		t.Errorf("deadline %d, want about now (%d) + TTL", d, now)
	}
	p := c.HMGet(ctx, r.k.Pulse(), "last", "since").Val()
	if p[0] != p[1] {
		t.Errorf("first pulse: last %v, since %v, want equal", p[0], p[1])
	}
	since, _ := p[1].(string)
	must(t, c.HSet(ctx, r.k.Pulse(), "since", 5).Err())
	if _, err := r.RenewRunLeases(ctx, testLeases, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.HGet(ctx, r.k.Pulse(), "since").Val(); got != "5" {
		t.Errorf("steady pulse moved since to %s", got)
	}
	must(t, c.HSet(ctx, r.k.Pulse(), "last", now-testLeases.Gap.Milliseconds()-10).Err())
	if _, err := r.RenewRunLeases(ctx, testLeases, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.HGet(ctx, r.k.Pulse(), "since").Val(); got == "5" || got < since {
		t.Errorf("since %s after a gap, want it reset to now", got)
	}
}

// A claim that finds the lock held by a run whose run lease runs out
// within a lease of the instant waits for it: it writes nothing and
// returns the deadline (FireDeferred). A lease that runs past that is a
// live holder: the fire is skipped and recorded, as ever.
func TestClaimDefersToAHoldersRunLease(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	ttl := testLeases.TTL.Milliseconds()
	for _, tc := range []struct {
		name     string
		deadline int64 // the holder's run lease, from the instant (ms)
		defer_   bool
	}{
		{"runs out within a lease of the instant", ttl - 100, true},
		{"runs out a lease after the instant", ttl, true},
		{"renewed past it", ttl + 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, c.FlushAll(ctx).Err())
			now := c.Time(ctx).Val().UnixMilli()
			fire := now - 10 // due
			held := RunID("a", fire-1000)
			must(t, c.HSet(ctx, r.k.Task("a"), "next_run", fire, "status", "active", "concurrent", "0").Err())
			must(t, c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: float64(fire), Member: "a"}).Err())
			must(t, c.Set(ctx, r.k.Lock("a"), LockValue("p", fire-1000), time.Minute).Err())
			must(t, c.HSet(ctx, r.k.Runs(), held, Lease{Process: "p", Task: "a", Fire: fire - 1000, Start: fire - 1000}.Encode()).Err())
			must(t, c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: float64(fire + tc.deadline), Member: held}).Err())
			must(t, c.HSet(ctx, r.k.Pulse(), "last", now, "since", now-60_000).Err())
			before := snapshot(t, c)
			cand := FireCandidate{Task: "a", FireMS: fire, NextMS: fire + 1000, RunID: RunID("a", fire),
				Lease: Lease{Process: "q", Task: "a", Fire: fire, Start: fire}.Encode()}
			out, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{cand}), 1)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.defer_ {
				if out[0].Outcome != FireLocked {
					t.Fatalf("outcome %+v, want the fire skipped (locked)", out[0])
				}
				return
			}
			if out[0].Outcome != FireDeferred || out[0].RetryMS != fire+tc.deadline {
				t.Fatalf("result %+v, want deferred to %d", out[0], fire+tc.deadline)
			}
			if got := snapshot(t, c); !maps.Equal(got, before) {
				t.Errorf("a deferred claim wrote: %s", diff(before, got))
			}
		})
	}
}

// RestoreRun writes again a lost run's lock, lease (its field of runs) and
// run lease, leaves a lock held again and a concurrent task's lock alone;
// DropRestored takes back what it wrote and nothing of another run's.
func TestRestoreRun(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	leases := RunLeases{TTL: 1500 * time.Millisecond, Gap: 750 * time.Millisecond}
	pttl := func(key string) time.Duration { return c.PTTL(ctx, key).Val() }
	for _, tc := range []struct {
		name      string
		setup     func()
		took      bool
		lockValue string // the lock after RestoreRun
	}{
		{"lost", func() {}, true, restored.LockValue},
		{"lock held again", func() { c.Set(ctx, r.k.Lock("a"), LockValue("q", 2000), time.Minute) }, false, LockValue("q", 2000)},
		{"concurrent task", func() { c.HSet(ctx, r.k.Task("a"), "concurrent", "1") }, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, c.FlushAll(ctx).Err())
			declared(t, r)
			tc.setup()
			now := c.Time(ctx).Val().UnixMilli()
			took, err := r.RestoreRun(ctx, restored, leases)
			must(t, err)
			if took != tc.took {
				t.Errorf("took the lock: %v, want %v", took, tc.took)
			}
			if v, _ := c.Get(ctx, r.k.Lock("a")).Result(); v != tc.lockValue {
				t.Errorf("lock %q, want %q", v, tc.lockValue)
			}
			if tc.took && (pttl(r.k.Lock("a")) <= 50*time.Second || pttl(r.k.Lock("a")) > time.Minute) {
				t.Errorf("lock PTTL %v, want the run's timeout (1m)", pttl(r.k.Lock("a")))
			}
			if v := c.HGet(ctx, r.k.Runs(), restored.RunID).Val(); v != restored.Lease {
				t.Errorf("lease in runs %q, want %q", v, restored.Lease)
			}
			if dl, err := c.ZScore(ctx, r.k.Alive(), restored.RunID).Result(); err != nil || int64(dl) < now+1400 || int64(dl) > now+1600 {
				t.Errorf("run lease deadline %v (%v), want about now + 1.5s (%d)", int64(dl), err, now+1500)
			}
			if n := c.Exists(ctx, r.k.Running(), r.k.Run(restored.RunID)).Val(); n != 0 {
				t.Errorf("%d of running, run:<id> written: an older release's", n)
			}
			must(t, r.DropRestored(ctx, restored))
			if v, _ := c.Get(ctx, r.k.Lock("a")).Result(); !tc.took && v != tc.lockValue {
				t.Errorf("lock %q after the drop, want %q left alone", v, tc.lockValue)
			}
			if tc.took && c.Exists(ctx, r.k.Lock("a")).Val() != 0 {
				t.Error("the restored lock is still there")
			}
			if c.HExists(ctx, r.k.Runs(), restored.RunID).Val() || c.ZScore(ctx, r.k.Alive(), restored.RunID).Err() == nil {
				t.Error("the restored lease or run lease is still there")
			}
		})
	}
}

// During a rolling upgrade ReadRuns lists this release's runs (fields of
// runs) and an older release's (members of running, with their lease keys:
// "" for an expired one); Abandon records either kind, deleting what that
// kind is made of, and a run of this release is in no older release's
// structure.
func TestReadRunsAndAbandonBothReleases(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	legacyRunning(t, r) // a@1000, an older release's
	must(t, c.HSet(ctx, r.k.Task("b"), "next_run", 1000, "status", "active").Err())
	b := candidate("b")
	if out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{b}), 1); err != nil || !out[0].Outcome.Won() {
		t.Fatalf("claim: %v, %v", out, err)
	}
	must(t, c.SAdd(ctx, r.k.Running(), RunID("e", 1000)).Err()) // an older release's, its lease key expired
	if c.SIsMember(ctx, r.k.Running(), b.RunID).Val() || c.Exists(ctx, r.k.Run(b.RunID)).Val() != 0 {
		t.Error("this release's run is in running or has a run:<id> key: an older master's reap would record it abandoned")
	}
	runs, err := r.ReadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(runs, func(x, y RunRead) int { return strings.Compare(x.ID, y.ID) })
	want := []RunRead{{ID: RunID("a", 1000), Lease: candidate("a").Lease, Legacy: true}, {ID: b.RunID, Lease: b.Lease},
		{ID: RunID("e", 1000), Legacy: true}}
	if !slices.Equal(runs, want) {
		t.Fatalf("ReadRuns %+v, want %+v", runs, want)
	}
	rec := `{"task":"x","fire":1000,"outcome":"abandoned"}`
	for _, run := range runs {
		task, _, _ := ParseRunID(run.ID)
		done, err := r.Abandon(ctx, Abandonment{RunID: run.ID, Task: task, LeaseSeen: run.Lease, LockValue: LockValue("p", 1000),
			Process: "p", ProcessTTL: time.Second, Record: rec, NotAfterMS: 1 << 50}, testHistory)
		if err != nil || !done {
			t.Errorf("abandon %s: %v, %v", run.ID, done, err)
		}
	}
	if n := c.Exists(ctx, r.k.Runs(), r.k.Running(), r.k.Run(RunID("a", 1000)), r.k.Lock("a"), r.k.Lock("b")).Val(); n != 0 {
		t.Errorf("%d of runs, running, a's lease key, the locks left", n)
	}
	if got := c.HGet(ctx, r.k.Task("a"), "last_result").Val(); got != "abandoned" {
		t.Errorf("a's last result %q", got)
	}
	if got := c.HGet(ctx, r.k.Task("b"), "last_result").Val(); got != "abandoned" {
		t.Errorf("b's last result %q", got)
	}
}
