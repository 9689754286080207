package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// ctxWaiter waits for its ctx to end (or 10 s): a run that only a timeout
// ends.
type ctxWaiter struct{}

func (*ctxWaiter) Handle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return nil
	}
}

// TestRunTimeTaskTimeout: a run-time task's own Timeout bounds its runs
// (not its type's), and a task without one takes its type's.
func TestRunTimeTaskTimeout(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t, TaskConfig{Name: "waiter", Timeout: time.Minute, New: func() TaskInterface { return new(ctxWaiter) }})
	runScheduler(t, rc, reg)
	c := NewClient(rc, reg)
	if err := c.SetTask(ctx, TaskSpec{Key: "short", Type: "waiter", Expression: "every:1s", Timeout: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTask(ctx, TaskSpec{Key: "long", Type: "waiter", Expression: "every:1s"}); err != nil {
		t.Fatal(err)
	}
	in := NewInspector(rc)
	var rec Record
	waitFor(t, 5*time.Second, "a run of the short task to end", func() bool {
		recs, err := in.History(ctx, "short", 1)
		if err != nil || len(recs) == 0 {
			return false
		}
		rec = recs[0]
		return true
	})
	if rec.Outcome != OutcomeFailed || !strings.Contains(rec.Error, "timeout 200ms exceeded") {
		t.Errorf("short task's run: %s %q, want failed by its own timeout of 200ms", rec.Outcome, rec.Error)
	}
	if d := rec.End.Sub(rec.Start); d > 5*time.Second {
		t.Errorf("short task's run took %v", d)
	}
	if recs, _ := in.History(ctx, "long", 1); len(recs) != 0 {
		t.Errorf("the long task (its type's timeout of 1m) ended a run: %+v", recs[0])
	}
}

// ctxIgnorer runs 600 ms whatever its ctx says: a handler past its
// timeout.
type ctxIgnorer struct{}

func (*ctxIgnorer) Handle(context.Context) error {
	time.Sleep(600 * time.Millisecond)
	return nil
}

// TestRunPastAShortTimeoutIsNotAbandoned: a run still going past a timeout
// shorter than a heartbeat keeps its lease (its field of runs, which has
// no TTL, until its finish; an older release's lease key lasted its
// timeout plus two heartbeats for this), so the master's reap does not
// record it abandoned while its process lives.
func TestRunPastAShortTimeoutIsNotAbandoned(t *testing.T) {
	t.Parallel()
	rc := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t, TaskConfig{Name: "overrun", Expression: "every:1s", Timeout: 100 * time.Millisecond,
		New: func() TaskInterface { return new(ctxIgnorer) }})
	runScheduler(t, rc, reg, WithProcessTTL(2*time.Second)) // a heartbeat every 400 ms, a reap each
	in := NewInspector(rc)
	var recs []Record
	waitFor(t, 10*time.Second, "4 runs of overrun", func() bool {
		var err error
		recs, err = in.History(ctx, "overrun", 20)
		return err == nil && len(recs) >= 4
	})
	for _, r := range recs {
		if r.Outcome == OutcomeAbandoned {
			t.Errorf("a run past its 100ms timeout was recorded abandoned with its process alive: %+v", r)
		}
	}
}
