package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A claim built from a queue read that a peer's claim overtook (the
// queue entry still at the instant the peer fired, the hash already at
// the next) tries the hash's next instant, which the script answers early
// and queues at it: that is no sign of a clock running ahead, so the
// dispatcher does not report it early (which syncs the clock, 3 round
// trips); a fire due by this process's clock that the server finds early
// is.
func TestStaleReadIsNotAClockError(t *testing.T) {
	t.Parallel()
	rdbc := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(context.Context) error { return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", New: probeNew(0)})
	s, _ := runScheduler(t, rdbc, reg)
	k := newKeys("crontab")
	now := serverMS(t, rdbc)
	for _, tc := range []struct {
		name  string
		next  int64 // the hash's next_run
		clock time.Duration
		early bool
	}{
		{"stale read: the hash moved on", now + int64(10*time.Minute/time.Millisecond), 0, false},
		{"our clock ahead of the server's", now + 1000, 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, rdbc.HSet(ctx, k.Task(name), "next_run", tc.next).Err())
			must(t, rdbc.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 1000), Member: name}).Err())
			fires, err := s.disp.prepare(ctx, time.UnixMilli(now), []string{name}, []int64{now - 1000})
			must(t, err)
			if len(fires) != 1 {
				t.Fatalf("prepared %d fires, want 1", len(fires))
			}
			if tc.clock != 0 {
				// Our estimate of the server's clock 2s ahead: the fire,
				// 1s ahead by the server's, is due by ours.
				s.clock.offset.Add(int64(tc.clock))
				defer s.clock.offset.Add(-int64(tc.clock))
			}
			_, _, early, err := s.disp.advance(ctx, fires, 10)
			must(t, err)
			if early != tc.early {
				t.Errorf("early %v, want %v", early, tc.early)
			}
		})
	}
}
