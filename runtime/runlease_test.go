package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestRedisPauseDuringLongRunLosesNothing stops Redis (SIGSTOP) for 2.5 s,
// longer than the run lease (1.5 s, so every run lease is past its deadline
// when Redis answers again), during a 5 s run of a non-concurrent every:1s
// task, three times, under two schedulers: twice 20 ms before an instant,
// so that the claims of the instant are queued before the holder's next
// renewal and Redis runs one of them first, and once 300 ms into the run.
// The pulse stopped with Redis, so no claim takes the lock over: no run overlaps another, none is recorded abandoned, the
// Abandoned hook is never called, and each held run completes. The
// process TTL is 5 s (the default), so the master's reap, which waits for
// a process TTL of steady contact after a stall anyway, plays no part.
func TestRedisPauseDuringLongRunLosesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	name := t.Name()
	spans := newSpanLog()
	behave(t, name, func(ctx context.Context) error { return spans.run(ctx, 5*time.Second) })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", Timeout: time.Minute, New: probeNew(0)})
	logs, logger := newLogCapture()
	var mu sync.Mutex
	var abandoned []RunInfo
	hooks := Hooks{Abandoned: func(_ context.Context, run RunInfo) {
		mu.Lock()
		abandoned = append(abandoned, run)
		mu.Unlock()
	}}
	var s *Scheduler
	for range 2 {
		s, _ = runScheduler(t, rdb, reg, WithLogger(logger), WithProcessTTL(DefaultProcessTTL), WithHooks(hooks))
	}
	for round := range 3 {
		var started time.Time
		waitFor(t, 15*time.Second, "a run of the task to start", func() bool {
			spans.mu.Lock()
			n := spans.running[name]
			spans.mu.Unlock()
			if n > 0 && started.IsZero() {
				started = time.Now()
			}
			return n > 0
		})
		// 20 ms before the next instant, the claims of that instant reach
		// Redis before the holder's next renewal: when Redis answers, the
		// holder's run lease is past its deadline and the first command it
		// runs is a claim. Or 300 ms into the run.
		pause := started.Truncate(time.Second).Add(980 * time.Millisecond)
		if round == 1 {
			pause = started.Add(300 * time.Millisecond)
		}
		time.Sleep(time.Until(pause))
		srv.Pause()
		time.Sleep(2500 * time.Millisecond)
		srv.Resume()
		// The held run ends 5 s after its start; the next starts after it.
		waitFor(t, 15*time.Second, "the held run to end", func() bool {
			for _, sp := range spans.snapshot() {
				if !sp.start.Before(started.Add(-100*time.Millisecond)) && sp.end.Sub(sp.start) >= 4900*time.Millisecond {
					return true
				}
			}
			return false
		})
		t.Logf("round %d: run started %s, Redis paused 2.5s from %s", round, started.Format("15:04:05.000"), pause.Format("15:04:05.000"))
	}
	time.Sleep(1500 * time.Millisecond)
	if o := spans.overlaps(); len(o) > 0 {
		t.Errorf("runs of the non-concurrent task overlapped: %v", o)
	}
	for _, sp := range spans.snapshot() {
		if sp.end.Sub(sp.start) < 4900*time.Millisecond && sp.end.Before(time.Now().Add(-time.Second)) {
			t.Errorf("the run of %v was cut short: %v", sp.fire, sp.end.Sub(sp.start))
		}
	}
	if oc := historyOutcomes(t, s, name); oc[OutcomeAbandoned] > 0 {
		t.Errorf("%d runs recorded abandoned though every process lived (history %v)", oc[OutcomeAbandoned], oc)
	}
	mu.Lock()
	if len(abandoned) > 0 {
		t.Errorf("the Abandoned hook was called for %v", abandoned)
	}
	mu.Unlock()
	for _, bad := range []string{"run abandoned", "run lease lost"} {
		if l := logs.lines(bad); len(l) > 0 {
			t.Errorf("logged %s", strings.Join(l, "\n"))
		}
	}
}
