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

// A dead unique job retried from the dead letters takes its identity
// again when it is free, so a duplicate is refused while it is pending
// again; when another job holds it, the retried job runs without it.
func TestRetryDeadUniqueJob(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	const env, alone = `{"task":"t","unique":"t|a"}`, `{"task":"t"}`
	enqueueOne(t, r, uniqueJob("u", "t|a", 100*time.Millisecond))
	if jobs, _, err := r.ClaimJobs(ctx, "p#1", 1, time.Minute); err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 10, History: testHistory, EndedClaims: []string{"p#1"}, Acks: []JobAck{
		{ID: "u", Claim: "p#1", Action: AckDead, Type: "t", DeadEnvelope: `{"task":"t","unique":"t|a","error":"x"}`, Unique: true}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if n, err := r.SweepUnique(ctx, 10); err != nil || n != 1 {
		t.Fatalf("the sweep freed %d (%v), want the dead job's identity", n, err)
	}

	// Free: u takes it again.
	if res, err := r.RetryDead(ctx, "u", env, "t|a", alone); err != nil || res != RetriedDead {
		t.Fatalf("retry u: %d, %v; want RetriedDead", res, err)
	}
	if id, _, _ := r.UniqueHolder(ctx, "t|a"); id != "u" {
		t.Fatalf("holder %q after the retry, want u", id)
	}
	if res := enqueueOne(t, r, uniqueJob("v", "t|a", time.Hour)); res.Outcome != UniqueDuplicate || res.ID != "u" {
		t.Fatalf("while the retried job is pending: %+v, want a duplicate of u", res)
	}
	if got := c.HGet(ctx, r.k.JobData(), "u").Val(); got != env {
		t.Errorf("u's envelope %s, want %s", got, env)
	}
	// It ends: the ttl is not counted again, the identity is free.
	if jobs, _, err := r.ClaimJobs(ctx, "p#2", 1, time.Minute); err != nil || len(jobs) != 1 || jobs[0].Attempt != 1 {
		t.Fatalf("claim the retried u: %v, %v", jobs, err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 10, History: testHistory, EndedClaims: []string{"p#2"}, Acks: []JobAck{
		{ID: "u", Claim: "p#2", Action: AckOK, Type: "t", Unique: true}}}); err != nil {
		t.Fatal(err)
	}
	if res := enqueueOne(t, r, uniqueJob("w", "t|a", time.Hour)); res.Outcome != UniqueNew {
		t.Fatalf("after the retried job ended: %+v, want a new job", res)
	}

	// Held by w: the dead job x runs without the identity.
	must(t, c.ZAdd(ctx, r.k.Dead(), redis.Z{Score: 1, Member: "x"}).Err())
	must(t, c.HSet(ctx, r.k.DeadData(), "x", `{"task":"t","unique":"t|a","error":"x"}`).Err())
	if res, err := r.RetryDead(ctx, "x", env, "t|a", alone); err != nil || res != RetriedWithoutIdentity {
		t.Fatalf("retry x: %d, %v; want RetriedWithoutIdentity", res, err)
	}
	if id, _, _ := r.UniqueHolder(ctx, "t|a"); id != "w" {
		t.Errorf("holder %q, want w still", id)
	}
	if got := c.HGet(ctx, r.k.JobData(), "x").Val(); got != alone {
		t.Errorf("x's envelope %s, want %s (without the identity)", got, alone)
	}
	if s := c.ZScore(ctx, r.k.Jobs(), "x"); s.Err() != nil {
		t.Errorf("x not queued: %v", s.Err())
	}
	if res := enqueueOne(t, r, uniqueJob("y", "t|a", time.Hour)); res.Outcome != UniqueDuplicate || res.ID != "w" {
		t.Errorf("enqueue after x's retry: %+v, want a duplicate of w", res)
	}
	if res, err := r.RetryDead(ctx, "x", env, "t|a", alone); err != nil || res != RetryDeadNotFound {
		t.Errorf("retry x again: %d, %v; want RetryDeadNotFound", res, err)
	}
}
