package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	rdbpkg "github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The tests of this file check RunInfo.Fire (the scheduled instant: a
// job's first due, a retried fire's instant) against RunInfo.Due (when the
// attempt became due: the queue score it was claimed at) on a later
// attempt of a job: retried, released, redelivered, retried from the dead
// letters, and the retry of a scheduled fire.

// serverMS is the Redis server's clock, in unix ms.
func serverMS(t *testing.T, c redis.UniversalClient) int64 {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// pendingScore waits until job id is pending with a score other than not,
// and returns the score: when the attempt it waits for is due.
func pendingScore(t *testing.T, c redis.UniversalClient, id string, not int64) int64 {
	t.Helper()
	k := newKeys("crontab")
	var score int64
	waitFor(t, 5*time.Second, "job "+id+" to be pending again", func() bool {
		s, err := c.ZScore(context.Background(), k.Jobs(), id).Result()
		score = int64(s)
		return err == nil && score != not
	})
	return score
}

// wantFireDue checks a run's scheduled instant and due time (unix ms).
func wantFireDue(t *testing.T, what string, run RunInfo, fire, due int64) {
	t.Helper()
	if got := run.Fire.UnixMilli(); got != fire {
		t.Errorf("%s: RunInfo.Fire = %d, want the first due %d (Due %d)", what, got, fire, run.Due.UnixMilli())
	}
	if got := run.Due.UnixMilli(); got != due {
		t.Errorf("%s: RunInfo.Due = %d, want the score it was claimed at %d", what, got, due)
	}
}

func smsPayload(to string) json.RawMessage {
	b, _ := json.Marshal(smsJob{To: to, Text: "hi"})
	return b
}

// A retry (its due the failed attempt's end plus a backoff) reports the
// job's first due as Fire and the backoff's end as Due.
func TestRetriedJobKeepsItsFirstDue(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 1)
	runScheduler(t, rdb, reg, WithRetryBackoff(300*time.Millisecond))
	to := unique(t)
	t0 := serverMS(t, rdb) + 200
	id, err := NewClient(rdb, reg).Enqueue(ctx, smsJob{To: to, Text: "fail"}, At(time.UnixMilli(t0)))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the first attempt", func() bool { return len(smsRuns(to)) == 1 })
	wantFireDue(t, "attempt 1", smsRuns(to)[0].run, t0, t0)
	retryDue := pendingScore(t, rdb, id, t0)
	waitFor(t, 5*time.Second, "the retry", func() bool { return len(smsRuns(to)) == 2 })
	r := smsRuns(to)[1].run
	if r.Attempt != 2 || r.JobID != id {
		t.Fatalf("second run %+v, want attempt 2 of %s", r, id)
	}
	if retryDue <= t0 {
		t.Fatalf("the retry is due at %d, not after the first due %d", retryDue, t0)
	}
	wantFireDue(t, "attempt 2", r, t0, retryDue)
	if got := r.Fire; !FireTime(withRun(ctx, r)).Equal(got) {
		t.Errorf("FireTime = %v, want RunInfo.Fire %v", FireTime(withRun(ctx, r)), got)
	}
}

// A job that a process lacking its type released (due again a little
// later) reports its enqueue's due time as Fire and the release's due time
// as Due; the inspector shows both while it is pending.
func TestReleasedJobKeepsItsFirstDue(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	other := testRegistry(t, TaskConfig{Name: "not-sms", New: probeNew(0)}) // lacks "sms"
	_, stopOther := runScheduler(t, rdb, other, WithMaxSleep(100*time.Millisecond))
	to := unique(t)
	t0 := serverMS(t, rdb) - 1000
	id, err := NewClient(rdb, nil).EnqueueRaw(ctx, "sms", smsPayload(to), At(time.UnixMilli(t0)))
	if err != nil {
		t.Fatal(err)
	}
	pendingScore(t, rdb, id, t0) // released: due again later
	stopOther()
	released := int64(rdb.ZScore(ctx, k.Jobs(), id).Val())
	if released <= t0 {
		t.Fatalf("released job due at %d, want after %d", released, t0)
	}
	info, err := NewInspector(rdb).Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstDue.UnixMilli() != t0 || info.Due.UnixMilli() != released {
		t.Errorf("Inspector.Job: FirstDue %v, Due %v; want %d and %d", info.FirstDue, info.Due, t0, released)
	}
	runScheduler(t, rdb, smsRegistry(t, 0))
	waitFor(t, 5*time.Second, "the released job to run", func() bool { return len(smsRuns(to)) == 1 })
	r := smsRuns(to)[0].run
	if r.Attempt != 1 {
		t.Errorf("a released job ran as attempt %d, want 1 (a release does not count)", r.Attempt)
	}
	wantFireDue(t, "after a release", r, t0, released)
}

// A job whose claim's lease expired is redelivered, due at that moment: it
// reports its first due as Fire and the redelivery as Due.
func TestRedeliveredJobKeepsItsFirstDue(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	to := unique(t)
	t0 := serverMS(t, rdb) - 1000
	id, err := NewClient(rdb, nil).EnqueueRaw(ctx, "sms", smsPayload(to), At(time.UnixMilli(t0)))
	if err != nil {
		t.Fatal(err)
	}
	db := rdbOf(rdb)
	jobs, _, err := db.ClaimJobs(ctx, rdbpkg.ClaimID("died", 1), 10, 50*time.Millisecond)
	if err != nil || len(jobs) != 1 || jobs[0].DueMS != t0 || jobs[0].FirstDueMS != t0 {
		t.Fatalf("claim: %+v, %v; want the job, due and first due %d", jobs, err, t0)
	}
	time.Sleep(100 * time.Millisecond) // the claim's process died: its lease expires
	back, err := db.Redeliver(ctx, 10, 1<<50)
	if err != nil || len(back) != 1 {
		t.Fatalf("redeliver: %v, %v", back, err)
	}
	again := pendingScore(t, rdb, id, t0)
	runScheduler(t, rdb, smsRegistry(t, 0))
	waitFor(t, 5*time.Second, "the redelivered job to run", func() bool { return len(smsRuns(to)) == 1 })
	r := smsRuns(to)[0].run
	if r.Attempt != 2 {
		t.Errorf("a redelivered job ran as attempt %d, want 2 (the lost one counted)", r.Attempt)
	}
	wantFireDue(t, "after a redelivery", r, t0, again)
}

// A dead job retried from the dead letters (due at that moment) reports
// its first due as Fire and the retry as Due.
func TestDeadJobRetriedKeepsItsFirstDue(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	reg := smsRegistry(t, 0)
	_, stop := runScheduler(t, rdb, reg)
	to := unique(t)
	t0 := serverMS(t, rdb) + 100
	id, err := NewClient(rdb, reg).Enqueue(ctx, smsJob{To: to, Text: "fail"}, At(time.UnixMilli(t0)))
	if err != nil {
		t.Fatal(err)
	}
	in := NewInspector(rdb)
	waitFor(t, 5*time.Second, "the job to die", func() bool {
		dead, _ := in.DeadJobs(ctx, 0)
		return len(dead) == 1
	})
	stop()
	if err := in.RetryDead(ctx, id); err != nil {
		t.Fatal(err)
	}
	retried := int64(rdb.ZScore(ctx, k.Jobs(), id).Val())
	if info, err := in.Job(ctx, id); err != nil || info.FirstDue.UnixMilli() != t0 {
		t.Errorf("Inspector.Job of the retried dead job: FirstDue %v, %v; want %d", info.FirstDue, err, t0)
	}
	runScheduler(t, rdb, reg)
	waitFor(t, 5*time.Second, "the retried dead job to run", func() bool { return len(smsRuns(to)) == 2 })
	runs := smsRuns(to)
	wantFireDue(t, "the first run", runs[0].run, t0, t0)
	if retried <= t0 {
		t.Fatalf("retried at %d, not after the first due %d", retried, t0)
	}
	wantFireDue(t, "retried from the dead letters", runs[1].run, t0, retried)
}

// The job that retries a failed scheduled fire reports the fire's instant
// as Fire and its backoff's end as Due.
func TestRetriedFireKeepsItsInstant(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	var mu sync.Mutex
	var runs []RunInfo
	behave(t, name, func(ctx context.Context) error {
		run, _ := Run(ctx)
		mu.Lock()
		runs = append(runs, run)
		mu.Unlock()
		if run.JobID == "" {
			return errors.New("scheduled run fails")
		}
		return nil
	})
	seen := func() []RunInfo {
		mu.Lock()
		defer mu.Unlock()
		return append([]RunInfo(nil), runs...)
	}
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", Retries: 1, New: probeNew(0)})
	runScheduler(t, rdb, reg, WithRetryBackoff(300*time.Millisecond))
	k := newKeys("crontab")
	fire := time.UnixMilli(serverMS(t, rdb)).Truncate(time.Second)
	rdb.HSet(ctx, k.Task(name), "next_run", fire.UnixMilli())
	rdb.ZAdd(ctx, k.Queue(), redisZ(fire.UnixMilli(), name))
	rdb.Publish(ctx, k.Wake(), "test")
	waitFor(t, 5*time.Second, "the scheduled run", func() bool { return len(seen()) == 1 })
	wantFireDue(t, "the scheduled run", seen()[0], fire.UnixMilli(), fire.UnixMilli())
	retryID := rdbpkg.RunID(name, fire.UnixMilli()) + "/retry"
	due := pendingScore(t, rdb, retryID, 0)
	waitFor(t, 5*time.Second, "the retry", func() bool { return len(seen()) == 2 })
	r := seen()[1]
	if r.JobID != retryID {
		t.Fatalf("second run %+v, want the retry job %s", r, retryID)
	}
	if due <= fire.UnixMilli() {
		t.Fatalf("the retry is due at %d, not after the fire %d", due, fire.UnixMilli())
	}
	wantFireDue(t, "the fire's retry", r, fire.UnixMilli(), due)
}
