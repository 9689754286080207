package runtime

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// drainTasks is how many run-time tasks BenchmarkDrainFires makes due at
// one instant.
const drainTasks = 5000

// BenchmarkDrainFires measures one scheduler in this process draining
// 5,000 run-time every:1h tasks of an empty handler, all due at one
// instant (claim, run, finish, history), against a private redis-server:
// the recurring counterpart of BenchmarkDrainBurst. It reports fires/s,
// the CPU time per fire of this process (the scheduler and its client)
// and of redis-server, and the Go heap allocations per fire
// (runtime.MemStats over the drain: the scheduler's whole fire path, not
// one call), the figure a change to the worker's Go side is judged by on
// a noisy machine, since it does not move with the load.
// Run with -benchtime=5x.
func BenchmarkDrainFires(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	var done atomic.Int64
	reg := testRegistry(b, TaskConfig{Name: "empty", New: func() TaskInterface { return new(emptyJob) }})
	specs := make([]TaskSpec, drainTasks)
	for i := range specs {
		specs[i] = TaskSpec{Key: fmt.Sprintf("tenant-%05d", i), Type: "empty", Expression: "every:1h"}
	}
	c := NewClient(rdb, reg)
	if _, err := c.SetTasks(ctx, specs); err != nil {
		b.Fatal(err)
	}
	runScheduler(b, rdb, reg, WithListener(ListenerFunc(func(context.Context, Result) { done.Add(1) })))
	k := newKeys(DefaultNamespace)
	m := drainMeter{cpu: cpuMeter{pid: srv.PID()}}
	for b.Loop() {
		// The instant: 1.5 s ahead. The moves publish no wake-up, so the
		// scheduler sees them at its next look at the queue, within
		// DefaultMaxSleep (1 s), and prepares the instant's claim as it
		// would for any; an instant sooner than that was claimed up to a
		// second late, which the drain's time counted.
		at := time.Now().Add(1500 * time.Millisecond).UnixMilli()
		pipe := rdb.Pipeline()
		for _, s := range specs {
			pipe.HSet(ctx, k.Task(s.Key), "next_run", at)
			pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(at), Member: s.Key})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		target := done.Load() + drainTasks
		m.drain(time.UnixMilli(at), func() bool { return done.Load() >= target })
	}
	m.report(b, b.N*drainTasks, "fire")
}

// drainMeter measures the drains of BenchmarkDrainFires and
// BenchmarkDrainBurst alike: the wall time from each drain's instant to
// its end, the CPU time of this process and of the private redis-server
// meanwhile, and this process's Go heap allocations (runtime.MemStats),
// so that a fire and a job compare in one run.
type drainMeter struct {
	cpu            cpuMeter
	elapsed        time.Duration
	mallocs, bytes uint64
}

// drain sleeps until at, then measures until done reports true (polled
// every millisecond).
func (m *drainMeter) drain(at time.Time, done func() bool) {
	var ms0, ms1 runtime.MemStats
	time.Sleep(time.Until(at))
	runtime.ReadMemStats(&ms0)
	m.cpu.start()
	for !done() {
		time.Sleep(time.Millisecond)
	}
	m.cpu.stop()
	runtime.ReadMemStats(&ms1)
	m.elapsed += time.Since(at)
	m.mallocs += ms1.Mallocs - ms0.Mallocs
	m.bytes += ms1.TotalAlloc - ms0.TotalAlloc
}

// report adds the rate of n units ("fire", "job") and the per-unit CPU
// times and allocations.
func (m *drainMeter) report(b *testing.B, n int, unit string) {
	f := float64(n)
	b.ReportMetric(f/m.elapsed.Seconds(), unit+"s/s")
	b.ReportMetric(float64(m.cpu.self.Microseconds())/f, "go-cpu-µs/"+unit)
	b.ReportMetric(float64(m.cpu.redis.Microseconds())/f, "redis-cpu-µs/"+unit)
	b.ReportMetric(float64(m.mallocs)/f, "allocs/"+unit)
	b.ReportMetric(float64(m.bytes)/f, "B/"+unit)
}
