package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// usedMemory reads INFO memory used_memory.
func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no used_memory in INFO")
	return 0
}

// BenchmarkMemoryPerPendingJob reports the Redis bytes one pending job
// costs (empty payload, random id), measured over 100,000 jobs spread over
// an hour on a private server. Run with -benchtime=1x.
func BenchmarkMemoryPerPendingJob(b *testing.B) {
	const n = 100_000
	rdb := redistest.Start(b).Client(b)
	c := NewClient(rdb, testRegistry(b, TaskConfig{Name: "empty", New: func() TaskInterface { return new(emptyJob) }}))
	ctx := context.Background()
	for range b.N {
		rdb.FlushAll(ctx)
		before := usedMemory(b, rdb)
		for i := 0; i < n; i += 10_000 {
			jobs := make([]Job, 10_000)
			for j := range jobs {
				jobs[j] = Job{Value: emptyJob{}, Options: []EnqueueOption{In(time.Duration(i+j) * 36 * time.Millisecond)}}
			}
			if _, err := c.EnqueueMany(ctx, jobs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(usedMemory(b, rdb)-before)/n, "B/job")
	}
}

// emptyJob is a job type with an empty payload ({}).
type emptyJob struct{}

func (emptyJob) Handle(context.Context) error { return nil }

// BenchmarkMemoryPerHistoryRecord reports the Redis bytes one history
// record costs: 100,000 records of an ok run, 100 in each of 1,000 task
// histories (the default cap). Run with -benchtime=1x.
func BenchmarkMemoryPerHistoryRecord(b *testing.B) {
	const tasks, per = 1000, 100
	rdb := redistest.Start(b).Client(b)
	k := newKeys("crontab")
	ctx := context.Background()
	now := time.Now()
	for range b.N {
		rdb.FlushAll(ctx)
		before := usedMemory(b, rdb)
		for t := range tasks {
			pipe := rdb.Pipeline()
			name := fmt.Sprintf("task %04d", t)
			for i := range per {
				fire := now.Add(time.Duration(i) * time.Minute)
				rec := Record{Task: name, Fire: fire, Start: fire.Add(2 * time.Millisecond), End: fire.Add(40 * time.Millisecond),
					Outcome: OutcomeOK, Process: "web-7f9c:4242:1a2b3c4d", Attempt: 1}
				pipe.LPush(ctx, k.History(name), rec.encode())
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(usedMemory(b, rdb)-before)/(tasks*per), "B/record")
	}
}
