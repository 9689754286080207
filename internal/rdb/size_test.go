package rdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// Sizes past Lua's unpack bound (about 8,000 values) work in every script
// that takes a list of the caller's size: the variadic commands go in
// chunks, so no size can fail a script after it wrote.
func TestLargeCallsWhole(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	const n = 9000

	enqueued(t, r, 2*n)
	if got := c.ZCard(ctx, r.k.Jobs()).Val(); got != 2*n {
		t.Fatalf("enqueued %d, want %d", got, 2*n)
	}
	if _, _, err := r.ClaimJobs(ctx, "p#0", MaxJobClaim+1, time.Minute); err == nil {
		t.Fatal("a claim over MaxJobClaim was sent")
	}
	jobs, _, err := r.ClaimJobs(ctx, "p#1", MaxJobClaim, time.Minute)
	if err != nil || len(jobs) != MaxJobClaim {
		t.Fatalf("claim of %d: %d jobs, %v", MaxJobClaim, len(jobs), err)
	}
	if owned := c.HLen(ctx, r.k.Owners()).Val(); owned != MaxJobClaim {
		t.Fatalf("%d owners, want %d", owned, MaxJobClaim)
	}
	acks := make([]JobAck, len(jobs))
	for i, j := range jobs {
		acks[i] = JobAck{ID: j.ID, Claim: "p#1", Action: AckDead, Type: "t", DeadEnvelope: `{"task":"t"}`}
	}
	if _, err := r.AckJobs(ctx, AckBatch{Acks: acks, EndedClaims: []string{"p#1"}, DeadLimit: 10, History: testHistory}); err != nil {
		t.Fatalf("ack of %d: %v", len(acks), err)
	}
	if dead, data := c.ZCard(ctx, r.k.Dead()).Val(), c.HLen(ctx, r.k.DeadData()).Val(); dead != 10 || data != 10 {
		t.Errorf("dead letters trimmed to %d entries and %d records, want 10 and 10", dead, data)
	}
	if owned := c.HLen(ctx, r.k.Owners()).Val(); owned != 0 {
		t.Errorf("%d owners left after the acks", owned)
	}

	cands := make([]FireCandidate, n)
	for i := range cands {
		task := fmt.Sprintf("t%d", i)
		c.HSet(ctx, r.k.Task(task), "next_run", 1000, "status", "active", "concurrent", "0")
		cands[i] = candidate(task)
	}
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, cands), n)
	if err != nil {
		t.Fatalf("claim of %d fires: %v", n, err)
	}
	for i, o := range out {
		if !o.Outcome.Won() {
			t.Fatalf("fire %d: %s", i, o.Outcome)
		}
	}
	if got := c.HLen(ctx, r.k.Runs()).Val(); got != n {
		t.Fatalf("%d running, want %d", got, n)
	}
	fins := make([]RunFinish, n)
	for i, f := range cands {
		fins[i] = RunFinish{RunID: f.RunID, Task: f.Task, LockValue: LockValue("p", 1000), Outcome: "ok"}
	}
	if _, err := r.FinishRuns(ctx, testHistory, fins); err != nil {
		t.Fatalf("finish of %d runs: %v", n, err)
	}
	if got := c.HLen(ctx, r.k.Runs()).Val(); got != 0 {
		t.Errorf("%d running after the finish", got)
	}
	if locks, _ := c.Keys(ctx, r.k.Lock("*")).Result(); len(locks) != 0 {
		t.Errorf("%d locks left after the finish", len(locks))
	}
	if got := c.ZCard(ctx, r.k.Alive()).Val(); got != 0 {
		t.Errorf("%d run leases left after the finish", got)
	}
}

// A call that times out while Redis stalls (SIGSTOP) either ran whole or
// not at all once Redis answers again: every job is queued or owned, and
// none lost its record.
func TestStalledClaimIsWholeOrNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	const n = 500
	enqueued(t, r, n)
	srv.Pause()
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err := r.ClaimJobs(tctx, "p#1", n, time.Minute)
	cancel()
	time.Sleep(100 * time.Millisecond)
	srv.Resume()
	if err == nil {
		t.Fatal("the claim returned while Redis was stopped")
	}
	c2 := srv.Client(t) // the first client's connection may hold the late reply
	queued, owned := c2.ZCard(ctx, r.k.Jobs()).Val(), c2.HLen(ctx, r.k.Owners()).Val()
	if queued+owned != n || (queued != n && owned != n) {
		t.Errorf("after the stall %d queued and %d owned, want all %d in one of them", queued, owned, n)
	}
	if data := c2.HLen(ctx, r.k.JobData()).Val(); data != n {
		t.Errorf("%d job records, want %d", data, n)
	}
}
