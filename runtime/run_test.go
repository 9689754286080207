package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// slowJob overruns any timeout under a second: it waits for its ctx.
type slowJob struct{}

func (slowJob) Handle(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// Scheduled fires and jobs go through one run path: a timeout has the same
// error text for both, and the Failed hook of both is called after the
// run's record is in Redis, off the handler's goroutine, with a ctx that
// no longer carries the handler's deadline.
func TestFiresAndJobsShareTheRunPath(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	reg := testRegistry(t,
		TaskConfig{Name: name, Expression: "every:1s", Timeout: 100 * time.Millisecond, New: probeNew(0)},
		TaskConfig{Name: "slow job", Timeout: 100 * time.Millisecond, New: func() TaskInterface { return new(slowJob) }},
	)
	type seen struct {
		info        RunInfo
		err         string
		recorded    bool
		hasDeadline bool
	}
	var mu sync.Mutex
	var failed []seen
	hooks := Hooks{Failed: func(ctx context.Context, run RunInfo, err error) {
		hist, _ := readHistory(ctx, rdbOf(rdb), run.Task, 0)
		recorded := false
		for _, r := range hist {
			recorded = recorded || (r.Fire.Equal(run.Fire) && r.Outcome == OutcomeFailed)
		}
		_, dl := ctx.Deadline()
		mu.Lock()
		failed = append(failed, seen{run, err.Error(), recorded, dl})
		mu.Unlock()
	}}
	runScheduler(t, rdb, reg, WithHooks(hooks))
	if _, err := NewClient(rdb, reg).Enqueue(ctx, slowJob{}); err != nil {
		t.Fatal(err)
	}
	var fire, job *seen
	waitFor(t, 10*time.Second, "a failed fire and a failed job", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := range failed {
			if failed[i].info.JobID == "" {
				fire = &failed[i]
			} else {
				job = &failed[i]
			}
		}
		return fire != nil && job != nil
	})
	for _, s := range []*seen{fire, job} {
		if !strings.HasPrefix(s.err, "timeout 100ms exceeded: ") {
			t.Errorf("%s: error %q, want the timeout named", s.info.Task, s.err)
		}
		if !s.recorded {
			t.Errorf("%s: Failed was called before the run's record was written", s.info.Task)
		}
		if s.hasDeadline {
			t.Errorf("%s: Failed's ctx carries the handler's deadline", s.info.Task)
		}
	}
}
