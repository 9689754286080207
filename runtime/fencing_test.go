package runtime

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestStaleClaimIsFenced stops a process, in effect, between reading a due
// task and claiming it: it prepares its claim of an instant, another
// process fires that instant meanwhile (and, for the second claim, several
// more), and only then does the stopped process send its claim. The
// compare-and-set on next_run refuses it: the stale process starts nothing,
// and every instant fires once.
func TestStaleClaimIsFenced(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	var fires fireLog
	behave(t, name, func(ctx context.Context) error { fires.add(ctx); return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	_, stopLive := runScheduler(t, rdb, reg)

	// The stale process: a scheduler whose loop never runs; the test makes
	// its claims by hand.
	stale, err := NewScheduler(rdb, reg, WithLogger(testLogger()), WithProcessID("stale"))
	if err != nil {
		t.Fatal(err)
	}
	stale.runCtx = context.Background()
	must(t, stale.clock.Sync(ctx, 3))

	for _, hold := range []time.Duration{0, 3 * time.Second} {
		waitFor(t, 5*time.Second, "a fire", func() bool { return len(fires.snapshot()) > 0 })
		next, err := strconv.ParseInt(hget(t, rdb, name, "next_run"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		at := time.UnixMilli(next)
		prepared, err := stale.disp.prepare(ctx, at, []string{name}, nil)
		if err != nil || len(prepared) != 1 || !prepared[0].at.Equal(at) {
			t.Fatalf("prepare: %v, %v; want a claim of %v", prepared, err, at)
		}
		// The live process fires the instant (and, while the stale one
		// holds its claim, the ones after it).
		waitFor(t, 5*time.Second, "the live process to fire "+at.Format(time.TimeOnly), func() bool {
			for _, f := range fires.snapshot() {
				if f.fire.Equal(at) {
					return true
				}
			}
			return false
		})
		time.Sleep(hold)
		started, _, _, err := stale.disp.advance(ctx, prepared, len(prepared))
		if err != nil {
			t.Fatal(err)
		}
		if started != 0 {
			t.Errorf("a claim of %v held for %v started %d runs after the instant fired elsewhere", at, hold, started)
		}
	}
	time.Sleep(200 * time.Millisecond)
	stopLive()
	all := fires.snapshot()
	if d := duplicates(all); len(d) > 0 {
		t.Errorf("instants fired more than once: %v", d)
	}
	for _, f := range all {
		if f.process == "stale" {
			t.Errorf("the stale process fired %v", f.fire)
		}
	}
	if oc := historyOutcomes(t, stale, name); oc[OutcomeSkipped] > 0 || oc[OutcomeFailed] > 0 {
		t.Errorf("history %v: a refused claim must leave no record", oc)
	}
}
