package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// countJob counts its runs.
type countJob struct{ n *atomic.Int32 }

func (j countJob) Handle(context.Context) error { j.n.Add(1); return nil }

// The claim script stops once it has won max_fires fires: the fires after
// that are not looked at (their instant stays due, for this process's next
// round or another process), so a process never starts more runs than it
// has free workers, however many it sends.
func TestClaimStopsAtMaxFires(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	var ran atomic.Int32
	reg := testRegistry(t, TaskConfig{Name: "count", New: func() TaskInterface { return countJob{&ran} }})
	c := NewClient(rdb, reg)
	k := newKeys("crontab")
	due := time.Now().Add(-100 * time.Millisecond).UnixMilli()
	var members []string
	for i := range 10 {
		key := fmt.Sprintf("t%d", i)
		if err := c.SetTask(ctx, TaskSpec{Key: key, Type: "count", Expression: "every:1h"}); err != nil {
			t.Fatal(err)
		}
		must(t, rdb.HSet(ctx, k.Task(key), "next_run", due).Err())
		must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(due), Member: key}).Err())
		members = append(members, key)
	}
	s, err := NewScheduler(rdb, reg, WithLogger(testLogger()), WithWorkers(10))
	if err != nil {
		t.Fatal(err)
	}
	s.runCtx = context.Background()
	must(t, s.clock.Sync(ctx, 3))
	for range 10 {
		<-s.slots // the runs give their slots back when done
	}
	fires, err := s.disp.prepare(ctx, s.clock.Now(), members, nil)
	if err != nil || len(fires) != 10 {
		t.Fatalf("prepare: %d fires, %v", len(fires), err)
	}
	started, untried, _, err := s.disp.advance(ctx, fires, 3)
	if err != nil || started != 3 || len(untried) != 7 {
		t.Fatalf("advance with max 3: started %d, untried %d, %v; want 3 and 7", started, len(untried), err)
	}
	for _, f := range untried {
		if got := hget(t, rdb, f.state.Member, "next_run"); got != fmt.Sprint(due) {
			t.Errorf("untried %s: next_run %s, want it still due at %d", f.state.Member, got, due)
		}
	}
	started, untried, _, err = s.disp.advance(ctx, untried, 10)
	if err != nil || started != 7 || len(untried) != 0 {
		t.Fatalf("advance of the untried: started %d, untried %d, %v; want 7 and 0", started, len(untried), err)
	}
	waitFor(t, 5*time.Second, "the ten runs", func() bool { return ran.Load() == 10 })
	s.running.Wait()
}
