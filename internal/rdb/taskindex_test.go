package rdb

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// indexFixture writes, through the engine's own scripts, a declared task,
// n queued run-time tasks, a disabled one and one with no instant left,
// and returns every task key, sorted.
func indexFixture(t *testing.T, r *RDB, n int) []string {
	t.Helper()
	ctx := context.Background()
	if _, _, err := r.Register(ctx, 500, []TaskDecl{{Key: "declared", Type: "a", Expression: "every:1s", Status: "active", NextMS: 1000}}); err != nil {
		t.Fatal(err)
	}
	specs := []TaskDecl{
		{Key: "off", Type: "a", Expression: "every:1s", NextMS: 1000, Status: "disabled"},
		{Key: "ended", Type: "a", Expression: "at:1", NextMS: 0},
	}
	for i := range n {
		specs = append(specs, TaskDecl{Key: fmt.Sprintf("rt%04d", i), Type: "a", Expression: "every:1h", NextMS: 5000})
	}
	if _, err := r.SetTasks(ctx, 500, specs, 0); err != nil {
		t.Fatal(err)
	}
	keys := []string{"declared"}
	for _, s := range specs {
		keys = append(keys, s.Key)
	}
	slices.Sort(keys)
	return keys
}

// walk follows ScanTaskNames from 0 to 0 and returns every key it
// listed, with repeats, and how many steps it took.
func walk(t *testing.T, r *RDB, match string, count int64) ([]string, int) {
	t.Helper()
	var out []string
	steps := 0
	for cursor := uint64(0); ; {
		names, next, err := r.ScanTaskNames(context.Background(), cursor, match, count)
		if err != nil {
			t.Fatal(err)
		}
		steps++
		out = append(out, names...)
		if cursor = next; cursor == 0 || steps > 10000 {
			return out, steps
		}
	}
}

// A run-time task is in the queue or the unqueued set, never in the tasks
// set, and the walk of the three lists every task exactly once: the
// declared task (tasks set and queue) once, the disabled and the ended
// ones from the unqueued set.
func TestScanTaskNamesListsEveryTaskOnce(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	want := indexFixture(t, r, 300) // past a listpack: the scans take many steps

	if got := c.SMembers(ctx, r.k.Tasks()).Val(); !slices.Equal(got, []string{"declared"}) {
		t.Errorf("tasks set %v, want only the declared task", got)
	}
	if got := sorted(c.SMembers(ctx, r.k.Unqueued()).Val()); !slices.Equal(got, []string{"ended", "off"}) {
		t.Errorf("unqueued set %v, want the disabled task and the one with no instant", got)
	}
	for _, count := range []int64{1, 10, 1000} {
		got, steps := walk(t, r, "", count)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("COUNT %d: listed %d keys (%d steps), want each of the %d once", count, len(got), steps, len(want))
		}
	}
	got, _ := walk(t, r, "rt00[0-4]*", 20)
	slices.Sort(got)
	if len(got) != 50 || got[0] != "rt0000" || got[49] != "rt0049" {
		t.Errorf("MATCH rt00[0-4]*: %d keys %v, want rt0000 to rt0049", len(got), got)
	}
	names, err := r.TaskNames(ctx)
	if names = sorted(names); err != nil || !slices.Equal(names, want) {
		t.Errorf("TaskNames: %d keys, %v; want the %d", len(names), err, len(want))
	}
	counts, err := r.ReadCounts(ctx, 0, 0)
	if err != nil || counts.Tasks != int64(len(want)) {
		t.Errorf("Counts.Tasks = %d (%v), want %d", counts.Tasks, err, len(want))
	}
	if _, _, err := r.ScanTaskNames(ctx, 3<<scanPhaseShift, "", 10); err == nil {
		t.Error("a cursor naming no collection was accepted")
	}
}

// An at: task leaves the queue for the unqueued set when its instant is
// claimed (so it is still listed while it runs), and its finish deletes it
// from every index.
func TestOnceTaskIsListedUntilItsFinish(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	if _, err := r.SetTask(ctx, 500, TaskDecl{Key: "once", Type: "a", Expression: "at:1", NextMS: 1000}); err != nil {
		t.Fatal(err)
	}
	cand := candidate("once")
	cand.NextMS = 0
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{cand}), 1)
	if err != nil || !out[0].Outcome.Won() {
		t.Fatalf("claim: %v, %v", out, err)
	}
	if names, _ := r.TaskNames(ctx); !slices.Equal(names, []string{"once"}) {
		t.Errorf("while it runs the task list is %v, want [once]", names)
	}
	if !c.SIsMember(ctx, r.k.Unqueued(), "once").Val() {
		t.Error("the claimed at: task is not in the unqueued set")
	}
	if _, err := r.FinishRuns(ctx, testHistory, []RunFinish{{RunID: cand.RunID, Task: "once", LockValue: LockValue("p", 1000),
		Outcome: "ok", Once: true}}); err != nil {
		t.Fatal(err)
	}
	if c.Exists(ctx, r.k.Task("once"), r.k.Unqueued()).Val() != 0 || c.ZScore(ctx, r.k.Queue(), "once").Err() != redis.Nil {
		t.Error("the finished at: task left its hash or an index entry")
	}
}

// The index sweep puts a task hash that no index lists (a lost queue
// entry) in the unqueued set and counts it, leaves indexed tasks and a
// key that is no hash alone, and finds nothing on a second pass.
func TestSweepTaskIndex(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	indexFixture(t, r, 300)
	must(t, c.ZRem(ctx, r.k.Queue(), "rt0007", "declared").Err())
	must(t, c.Set(ctx, r.k.Task("foreign"), "a string", 0).Err())
	var added []string
	if err := allPages(func(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
		next, ids, err := r.SweepTaskIndex(ctx, cursor, count)
		added = append(added, ids...)
		return next, ids, err
	}); err != nil {
		t.Fatal(err)
	}
	if added = sorted(added); !slices.Equal(added, []string{"declared", "rt0007"}) {
		t.Errorf("the sweep indexed %v, want the two tasks whose queue entry was lost", added)
	}
	if n := c.HGet(ctx, r.k.Sweep(), RepairIndex).Val(); n != "2" {
		t.Errorf("sweep counter %s = %q, want 2", RepairIndex, n)
	}
	if got := sorted(c.SMembers(ctx, r.k.Unqueued()).Val()); !slices.Equal(got, []string{"declared", "ended", "off", "rt0007"}) {
		t.Errorf("unqueued set %v", got)
	}
	if err := allPages(func(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
		next, ids, err := r.SweepTaskIndex(ctx, cursor, count)
		if len(ids) > 0 {
			t.Errorf("a second pass indexed %v", ids)
		}
		return next, ids, err
	}); err != nil {
		t.Fatal(err)
	}
}

// The tasks set an older release kept of every task loses its run-time
// tasks once the queue or the unqueued set lists them; a declared task,
// and a run-time task in no other index, stay.
func TestSweepTrackedRunTime(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	keys := indexFixture(t, r, 300)
	for _, k := range keys {
		must(t, c.SAdd(ctx, r.k.Tasks(), k).Err()) // as an older release listed them
	}
	must(t, c.HSet(ctx, r.k.Task("stray"), "type", "a", "expression", "every:1s", "next_run", 1000).Err())
	must(t, c.SAdd(ctx, r.k.Tasks(), "stray").Err()) // in no other index
	var out []string
	if err := allPages(func(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
		next, ids, err := r.SweepTrackedRunTime(ctx, cursor, count)
		out = append(out, ids...)
		return next, ids, err
	}); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(keys)-1 || slices.Contains(out, "declared") {
		t.Errorf("took %d keys out of the tasks set, want the %d run-time tasks", len(out), len(keys)-1)
	}
	if got := sorted(c.SMembers(ctx, r.k.Tasks()).Val()); !slices.Equal(got, []string{"declared", "stray"}) {
		t.Errorf("tasks set %v, want the declared task and the one in no other index", got)
	}
	if names, _ := r.TaskNames(ctx); len(names) != len(keys)+1 {
		t.Errorf("after the migration %d tasks are listed, want %d", len(names), len(keys)+1)
	}
}

// sorted returns s sorted in place.
func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// A walk ends with the step that ends the last collection holding keys:
// with no task unqueued, the queue's last step returns cursor 0, so that
// a caller's last page is not an empty one.
func TestScanTaskNamesEndsWithTheLastKeys(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	if _, err := r.SetTasks(ctx, 500, []TaskDecl{{Key: "a", Type: "a", Expression: "every:1h", NextMS: 5000},
		{Key: "b", Type: "a", Expression: "every:1h", NextMS: 5000}}, 0); err != nil {
		t.Fatal(err)
	}
	names, next, err := r.ScanTaskNames(ctx, 0, "", 100)
	if err != nil || next != 0 || len(sorted(names)) != 2 {
		t.Errorf("one step: %v, cursor %d, %v; want [a b] and cursor 0", names, next, err)
	}
	if _, err := r.SetTask(ctx, 500, TaskDecl{Key: "off", Type: "a", Expression: "every:1h", NextMS: 5000, Status: "disabled"}); err != nil {
		t.Fatal(err)
	}
	if names, next, err = r.ScanTaskNames(ctx, 0, "", 100); err != nil || next == 0 {
		t.Errorf("with a task unqueued the queue's step ended the walk: %v, cursor %d, %v", names, next, err)
	}
}
