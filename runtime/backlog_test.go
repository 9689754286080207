package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// backlogRuns records when each run started, by task.
type backlogRuns struct {
	mu     sync.Mutex
	starts map[string]time.Time
}

// slowTask lasts 20 ms and records its start.
type slowTask struct{ runs *backlogRuns }

func (s *slowTask) Handle(ctx context.Context) error {
	run, _ := Run(ctx)
	s.runs.mu.Lock()
	s.runs.starts[run.Task] = time.Now()
	s.runs.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return nil
}

// TestInstantBehindABacklog: an instant after a backlog's (here 1,000 runs
// of 20 ms on 4 workers: 5 s of work due at one instant) is claimed when it
// comes, not once the backlog is drained.
func TestInstantBehindABacklog(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	runs := &backlogRuns{starts: map[string]time.Time{}}
	reg := testRegistry(t, TaskConfig{Name: "slow", Concurrent: true, New: func() TaskInterface { return &slowTask{runs: runs} }})
	c := NewClient(rdb, reg)
	for _, key := range []string{"template", "later"} {
		if err := c.SetTask(ctx, TaskSpec{Key: key, Type: "slow", Expression: "every:1h", Concurrent: true}); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := rdb.HGetAll(ctx, k.Task("template")).Val()
	// The scheduler first, so that its start (slow on a loaded machine)
	// is not counted in the lag; then the instants, 1.5 s ahead.
	runScheduler(t, rdb, reg, WithWorkers(4))
	at := time.Now().Add(1500 * time.Millisecond)
	later := at.Add(time.Second)
	pipe := rdb.Pipeline()
	for i := range 1000 {
		key := fmt.Sprintf("b%04d", i)
		fields := map[string]any{}
		for f, v := range tmpl {
			fields[f] = v
		}
		fields["name"], fields["next_run"] = key, at.UnixMilli()
		pipe.HSet(ctx, k.Task(key), fields)
		pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(at.UnixMilli()), Member: key})
		pipe.SAdd(ctx, k.Tasks(), key)
	}
	pipe.HSet(ctx, k.Task("later"), "next_run", later.UnixMilli())
	pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(later.UnixMilli()), Member: "later"})
	pipe.ZRem(ctx, k.Queue(), "template")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the later task's run", func() bool {
		runs.mu.Lock()
		defer runs.mu.Unlock()
		_, ok := runs.starts["later"]
		return ok
	})
	runs.mu.Lock()
	start, backlog := runs.starts["later"], len(runs.starts)-1
	runs.mu.Unlock()
	if lag := start.Sub(later); lag > time.Second {
		t.Errorf("the instant after the backlog's started %v late", lag)
	}
	if backlog >= 1000 {
		t.Errorf("the backlog was drained (%d runs) before the later instant ran: the test shows nothing", backlog)
	}
}
