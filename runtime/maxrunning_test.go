package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// Five run-time tasks of one concurrent type with max_running=2, every
// second, each run 2.5 s long, on three schedulers: never more than 2 of
// them run at once cluster-wide; the other instants are skipped with
// SkipMaxRunning, counted in the task hashes and recorded in the history.
// Five tasks of an uncapped concurrent type beside them all run, overlapped.
func TestMaxRunningCapsScheduledFires(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	capType, freeType := t.Name()+"/capped", t.Name()+"/free"
	var capped, free flights
	sleep := func(c *flights) func(context.Context) error {
		return func(ctx context.Context) error {
			c.enter()
			defer c.leave()
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-ctx.Done():
			}
			return nil
		}
	}
	var keys []string
	for i := range 5 {
		k := fmt.Sprintf("%s/c%d", t.Name(), i)
		keys = append(keys, k)
		behave(t, k, sleep(&capped))
		behave(t, fmt.Sprintf("%s/f%d", t.Name(), i), sleep(&free))
	}
	reg := testRegistry(t,
		TaskConfig{Name: capType, Concurrent: true, MaxRunning: 2, Timeout: 10 * time.Second, New: probeNew(0)},
		TaskConfig{Name: freeType, Concurrent: true, Timeout: 10 * time.Second, New: probeNew(1)})
	var mu sync.Mutex
	reasons := map[SkipReason]int{}
	hooks := WithHooks(Hooks{Skipped: func(_ context.Context, run RunInfo, reason SkipReason) {
		mu.Lock()
		reasons[reason]++
		mu.Unlock()
	}})
	for range 3 {
		runScheduler(t, rdb, reg, hooks)
	}
	c := NewClient(rdb, reg)
	for i := range 5 {
		if err := c.SetTask(ctx, TaskSpec{Key: keys[i], Type: capType, Expression: "every:1s", Concurrent: true}); err != nil {
			t.Fatal(err)
		}
		if err := c.SetTask(ctx, TaskSpec{Key: fmt.Sprintf("%s/f%d", t.Name(), i), Type: freeType, Expression: "every:1s", Concurrent: true}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Second)
	if m := capped.max.Load(); m != 2 {
		t.Errorf("capped type: at most %d runs at once, want 2 (max_running)", m)
	}
	if m := free.max.Load(); m < 10 {
		t.Errorf("uncapped type: at most %d runs at once, want >= 10 (5 tasks every second, 2.5 s each)", m)
	}
	mu.Lock()
	n := reasons[SkipMaxRunning]
	mu.Unlock()
	if n < 10 {
		t.Errorf("%d fires skipped with %q, want >= 10 (5 per second, 2 slots)", n, SkipMaxRunning)
	}
	in := NewInspector(rdb)
	var skips int64
	seen := false
	for _, k := range keys {
		info, err := in.Task(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		skips += info.Skips
		recs, err := in.History(ctx, k, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Outcome == OutcomeSkipped && strings.Contains(r.Error, "max_running") {
				seen = true
			}
		}
	}
	if skips < 10 {
		t.Errorf("task hashes count %d skips, want >= 10", skips)
	}
	if !seen {
		t.Error("no history record of a fire skipped for max_running")
	}
	for i := range 5 {
		if s := hget(t, rdb, fmt.Sprintf("%s/f%d", t.Name(), i), "skips"); s != "" && s != "0" {
			t.Errorf("uncapped task f%d: %s skips, want none", i, s)
		}
	}
}

// A run-time task's own max_running (TaskSpec.MaxRunning) caps its runs
// apart from its type's: with cap 1, every:1s and 2.5 s runs on two
// schedulers, it never overlaps itself, while a task of the same
// (uncapped) type without a cap overlaps itself.
func TestTaskSpecMaxRunningCapsTheTask(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	typ := t.Name() + "/type"
	var own, other flights
	sleep := func(c *flights) func(context.Context) error {
		return func(ctx context.Context) error {
			c.enter()
			defer c.leave()
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-ctx.Done():
			}
			return nil
		}
	}
	capped, free := t.Name()+"/capped", t.Name()+"/free"
	behave(t, capped, sleep(&own))
	behave(t, free, sleep(&other))
	reg := testRegistry(t, TaskConfig{Name: typ, Concurrent: true, Timeout: 10 * time.Second, New: probeNew(0)})
	for range 2 {
		runScheduler(t, rdb, reg)
	}
	c := NewClient(rdb, reg)
	if err := c.SetTask(ctx, TaskSpec{Key: capped, Type: typ, Expression: "every:1s", Concurrent: true, MaxRunning: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTask(ctx, TaskSpec{Key: free, Type: typ, Expression: "every:1s", Concurrent: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4500 * time.Millisecond)
	if m := own.max.Load(); m != 1 {
		t.Errorf("task with max_running 1: at most %d runs at once, want 1", m)
	}
	if m := other.max.Load(); m < 2 {
		t.Errorf("task of the same type without a cap: at most %d runs at once, want >= 2", m)
	}
	if s := hget(t, rdb, capped, "skips"); s == "" || s == "0" {
		t.Errorf("capped task: skips %q, want its overlapping instants skipped", s)
	}
}

// A foreign value in the fire slot key of a run-time task with a cap of
// its own (fireslots:task:<key>: its name comes with the task, so no check
// at start knows it) skips no fire and fails no claim; the claiming
// process moves it aside, and the cap holds from then on.
func TestForeignTaskFireSlotKeyIsMovedAside(t *testing.T) {
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	typ := t.Name() + "/type"
	var own flights
	capped := t.Name() + "/capped"
	behave(t, capped, func(ctx context.Context) error {
		own.enter()
		defer own.leave()
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	})
	k := newKeys("crontab")
	bad := k.FireSlots(rdb.FireSlotsOfTask(capped))
	must(t, rc.Set(ctx, bad, "an operator's", 0).Err())
	reg := testRegistry(t, TaskConfig{Name: typ, Concurrent: true, Timeout: 10 * time.Second, New: probeNew(0)})
	logs, logger := newLogCapture()
	runScheduler(t, rc, reg, WithLogger(logger))
	if err := NewClient(rc, reg).SetTask(ctx, TaskSpec{Key: capped, Type: typ, Expression: "every:1s", Concurrent: true, MaxRunning: 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	logs.expectLog(t, "foreign value moved aside (quarantine)", bad, "type=string", "want=zset")
	if m := own.max.Load(); m != 1 {
		t.Errorf("task with max_running 1: at most %d runs at once, want 1", m)
	}
	if s := hget(t, rc, capped, "skips"); s == "" || s == "0" {
		t.Errorf("capped task: skips %q, want its overlapping instants skipped", s)
	}
}
