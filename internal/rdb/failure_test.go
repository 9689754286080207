package rdb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/redis/go-redis/v9"
)

// scriptCase is one typed method run on a state its setup writes.
type scriptCase struct {
	name  string
	setup func(t *testing.T, r *RDB)
	call  func(r *RDB) error
}

var testHistory = HistoryBound{Records: 10, Age: time.Hour}

// testLost judges processes by a 1s TTL and never finds a sweep run late.
var testLost = LostRuns{ProcessTTL: time.Second, History: testHistory, EndMS: 2000, NotAfterMS: 1 << 50}

// allPages runs a sweep page method from cursor 0 until its scan ends.
func allPages(page func(ctx context.Context, cursor uint64, count int64) (uint64, []string, error)) error {
	var cursor uint64
	for {
		next, _, err := page(context.Background(), cursor, 100)
		if err != nil || next == 0 {
			return err
		}
		cursor = next
	}
}

var testLeases = RunLeases{TTL: 1500 * time.Millisecond, Gap: 750 * time.Millisecond}

// restored is the run of task "a" at 1000 by process "p" that the
// RestoreRun cases write again.
var restored = RunRestore{Task: "a", RunID: RunID("a", 1000), LockValue: LockValue("p", 1000),
	Lease: Lease{Process: "p", Task: "a", Fire: 1000, Start: 1000}.Encode(), TTL: time.Minute}

// enqueued enqueues n jobs due now, of type "t", ids j0, j1, ...
func enqueued(t *testing.T, r *RDB, n int) {
	t.Helper()
	jobs := make([]NewJob, n)
	for i := range jobs {
		jobs[i] = NewJob{ID: fmt.Sprintf("j%d", i), Envelope: `{"task":"t","payload":{}}`, AtMS: 1}
	}
	if _, err := r.Enqueue(context.Background(), jobs); err != nil {
		t.Fatal(err)
	}
}

// uniqueEnqueued enqueues jobs u0 (identity "t|a") and u1 ("t|b"), due
// in an hour, unique for an hour.
func uniqueEnqueued(t *testing.T, r *RDB) {
	t.Helper()
	jobs := []NewJob{
		{ID: "u0", Envelope: `{"task":"t","unique":"t|a"}`, Delay: time.Hour, Unique: UniqueJob{Identity: "t|a", TTL: time.Hour, Debounce: -1}},
		{ID: "u1", Envelope: `{"task":"t","unique":"t|b"}`, Delay: time.Hour, Unique: UniqueJob{Identity: "t|b", TTL: time.Hour, Debounce: -1}},
	}
	if res, err := r.EnqueueUnique(context.Background(), jobs); err != nil || res[0].Outcome != UniqueNew || res[1].Outcome != UniqueNew {
		t.Fatalf("enqueue unique: %+v, %v", res, err)
	}
}

// claimed enqueues n jobs and claims them all as claim "p#1".
func claimed(t *testing.T, r *RDB, n int) {
	t.Helper()
	enqueued(t, r, n)
	if jobs, _, err := r.ClaimJobs(context.Background(), "p#1", n, time.Minute); err != nil || len(jobs) != n {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
}

// declared registers a task "a" due at 1000 (every second).
func declared(t *testing.T, r *RDB) {
	t.Helper()
	if _, _, err := r.Register(context.Background(), 500, []TaskDecl{{Key: "a", Class: "A", Type: "a",
		Expression: "every:1s", TZ: "UTC", Interval: "every second", Status: "active", NextMS: 1000,
		Timeout: time.Minute, Misfire: "once"}}); err != nil {
		t.Fatal(err)
	}
}

func candidate(task string) FireCandidate {
	run := RunID(task, 1000)
	return FireCandidate{Task: task, FireMS: 1000, NextMS: 2000, RunID: run,
		Lease: Lease{Process: "p", Task: task, Fire: 1000, Start: 1000}.Encode()}
}

// running claims task "a"'s instant 1000 for process "p".
func running(t *testing.T, r *RDB) {
	t.Helper()
	declared(t, r)
	out, err := r.ClaimFires(context.Background(), r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a")}), 1)
	if err != nil || !out[0].Outcome.Won() {
		t.Fatalf("claim: %v, %v", out, err)
	}
}

// legacyRunning writes task "a"'s run of instant 1000 by process "p" as an
// older release's claim wrote it: the lock, a running entry, a lease key
// (run:<id>, with a TTL) and a run lease; no field of runs.
func legacyRunning(t *testing.T, r *RDB) {
	t.Helper()
	declared(t, r)
	ctx := context.Background()
	now := r.c.Time(ctx).Val().UnixMilli()
	id := RunID("a", 1000)
	must(t, r.c.HSet(ctx, r.k.Task("a"), "next_run", 2000, "last_run", 1000).Err()) // as its claim moved it
	must(t, r.c.Set(ctx, r.k.Lock("a"), LockValue("p", 1000), time.Minute).Err())
	must(t, r.c.SAdd(ctx, r.k.Running(), id).Err())
	must(t, r.c.Set(ctx, r.k.Run(id), candidate("a").Lease, time.Minute).Err())
	must(t, r.c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: float64(now + 1500), Member: id}).Err())
}

// next is task's candidate for the instant after candidate(task)'s.
func next(task string) FireCandidate {
	return FireCandidate{Task: task, FireMS: 2000, NextMS: 3000, RunID: RunID(task, 2000),
		Lease: Lease{Process: "q", Task: task, Fire: 2000, Start: 2000}.Encode()}
}

// heldByDeadRun is running, then the run's run lease expired while the
// pulse was steady for a minute: the next claim takes the lock over.
func heldByDeadRun(t *testing.T, r *RDB) {
	t.Helper()
	running(t, r)
	deadRunLease(t, r)
}

// deadRunLease makes the run lease of a@1000 expired while the pulse was
// steady for a minute.
func deadRunLease(t *testing.T, r *RDB) {
	t.Helper()
	ctx := context.Background()
	now := r.c.Time(ctx).Val().UnixMilli()
	must(t, r.c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: float64(now - 100), Member: RunID("a", 1000)}).Err())
	must(t, r.c.HSet(ctx, r.k.Pulse(), "last", now, "since", now-60_000).Err())
}

func scriptCases() []scriptCase {
	ctx := context.Background()
	finish := RunFinish{RunID: RunID("a", 1000), Task: "a", LockValue: LockValue("p", 1000), Outcome: "ok",
		DurationMS: 5, Record: `{"task":"a","fire":1000,"start_ms":1000,"end_ms":1005,"outcome":"ok","process":"p","attempt":1}`}
	return []scriptCase{
		{"Enqueue", func(*testing.T, *RDB) {}, func(r *RDB) error {
			_, err := r.Enqueue(ctx, []NewJob{{ID: "x", Envelope: `{"task":"t"}`, Check: true}})
			return err
		}},
		{"ClaimJobs", func(t *testing.T, r *RDB) {
			enqueued(t, r, 3)
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1) // put back before
		}, func(r *RDB) error {
			_, _, err := r.ClaimJobs(ctx, "q#1", 10, time.Minute)
			return err
		}},
		{"ClaimJobsOf", func(t *testing.T, r *RDB) {
			enqueued(t, r, 3)
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1) // put back before
		}, func(r *RDB) error {
			_, _, err := r.ClaimJobsOf(ctx, "q#1", 10, time.Minute, []string{"t"}, 100, time.Millisecond)
			return err
		}},
		{"AckJobs", func(t *testing.T, r *RDB) {
			claimed(t, r, 4)
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1, "j2", 1) // put back before
			r.c.HSet(ctx, r.k.Failed(), "j2", 1)            // failed before
		}, func(r *RDB) error {
			_, err := r.AckJobs(ctx, AckBatch{DeadLimit: 1, History: testHistory, EndedClaims: []string{"p#1"}, Acks: []JobAck{
				{ID: "j0", Claim: "p#1", Action: AckOK, Type: "t"},
				{ID: "j1", Claim: "p#1", Action: AckRetry, DueMS: 5, Type: "t", Record: `{"task":"t","fire":1}`, FirstDueMS: 1, Unique: true},
				{ID: "j2", Claim: "p#1", Action: AckDead, Type: "t", Record: `{"task":"t","fire":1}`, DeadEnvelope: `{"task":"t"}`, Unique: true},
				{ID: "j3", Claim: "p#1", Action: AckRelease, DueMS: 5, FirstDueMS: 1},
			}})
			return err
		}},
		{"ClaimJobsLimited", func(t *testing.T, r *RDB) {
			enqueued(t, r, 3)
			must(t, r.c.HSet(ctx, r.k.JobData(), "k0", `{"task":"t","rate_key":"a"}`).Err())
			must(t, r.c.ZAdd(ctx, r.k.Jobs(), redis.Z{Score: 1, Member: "k0"}).Err())
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1)                                                   // put back before
			must(t, r.c.HSet(ctx, r.k.Slots("t"), "gone", "1|1", "p", "1|"+fmt.Sprint(1<<50)).Err()) // a dead process's, a live one's
			must(t, r.c.ZAdd(ctx, r.k.Rate("t"), redis.Z{Score: 1, Member: "old"}).Err())            // out of the window
		}, func(r *RDB) error {
			_, err := r.claimLimited(ctx, "q#1", 10, time.Minute, nil,
				[]JobLimit{{Type: "t", MaxRunning: 4, RateN: 5, RatePer: time.Minute}}, 100, time.Millisecond)
			return err
		}},
		{"ClaimJobsLimitedUnseenType", func(t *testing.T, r *RDB) {
			enqueued(t, r, 3)
			// q holds slots of u, whose jobs the claim does not see: it
			// gives them back.
			must(t, r.c.HSet(ctx, r.k.Slots("u"), "q", "2|"+fmt.Sprint(1<<50)).Err())
		}, func(r *RDB) error {
			_, err := r.claimLimited(ctx, "q#1", 10, time.Minute, nil,
				[]JobLimit{{Type: "t", MaxRunning: 4}, {Type: "u", MaxRunning: 2}}, 100, time.Millisecond)
			return err
		}},
		{"RenewJobSlots", func(t *testing.T, r *RDB) {
			must(t, r.c.HSet(ctx, r.k.Slots("t"), "p", "2|1").Err())
		}, func(r *RDB) error {
			return r.RenewJobSlots(ctx, "p", time.Minute, []string{"t"})
		}},
		{"RenewJobLeases", func(t *testing.T, r *RDB) { claimed(t, r, 1) }, func(r *RDB) error {
			return r.RenewJobLeases(ctx, time.Hour, []string{"p#1"})
		}},
		{"Redeliver", func(t *testing.T, r *RDB) {
			claimed(t, r, 2)
			r.c.ZAdd(ctx, r.k.Leases(), redis.Z{Score: 1, Member: "p#1"}) // expired
			r.c.HSet(ctx, r.k.Failed(), "j0", 1)                          // failed before
		}, func(r *RDB) error { _, err := r.Redeliver(ctx, 10, 1<<50); return err }}, // 0 would be a run too late: a no-op
		{"Cancel", func(t *testing.T, r *RDB) {
			enqueued(t, r, 1)
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1)
			r.c.HSet(ctx, r.k.Failed(), "j0", 1)
		}, func(r *RDB) error { _, err := r.Cancel(ctx, "j0"); return err }},
		{"CancelUnique", func(t *testing.T, r *RDB) {
			uniqueEnqueued(t, r)
		}, func(r *RDB) error { _, err := r.Cancel(ctx, "u0"); return err }},
		{"EnqueueUnique", func(t *testing.T, r *RDB) {
			uniqueEnqueued(t, r)
			r.c.HSet(ctx, r.k.Attempts(), "u1", 1)
			r.c.HSet(ctx, r.k.FirstDue(), "u1", 1)
			r.c.HSet(ctx, r.k.Failed(), "u1", 1)
		}, func(r *RDB) error {
			_, err := r.EnqueueUnique(ctx, []NewJob{
				{ID: "n0", Envelope: `{"task":"t","unique":"t|a"}`, Unique: UniqueJob{Identity: "t|a", TTL: time.Hour, Debounce: -1}},
				{ID: "n1", Envelope: `{"task":"t","unique":"t|b"}`, Unique: UniqueJob{Identity: "t|b", TTL: time.Hour, Debounce: time.Second}},
				{ID: "n2", Envelope: `{"task":"t","unique":"t|c"}`, Unique: UniqueJob{Identity: "t|c", TTL: time.Hour, Debounce: -1}},
				{ID: "n3", Envelope: `{"task":"t"}`, Check: true, Unique: UniqueJob{Debounce: -1}},
			})
			return err
		}},
		{"SweepUnique", func(t *testing.T, r *RDB) {
			uniqueEnqueued(t, r)
			r.c.ZAdd(ctx, r.k.UniqueIndex(), redis.Z{Score: 1, Member: "t|a"}, redis.Z{Score: 1, Member: "t|c"})
			r.c.Set(ctx, r.k.UniqueKey("t|a"), "u0|1", 0)
			r.c.Set(ctx, r.k.UniqueKey("t|c"), "gone|1", 0)
		}, func(r *RDB) error { _, err := r.SweepUnique(ctx, 10); return err }},
		{"RetryDead", func(t *testing.T, r *RDB) {
			r.c.ZAdd(ctx, r.k.Dead(), redis.Z{Score: 1, Member: "d"})
			r.c.HSet(ctx, r.k.DeadData(), "d", `{"task":"t","error":"x"}`)
			r.c.HSet(ctx, r.k.Attempts(), "d", 3)
		}, func(r *RDB) error { _, err := r.RetryDead(ctx, "d", `{"task":"t"}`, "", ""); return err }},
		{"RetryDeadUnique", func(t *testing.T, r *RDB) {
			r.c.ZAdd(ctx, r.k.Dead(), redis.Z{Score: 1, Member: "d"})
			r.c.HSet(ctx, r.k.DeadData(), "d", `{"task":"t","unique":"t|a","error":"x"}`)
			r.c.HSet(ctx, r.k.Attempts(), "d", 3)
			r.c.Set(ctx, r.k.UniqueKey("t|a"), "d|1", 0)
			r.c.ZAdd(ctx, r.k.UniqueIndex(), redis.Z{Score: 1, Member: "t|a"})
		}, func(r *RDB) error {
			_, err := r.RetryDead(ctx, "d", `{"task":"t","unique":"t|a"}`, "t|a", `{"task":"t"}`)
			return err
		}},
		{"Register", func(*testing.T, *RDB) {}, func(r *RDB) error {
			_, _, err := r.Register(ctx, 500, []TaskDecl{{Key: "a", Type: "a", Expression: "every:1s", Status: "active", NextMS: 1000}})
			return err
		}},
		{"SetTask", func(*testing.T, *RDB) {}, func(r *RDB) error {
			_, err := r.SetTask(ctx, 500, TaskDecl{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000, Params: "{}"})
			return err
		}},
		{"RegisterFlow", func(*testing.T, *RDB) {}, func(r *RDB) error {
			_, _, err := r.Register(ctx, 500, []TaskDecl{{Key: "a", Type: "a", Expression: "every:1s", Status: "active", NextMS: 1000,
				Concurrent: true, MaxRunning: 3, Rate: registry.Rate{N: 5, Per: time.Second}, Priority: -2, Jitter: time.Minute}})
			return err
		}},
		{"SetTaskFlow", func(*testing.T, *RDB) {}, func(r *RDB) error {
			_, err := r.SetTask(ctx, 500, TaskDecl{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000, Params: "{}",
				Concurrent: true, MaxRunning: 3, Rate: registry.Rate{N: 5, Per: time.Second}, Priority: -2})
			return err
		}},
		{"RemoveTask", func(t *testing.T, r *RDB) {
			if _, err := r.SetTask(ctx, 500, TaskDecl{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000}); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error { _, err := r.RemoveTask(ctx, "d"); return err }},
		{"SetTasks", func(t *testing.T, r *RDB) {
			if _, err := r.SetTask(ctx, 500, TaskDecl{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000}); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error {
			_, err := r.SetTasks(ctx, 500, []TaskDecl{
				{Key: "d", Class: "app.A", Type: "a", Expression: "every:2s", NextMS: 2000, Params: "{}", Jitter: time.Second},
				{Key: "e", Type: "a", Expression: "every:1s", NextMS: 1000, Concurrent: true, MaxRunning: 3},
				{Key: "f", Type: "a", Expression: "every:1s", NextMS: 1000, Status: "disabled"}}, 0)
			return err
		}},
		{"RemoveTasks", func(t *testing.T, r *RDB) {
			if _, err := r.SetTasks(ctx, 500, []TaskDecl{{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000},
				{Key: "e", Type: "a", Expression: "every:1s", NextMS: 1000}}, 0); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error { _, err := r.RemoveTasks(ctx, []string{"d", "e", "gone"}, 0); return err }},
		{"SetStatus", declared, func(r *RDB) error { _, err := r.SetStatus(ctx, "a", "disabled"); return err }},
		{"Trigger", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.HSet(ctx, r.k.Task("a"), "next_run", 1<<40) // far ahead
		}, func(r *RDB) error { _, _, err := r.Trigger(ctx, "a"); return err }},
		{"Requeue", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.ZRem(ctx, r.k.Queue(), "a")
		}, func(r *RDB) error { _, err := r.Requeue(ctx, "a", 3000); return err }},
		{"Prune", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.ZAdd(ctx, r.k.Declared(), redis.Z{Score: 1, Member: "a"})
		}, func(r *RDB) error { _, err := r.Prune(ctx, "a", time.Second, 0); return err }},
		{"RepairScore", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: -5, Member: "a"})
		}, func(r *RDB) error { _, err := r.RepairScore(ctx, "a"); return err }},
		{"ClaimFires", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.HSet(ctx, r.k.Task("b"), "next_run", 1000, "status", "active") // a second, concurrent-less task
			r.c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: 1000, Member: "b"})
		}, func(r *RDB) error {
			_, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a"), candidate("b")}), 2)
			return err
		}},
		{"ClaimFiresCapped", func(t *testing.T, r *RDB) {
			concurrentTasks(t, r, 3)
			now := r.c.Time(ctx).Val().UnixMilli()
			r.c.ZAdd(ctx, r.k.FireSlots("c"), redis.Z{Score: float64(now - 100), Member: "dead@1"}) // expired: pruned
			r.c.HSet(ctx, r.k.Pulse(), "last", now, "since", now-60_000)
		}, func(r *RDB) error {
			_, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases,
				[]FireCandidate{capped("c0", 2), capped("c1", 2), capped("c2", 2), candidate("a")}), 4)
			return err
		}},
		{"RenewRunLeasesSlots", func(t *testing.T, r *RDB) {
			concurrentTasks(t, r, 1)
			if _, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{capped("c0", 2)}), 1); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error {
			_, err := r.RenewRunLeases(ctx, testLeases, []string{RunID("c0", 1000), "gone@5"}, []string{"c", "c"})
			return err
		}},
		{"FinishRunsSlots", func(t *testing.T, r *RDB) {
			concurrentTasks(t, r, 2)
			if _, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{capped("c0", 2), capped("c1", 2)}), 2); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error {
			_, err := r.FinishRuns(ctx, testHistory, []RunFinish{{RunID: RunID("c0", 1000), Task: "c0", Outcome: "ok", Slots: "c"},
				{RunID: RunID("c1", 1000), Task: "c1", Outcome: "ok", Slots: "c"}})
			return err
		}},
		{"ClaimFiresTakeover", heldByDeadRun, func(r *RDB) error {
			_, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{next("a")}), 1)
			return err
		}},
		{"ClaimFiresTakeoverLegacy", func(t *testing.T, r *RDB) {
			legacyRunning(t, r)
			deadRunLease(t, r)
		}, func(r *RDB) error {
			_, err := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{next("a")}), 1)
			return err
		}},
		{"RenewRunLeases", running, func(r *RDB) error {
			_, err := r.RenewRunLeases(ctx, testLeases, []string{RunID("a", 1000), "gone@5"}, nil)
			return err
		}},
		{"FinishRuns", running, func(r *RDB) error { _, err := r.FinishRuns(ctx, testHistory, []RunFinish{finish}); return err }},
		{"RenewRuns", running, func(r *RDB) error {
			return r.RenewRuns(ctx, []RunRenewal{{Task: "a", LockValue: LockValue("p", 1000), TTL: time.Hour}})
		}},
		{"Abandon", running, func(r *RDB) error { // p has no heartbeat
			_, err := r.Abandon(ctx, Abandonment{RunID: RunID("a", 1000), Task: "a", LeaseSeen: candidate("a").Lease,
				LockValue: LockValue("p", 1000), Process: "p", ProcessTTL: time.Second,
				Record: `{"task":"a","fire":1000,"outcome":"abandoned"}`, NotAfterMS: 1 << 50}, testHistory)
			return err
		}},
		{"AbandonLegacy", legacyRunning, func(r *RDB) error {
			_, err := r.Abandon(ctx, Abandonment{RunID: RunID("a", 1000), Task: "a", LeaseSeen: candidate("a").Lease,
				LockValue: LockValue("p", 1000), Process: "p", ProcessTTL: time.Second,
				Record: `{"task":"a","fire":1000,"outcome":"abandoned"}`, NotAfterMS: 1 << 50}, testHistory)
			return err
		}},
		{"AbandonLegacyExpired", func(t *testing.T, r *RDB) {
			legacyRunning(t, r)
			r.c.Del(ctx, r.k.Run(RunID("a", 1000))) // its lease key expired
		}, func(r *RDB) error {
			_, err := r.Abandon(ctx, Abandonment{RunID: RunID("a", 1000), Task: "a", LockValue: LockValue("p", 1000),
				Process: "p", ProcessTTL: time.Second, Record: `{"task":"a","fire":1000,"outcome":"abandoned"}`, NotAfterMS: 1 << 50}, testHistory)
			return err
		}},
		{"RestoreRun", func(t *testing.T, r *RDB) { declared(t, r) }, func(r *RDB) error {
			_, err := r.RestoreRun(ctx, restored, testLeases)
			return err
		}},
		{"DropRestored", func(t *testing.T, r *RDB) {
			declared(t, r)
			if _, err := r.RestoreRun(ctx, restored, testLeases); err != nil {
				t.Fatal(err)
			}
		}, func(r *RDB) error { return r.DropRestored(ctx, restored) }},
		{"TakeMaster", func(*testing.T, *RDB) {}, func(r *RDB) error { _, err := r.TakeMaster(ctx, "p", time.Second); return err }},
		{"CountRepairs", func(t *testing.T, r *RDB) { r.c.HSet(ctx, r.k.Sweep(), RepairJob, 1) }, func(r *RDB) error {
			return r.CountRepairs(ctx, RepairRunning, 2)
		}},
		{"SweepQueue", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: 1000, Member: "ghost"}) // no task hash
		}, func(r *RDB) error { return allPages(r.SweepQueue) }},
		{"SweepJobs", func(t *testing.T, r *RDB) {
			claimed(t, r, 2)
			r.c.HSet(ctx, r.k.JobData(), "lost", `{"task":"t"}`, "stale", `{"task":"t"}`)
			r.c.HSet(ctx, r.k.Owners(), "stale", OwnerValue("gone#9", 5)) // a claim without a lease
			r.c.HSet(ctx, r.k.Failed(), "stale", 1)                       // failed before
			r.c.ZAdd(ctx, r.k.Dead(), redis.Z{Score: 1, Member: "d"})
		}, func(r *RDB) error { return allPages(r.SweepJobs) }},
		{"SweepFirstDue", func(t *testing.T, r *RDB) {
			enqueued(t, r, 1)
			r.c.HSet(ctx, r.k.FirstDue(), "j0", 1, "gone", 2) // gone: no such job
		}, func(r *RDB) error { return allPages(r.SweepFirstDue) }},
		{"SweepClaims", func(t *testing.T, r *RDB) {
			claimed(t, r, 1)
			r.c.ZAdd(ctx, r.k.Leases(), redis.Z{Score: 1 << 50, Member: "gone#2"}) // owns no job
		}, func(r *RDB) error {
			leased := map[string]bool{}
			if err := allPages(func(ctx context.Context, c uint64, n int64) (uint64, []string, error) {
				next, claims, err := r.ScanLeasedClaims(ctx, c, n)
				for _, cl := range claims {
					leased[cl] = true
				}
				return next, nil, err
			}); err != nil {
				return err
			}
			if err := allPages(func(ctx context.Context, c uint64, n int64) (uint64, []string, error) {
				next, claims, err := r.ScanOwnerClaims(ctx, c, n)
				for _, cl := range claims {
					delete(leased, cl)
				}
				return next, nil, err
			}); err != nil {
				return err
			}
			_, err := r.SweepClaims(ctx, slices.Collect(maps.Keys(leased)))
			return err
		}},
		{"SweepRunning", func(t *testing.T, r *RDB) {
			legacyRunning(t, r)
			r.c.SAdd(ctx, r.k.Running(), "junk") // no run id
		}, func(r *RDB) error { return allPages(r.SweepRunning) }},
		{"SweepLeases", func(t *testing.T, r *RDB) {
			legacyRunning(t, r) // a@1000: its lease has its running entry
			r.c.HSet(ctx, r.k.Task("c"), "name", "c", "runs", 0, "failures", 0)
			r.c.Set(ctx, r.k.Run(RunID("c", 1000)), Lease{Process: "gone", Task: "c", Fire: 1000, Start: 1000}.Encode(), time.Hour)
			r.c.Set(ctx, r.k.Lock("c"), LockValue("gone", 1000), time.Hour)
			r.c.ZAdd(ctx, r.k.Processes(), redis.Z{Score: 1, Member: "p"})
		}, func(r *RDB) error {
			return allPages(func(ctx context.Context, c uint64, n int64) (uint64, []string, error) {
				return r.SweepLeases(ctx, c, n, testLost)
			})
		}},
		{"SweepTaskIndex", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.HSet(ctx, r.k.Task("lost"), "type", "a", "expression", "every:1s", "next_run", 1000) // in no index
			r.c.HSet(ctx, r.k.Sweep(), RepairJob, 1)
		}, func(r *RDB) error { return allPages(r.SweepTaskIndex) }},
		{"SweepTrackedRunTime", func(t *testing.T, r *RDB) {
			declared(t, r)
			if _, err := r.SetTask(ctx, 500, TaskDecl{Key: "d", Type: "a", Expression: "every:1s", NextMS: 1000}); err != nil {
				t.Fatal(err)
			}
			r.c.SAdd(ctx, r.k.Tasks(), "d") // as an older release listed it
		}, func(r *RDB) error { return allPages(r.SweepTrackedRunTime) }},
		{"IndexUnqueued", func(t *testing.T, r *RDB) {
			declared(t, r)
			r.c.ZRem(ctx, r.k.Queue(), "a")
		}, func(r *RDB) error { _, err := r.IndexUnqueued(ctx, []string{"a"}); return err }},
		{"SweepLocks", func(t *testing.T, r *RDB) {
			running(t, r)                                                 // a@1000 holds a's lock
			must(t, r.c.SAdd(ctx, r.k.Running(), RunID("d", 1000)).Err()) // an older release's run holds d's
			must(t, r.c.Set(ctx, r.k.Lock("d"), LockValue("gone", 1000), time.Hour).Err())
			for _, task := range []string{"b", "c"} {
				r.c.HSet(ctx, r.k.Task(task), "name", task, "runs", 0, "failures", 0)
				r.c.SAdd(ctx, r.k.Tasks(), task)
			}
			r.c.Set(ctx, r.k.Lock("b"), LockValue("gone", 2000), time.Hour) // no run
			r.c.Set(ctx, r.k.Lock("c"), "not a scheduler's", time.Hour)
			r.c.ZAdd(ctx, r.k.Processes(), redis.Z{Score: 1, Member: "p"})
		}, func(r *RDB) error {
			return allPages(func(ctx context.Context, c uint64, n int64) (uint64, []string, error) {
				return r.SweepLocks(ctx, c, n, testLost)
			})
		}},
	}
}

// snapshot dumps every key of the server: name -> type and serialized value.
func snapshot(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// foreign writes a value of another type than the one key holds (a string,
// or a list where a string was).
func foreign(t *testing.T, c *redis.Client, key, had string) {
	t.Helper()
	ctx := context.Background()
	c.Del(ctx, key)
	if had == "string" {
		c.RPush(ctx, key, "foreign")
		return
	}
	c.Set(ctx, key, "foreign", 0)
}

// Every script validates and reads first, and writes last: with any one
// of the keys it touches holding a value of the wrong type, or missing, a
// call either succeeds (the script tolerates that key) or fails having
// written nothing at all.
func TestFailedScriptWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, sc := range scriptCases() {
		t.Run(sc.name, func(t *testing.T) {
			r := New(c, "ns")
			before, after := undisturbed(t, c, r, sc, snapshot)
			// The keys it may touch: those of the setup and those it wrote.
			touched := slices.Sorted(maps.Keys(after))
			for k := range before {
				if _, ok := after[k]; !ok {
					touched = append(touched, k)
				}
			}
			types := map[string]string{}
			for _, k := range touched {
				must(t, c.FlushAll(ctx).Err())
				sc.setup(t, r)
				types[k] = c.Type(ctx, k).Val()
			}
			failed := 0
			for _, k := range touched {
				must(t, c.FlushAll(ctx).Err())
				sc.setup(t, r)
				foreign(t, c, k, types[k])
				want := snapshot(t, c)
				err := sc.call(r)
				if err == nil {
					continue
				}
				failed++
				if got := snapshot(t, c); !maps.Equal(got, want) {
					t.Errorf("with %s of the wrong type the call failed (%v) after writing: %s", k, err, diff(want, got))
				}
			}
			// Each key missing in turn: a call fails having written nothing,
			// or it succeeds.
			for _, k := range touched {
				must(t, c.FlushAll(ctx).Err())
				sc.setup(t, r)
				c.Del(ctx, k)
				want := snapshot(t, c)
				if err := sc.call(r); err != nil {
					failed++
					if got := snapshot(t, c); !maps.Equal(got, want) {
						t.Errorf("with %s missing the call failed (%v) after writing: %s", k, err, diff(want, got))
					}
				}
			}
			t.Logf("%d keys touched, %d of them fail the call when foreign", len(touched), failed)
		})
	}
}

func diff(want, got map[string]string) string {
	var b strings.Builder
	for k, v := range got {
		if w, ok := want[k]; !ok {
			fmt.Fprintf(&b, "+%s ", k)
		} else if w != v {
			fmt.Fprintf(&b, "~%s ", k)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			fmt.Fprintf(&b, "-%s ", k)
		}
	}
	return b.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// shape fingerprints every key of the server by name, type and size
// (values written from the server's clock differ between runs; a
// half-applied call still shows in which keys exist and how large they are).
func shape(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		var n int64
		switch typ {
		case "hash":
			n = c.HLen(ctx, k).Val()
		case "zset":
			n = c.ZCard(ctx, k).Val()
		case "set":
			n = c.SCard(ctx, k).Val()
		case "list":
			n = c.LLen(ctx, k).Val()
		case "string":
			n = c.StrLen(ctx, k).Val()
		}
		out[k] = fmt.Sprintf("%s/%d", typ, n)
	}
	return out
}

// A call that times out while Redis stalls (SIGSTOP) ran whole or not at
// all once Redis answers again, for every script method: the namespace has
// the shape it had before the call, or the shape the call leaves when it
// runs undisturbed.
func TestStalledCallIsWholeOrNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, sc := range scriptCases() {
		t.Run(sc.name, func(t *testing.T) {
			r := New(c, "ns")
			before, after := undisturbed(t, c, r, sc, shape)

			must(t, c.FlushAll(ctx).Err())
			sc.setup(t, r)
			stalled := redis.NewClient(&redis.Options{Network: srv.Network(), Addr: srv.Addr(),
				ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, MaxRetries: -1})
			defer stalled.Close()
			srv.Pause()
			err := sc.call(New(stalled, "ns"))
			time.Sleep(50 * time.Millisecond)
			srv.Resume()
			if err == nil {
				t.Fatal("the call returned while Redis was stopped")
			}
			got := waitShape(t, c, before, after)
			if !maps.Equal(got, before) && !maps.Equal(got, after) {
				t.Errorf("after a stalled call: %v\nwant the shape before %v\nor after %v", got, before, after)
			}
		})
	}
}

// waitShape returns the namespace's shape once it is one of want (the
// stalled call may still reach Redis after it answers again), or after a
// second.
func waitShape(t *testing.T, c *redis.Client, want ...map[string]string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		got := shape(t, c)
		for _, w := range want {
			if maps.Equal(got, w) {
				return got
			}
		}
		if time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// undisturbed runs sc on a flushed server and returns the server's state
// (as state reads it) before and after the call, which must succeed.
func undisturbed(t *testing.T, c *redis.Client, r *RDB, sc scriptCase, state func(*testing.T, *redis.Client) map[string]string) (before, after map[string]string) {
	t.Helper()
	must(t, c.FlushAll(context.Background()).Err())
	sc.setup(t, r)
	before = state(t, c)
	if err := sc.call(r); err != nil {
		t.Fatalf("on good data: %v", err)
	}
	return before, state(t, c)
}
