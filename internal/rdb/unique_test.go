package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// uniqueJob is a job "t" due now with identity ident, unique for ttl.
func uniqueJob(id, ident string, ttl time.Duration) NewJob {
	return NewJob{ID: id, Envelope: `{"task":"t","unique":"` + ident + `"}`, AtMS: 1,
		Unique: UniqueJob{Identity: ident, TTL: ttl, Debounce: -1}}
}

// enqueueOne enqueues j with EnqueueUnique and returns what it did.
func enqueueOne(t *testing.T, r *RDB, j NewJob) UniqueResult {
	t.Helper()
	res, err := r.EnqueueUnique(context.Background(), []NewJob{j})
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// A unique job put back by a redelivery (its process died: the attempt
// did not fail) keeps its identity past the ttl until it ends, as a
// running one does, even after a failure before; the retry of a failed
// attempt holds it no longer than the ttl.
func TestRedeliveredUniqueJobHoldsItsIdentity(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	const ttl = 300 * time.Millisecond
	start := time.Now()
	if res := enqueueOne(t, r, uniqueJob("u", "t|a", ttl)); res.Outcome != UniqueNew {
		t.Fatalf("first enqueue: %+v", res)
	}
	// Attempt 1 fails: due again now, waiting for its retry.
	if jobs, _, err := r.ClaimJobs(ctx, "p#1", 1, time.Minute); err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 10, History: testHistory, EndedClaims: []string{"p#1"}, Acks: []JobAck{
		{ID: "u", Claim: "p#1", Action: AckRetry, DueMS: 1, Type: "t", FirstDueMS: 1, Unique: true}}}); err != nil {
		t.Fatal(err)
	}
	// Attempt 2 is claimed, and its process dies: the lease expires and
	// the job is delivered again.
	if jobs, _, err := r.ClaimJobs(ctx, "p#2", 1, 50*time.Millisecond); err != nil || len(jobs) != 1 || jobs[0].Attempt != 2 {
		t.Fatalf("claim attempt 2: %v, %v", jobs, err)
	}
	time.Sleep(100 * time.Millisecond)
	if back, err := r.Redeliver(ctx, 10, 1<<50); err != nil || len(back) != 1 {
		t.Fatalf("redeliver: %v, %v", back, err)
	}
	time.Sleep(time.Until(start.Add(ttl + 100*time.Millisecond)))
	if res := enqueueOne(t, r, uniqueJob("v", "t|a", time.Hour)); res.Outcome != UniqueDuplicate || res.ID != "u" {
		t.Fatalf("past the ttl, the redelivered job pending: %+v, want a duplicate of u", res)
	}
	if n, err := r.SweepUnique(ctx, 10); err != nil || n != 0 {
		t.Fatalf("the sweep freed %d identities (%v), want none: u holds it", n, err)
	}
	if id, _, _ := r.UniqueHolder(ctx, "t|a"); id != "u" {
		t.Fatalf("holder %q, want u", id)
	}
	// Attempt 3 fails: past the ttl, waiting for a retry, it holds the
	// identity no more.
	if jobs, _, err := r.ClaimJobs(ctx, "p#3", 1, time.Minute); err != nil || len(jobs) != 1 {
		t.Fatalf("claim attempt 3: %v, %v", jobs, err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 10, History: testHistory, EndedClaims: []string{"p#3"}, Acks: []JobAck{
		{ID: "u", Claim: "p#3", Action: AckRetry, DueMS: 1 << 50, Type: "t", FirstDueMS: 1, Unique: true}}}); err != nil {
		t.Fatal(err)
	}
	if res := enqueueOne(t, r, uniqueJob("w", "t|a", time.Hour)); res.Outcome != UniqueNew {
		t.Fatalf("past the ttl, the failed job waiting for its retry: %+v, want a new job", res)
	}
	// u's end deletes its mark.
	if jobs, _, err := r.ClaimJobs(ctx, "p#4", 10, time.Minute); err != nil || len(jobs) != 1 || jobs[0].ID != "w" {
		t.Fatalf("claim w: %v, %v", jobs, err)
	}
	must(t, c.ZAdd(ctx, r.k.Jobs(), redis.Z{Score: 1, Member: "u"}).Err())
	if jobs, _, err := r.ClaimJobs(ctx, "p#5", 10, time.Minute); err != nil || len(jobs) != 1 || jobs[0].ID != "u" {
		t.Fatalf("claim u: %v, %v", jobs, err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 10, History: testHistory, EndedClaims: []string{"p#5"}, Acks: []JobAck{
		{ID: "u", Claim: "p#5", Action: AckDead, Type: "t", DeadEnvelope: `{"task":"t"}`, Unique: true}}}); err != nil {
		t.Fatal(err)
	}
	if n := c.HLen(ctx, r.k.Failed()).Val(); n != 0 {
		t.Errorf("jobs:failed has %d fields after u's end, want none", n)
	}
}
