package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestUnqueuedSet: every way a task leaves the queue as disabled puts it in
// the unqueued set (the claim of a task disabled with a plain HSET,
// SetStatus, Register and SetTask with status disabled), and queueing it
// again or removing it takes it out.
func TestUnqueuedSet(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	in := func(key string) bool {
		ok, err := c.SIsMember(ctx, r.k.Unqueued(), key).Result()
		must(t, err)
		return ok
	}
	// The claim: "a" disabled by an operator's HSET, then due.
	declared(t, r)
	must(t, c.HSet(ctx, r.k.Task("a"), "status", "disabled").Err())
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a")}), 1)
	if err != nil || out[0].Outcome != FireDisabled {
		t.Fatalf("claim: %v, %v; want disabled", out, err)
	}
	if !in("a") {
		t.Error("claim of a disabled task: not in the unqueued set")
	}
	must(t, c.HSet(ctx, r.k.Task("a"), "status", "active").Err())
	if ok, err := r.Requeue(ctx, "a", 5000); err != nil || !ok {
		t.Fatalf("requeue: %v, %v", ok, err)
	}
	if in("a") {
		t.Error("requeued: still in the unqueued set")
	}
	// SetStatus.
	if _, err := r.SetStatus(ctx, "a", "disabled"); err != nil {
		t.Fatal(err)
	}
	if !in("a") {
		t.Error("SetStatus disabled: not in the unqueued set")
	}
	// Register again with status active (an operator's status is kept, so
	// write it first): queued, out of the set.
	must(t, c.HSet(ctx, r.k.Task("a"), "status", "active").Err())
	declared(t, r)
	if in("a") {
		t.Error("registered and queued: still in the unqueued set")
	}
	// SetTask with status disabled, then RemoveTask.
	now := time.Now().UnixMilli()
	dyn := TaskDecl{Key: "d", Class: "D", Type: "d", Expression: "every:1h", TZ: "UTC", Status: "disabled",
		NextMS: now + 3600_000, Timeout: time.Minute, Misfire: "once"}
	if _, err := r.SetTask(ctx, now, dyn); err != nil {
		t.Fatal(err)
	}
	if !in("d") {
		t.Error("SetTask disabled: not in the unqueued set")
	}
	if n, err := r.RemoveTask(ctx, "d"); err != nil || n != 1 {
		t.Fatalf("remove: %d, %v", n, err)
	}
	if in("d") {
		t.Error("removed: still in the unqueued set")
	}
}
