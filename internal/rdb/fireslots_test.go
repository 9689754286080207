package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// concurrentTasks registers n concurrent tasks c0, c1, ... of type "c",
// all due at 1000.
func concurrentTasks(t *testing.T, r *RDB, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		m := fmt.Sprintf("c%d", i)
		must(t, r.c.HSet(ctx, r.k.Task(m), "next_run", 1000, "status", "active", "concurrent", "1", "type", "c").Err())
		must(t, r.c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: 1000, Member: m}).Err())
	}
}

// capped is task's candidate for instant 1000 with type "c" capped at max.
func capped(task string, max int) FireCandidate {
	f := candidate(task)
	f.Type, f.MaxRunning = "c", max
	return f
}

func outcomes(res []FireResult) string {
	s := make([]string, len(res))
	for i, r := range res {
		s[i] = string(r.Outcome)
	}
	return strings.Join(s, ",")
}

// The fires of one capped type count against each other in one claim, and
// against the runs in progress in the fire slot key; a capped fire is
// skipped and recorded; the slots of runs whose run lease expired free
// only while the pulse is steady; a finish frees its slot, a renewal
// renews it.
func TestClaimFiresMaxRunning(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	concurrentTasks(t, r, 3)
	res, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases,
		[]FireCandidate{capped("c0", 2), capped("c1", 2), capped("c2", 2)}), 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(res); got != "fire,fire,capped" {
		t.Fatalf("outcomes %s, want fire,fire,capped", got)
	}
	if n := c.ZCard(ctx, r.k.FireSlots("c")).Val(); n != 2 {
		t.Fatalf("fire slots: %d members, want 2", n)
	}
	if s := c.HGet(ctx, r.k.Task("c2"), "skips").Val(); s != "1" {
		t.Errorf("c2 skips %q, want 1", s)
	}
	if h := c.LIndex(ctx, r.k.History("c2"), 0).Val(); !strings.Contains(h, `"outcome":"skipped"`) || !strings.Contains(h, "max_running") {
		t.Errorf("c2 history %q: want a skipped record naming max_running", h)
	}
	if nr := c.HGet(ctx, r.k.Task("c2"), "next_run").Val(); nr != "2000" {
		t.Errorf("c2 next_run %q, want 2000 (the instant is consumed)", nr)
	}

	// The next instant: both slots still held by live runs.
	for _, m := range []string{"c0", "c1", "c2"} {
		must(t, c.HSet(ctx, r.k.Task(m), "next_run", 2000).Err())
	}
	f := next("c2")
	f.Type, f.MaxRunning = "c", 2
	if res, _ := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{f}), 1); res[0].Outcome != FireCapped {
		t.Fatalf("with both slots held: %s, want capped", res[0].Outcome)
	}

	// One holder's run lease expired: its slot is free only when the pulse
	// is steady (not after a stall).
	now := c.Time(ctx).Val().UnixMilli()
	must(t, c.ZAdd(ctx, r.k.FireSlots("c"), redis.Z{Score: float64(now - 100), Member: RunID("c0", 1000)}).Err())
	f.FireMS, f.NextMS = 2000, 3000
	must(t, c.HSet(ctx, r.k.Task("c2"), "next_run", 2000).Err())
	must(t, c.HSet(ctx, r.k.Pulse(), "last", now, "since", now-100).Err()) // not steady for a TTL
	if res, _ := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{f}), 1); res[0].Outcome != FireCapped {
		t.Fatalf("expired slot, pulse not steady: %s, want capped", res[0].Outcome)
	}
	must(t, c.HSet(ctx, r.k.Task("c2"), "next_run", 2000).Err())
	must(t, c.HSet(ctx, r.k.Pulse(), "last", now, "since", now-60_000).Err())
	if res, _ := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{f}), 1); !res[0].Outcome.Won() {
		t.Fatalf("expired slot, pulse steady: %s, want the fire won", res[0].Outcome)
	}
	if c.ZScore(ctx, r.k.FireSlots("c"), RunID("c0", 1000)).Err() != redis.Nil {
		t.Error("the expired slot was not pruned")
	}

	// A renewal renews the slot; a finish frees it.
	c1 := RunID("c1", 1000)
	must(t, c.ZAdd(ctx, r.k.FireSlots("c"), redis.Z{Score: 1, Member: c1}).Err())
	if _, err := r.RenewRunLeases(ctx, testLeases, []string{c1}, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	if s := c.ZScore(ctx, r.k.FireSlots("c"), c1).Val(); s < float64(now) {
		t.Errorf("renewed slot deadline %v, want after %d", s, now)
	}
	if _, err := r.FinishRuns(ctx, testHistory, []RunFinish{{RunID: c1, Task: "c1", Outcome: "ok", Slots: "c"}}); err != nil {
		t.Fatal(err)
	}
	if c.ZScore(ctx, r.k.FireSlots("c"), c1).Err() != redis.Nil {
		t.Error("the finish did not free its slot")
	}
}

// An uncapped candidate (MaxRunning 0) touches no fire slot key.
func TestClaimFiresUncappedTouchesNoSlots(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	concurrentTasks(t, r, 3)
	cl := r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("c0"), candidate("c1"), candidate("c2")})
	for _, k := range cl.keys {
		if strings.Contains(k, "fireslots") {
			t.Fatalf("uncapped claim declares %s", k)
		}
	}
	res, err := r.ClaimFires(ctx, cl, 3)
	if err != nil || outcomes(res) != "fire,fire,fire" {
		t.Fatalf("%s, %v", outcomes(res), err)
	}
}

// A non-concurrent capped task whose lock is held is skipped as locked
// (the lock's way first); with its lock free and the type full, capped,
// and the lock is not left taken.
func TestClaimFiresCappedLockedTask(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	running(t, r) // a holds its lock
	must(t, c.HSet(ctx, r.k.Task("a"), "next_run", 2000).Err())
	f := next("a")
	f.Type, f.MaxRunning = "a", 1
	if res, _ := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{f}), 1); res[0].Outcome != FireLocked {
		t.Fatalf("lock held: %s, want locked", res[0].Outcome)
	}
	// The lock free but another run of the type in a slot.
	must(t, c.Del(ctx, r.k.Lock("a")).Err())
	must(t, c.ZAdd(ctx, r.k.FireSlots("a"), redis.Z{Score: 1 << 50, Member: "other@1"}).Err())
	must(t, c.HSet(ctx, r.k.Task("a"), "next_run", 2000).Err())
	if res, _ := r.ClaimFires(ctx, r.NewFireClaim("q", testHistory, testLeases, []FireCandidate{f}), 1); res[0].Outcome != FireCapped {
		t.Fatalf("type full: %s, want capped", res[0].Outcome)
	}
	if c.Exists(ctx, r.k.Lock("a")).Val() != 0 {
		t.Error("a capped fire left the lock taken")
	}
}

// FireSlotsRunning counts a slot group's runs whose run lease has not
// passed, and writes nothing.
func TestFireSlotsRunning(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	concurrentTasks(t, r, 3)
	if _, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases,
		[]FireCandidate{capped("c0", 5), capped("c1", 5)}), 3); err != nil {
		t.Fatal(err)
	}
	now := c.Time(ctx).Val().UnixMilli()
	must(t, c.ZAdd(ctx, r.k.FireSlots("c"), redis.Z{Score: float64(now - 100), Member: "dead@1"}).Err())
	if n, err := r.FireSlotsRunning(ctx, "c", now); err != nil || n != 2 {
		t.Errorf("FireSlotsRunning(c): %d, %v; want 2 (the expired run not counted)", n, err)
	}
	if n := c.ZCard(ctx, r.k.FireSlots("c")).Val(); n != 3 {
		t.Errorf("fire slots: %d members after the read, want 3: it writes nothing", n)
	}
	if n, err := r.FireSlotsRunning(ctx, FireSlotsOfTask("other"), now); err != nil || n != 0 {
		t.Errorf("FireSlotsRunning of an empty group: %d, %v; want 0", n, err)
	}
}

// A fire slot key holding a foreign value (here a run-time task's own
// group, task:<key>, whose name no check at start knows) fails no claim
// and skips no fire: the cap is off for the call, nothing is written to
// the key, and the result names it for the caller to move aside.
func TestClaimFiresForeignSlotKey(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	concurrentTasks(t, r, 3)
	bad := r.k.FireSlots(FireSlotsOfTask("c0"))
	must(t, c.Set(ctx, bad, "an operator's", 0).Err())
	own := capped("c0", 1)
	own.Type = FireSlotsOfTask("c0")
	res, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases,
		[]FireCandidate{capped("c1", 1), own, capped("c2", 1)}), 3)
	if err != nil {
		t.Fatalf("claim with a foreign fire slot key: %v", err)
	}
	if got := outcomes(res); got != "fire,fire,capped" {
		t.Fatalf("outcomes %s, want fire,fire,capped", got)
	}
	if res[1].ForeignSlots != bad || res[0].ForeignSlots != "" || res[2].ForeignSlots != "" {
		t.Errorf("foreign slots %q %q %q, want only the second: %s", res[0].ForeignSlots, res[1].ForeignSlots, res[2].ForeignSlots, bad)
	}
	if v := c.Get(ctx, bad).Val(); v != "an operator's" {
		t.Errorf("the foreign value is %q: the claim wrote to it", v)
	}
}
