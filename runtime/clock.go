package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverClock tells Redis server time without a round trip: it keeps the
// offset of the local clock from the server's TIME, measured over the
// fastest of a few round trips and refreshed periodically. Every scheduling
// decision in this package reads time from here, so processes with skewed
// local clocks agree.
type serverClock struct {
	rdb    redis.UniversalClient
	local  func() time.Time
	offset atomic.Int64 // server minus local, in nanoseconds
}

func newServerClock(rdb redis.UniversalClient, local func() time.Time) *serverClock {
	return &serverClock{rdb: rdb, local: local}
}

// Now returns the estimated Redis server time.
func (c *serverClock) Now() time.Time {
	return c.local().Add(time.Duration(c.offset.Load()))
}

// Offset returns the current estimate of server minus local time.
func (c *serverClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Sync measures the offset with samples round trips of TIME and keeps the
// one with the shortest round trip, whose midpoint is the best estimate.
func (c *serverClock) Sync(ctx context.Context, samples int) error {
	best := time.Duration(-1)
	var offset time.Duration
	for range max(samples, 1) {
		before := c.local()
		server, err := c.rdb.Time(ctx).Result()
		after := c.local()
		if err != nil {
			return fmt.Errorf("crontab: read redis TIME: %w", err)
		}
		rtt := after.Sub(before)
		if best < 0 || rtt < best {
			best = rtt
			offset = server.Sub(before.Add(rtt / 2))
		}
	}
	c.offset.Store(int64(offset))
	return nil
}
