package runtime

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/proccpu"
	"github.com/gocrontab/crontab/internal/redistest"
)

// benchTasks is how many tasks one iteration of BenchmarkSetTasks and
// BenchmarkRemoveTasks writes or removes.
const benchTasks = 100_000

// benchSpecs returns n every:1h specs of the sms type with small params,
// their keys prefixed with prefix.
func benchSpecs(prefix string, n int) []TaskSpec {
	specs := make([]TaskSpec, n)
	for i := range specs {
		specs[i] = TaskSpec{Key: fmt.Sprintf("%s%06d", prefix, i), Type: "sms", Expression: "every:1h",
			Params: smsJob{To: "+33600000000", Text: "hi"}}
	}
	return specs
}

// cpuMeter measures the CPU time the benchmark process and a private
// redis-server spend, so that figures taken on a shared machine can be
// read without its load: wall-clock tasks/s fall with the load, CPU time
// per task much less.
type cpuMeter struct {
	pid         int
	self, redis time.Duration
	selfAt, rAt time.Duration
}

// selfCPU is this process's user + system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (m *cpuMeter) start() { m.selfAt, m.rAt = selfCPU(), proccpu.Of(m.pid) }
func (m *cpuMeter) stop() {
	m.self += selfCPU() - m.selfAt
	m.redis += proccpu.Of(m.pid) - m.rAt
}

// report adds the tasks/s of n tasks in wall time d and the CPU time per
// task of the client and of redis-server.
func (m *cpuMeter) report(b *testing.B, n int, d time.Duration) {
	b.ReportMetric(float64(n)/d.Seconds(), "tasks/s")
	b.ReportMetric(float64(m.self.Microseconds())/float64(n), "client-cpu-µs/task")
	b.ReportMetric(float64(m.redis.Microseconds())/float64(n), "redis-cpu-µs/task")
}

// BenchmarkSetTasks reports the tasks/s of SetTasks creating 100,000
// every:1h tasks with small params on a private server, validation
// included, and the CPU time per task of the client and of redis-server.
// Run with -benchtime=3x.
func BenchmarkSetTasks(b *testing.B) {
	srv := redistest.Start(b)
	rc := srv.Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
	m := cpuMeter{pid: srv.PID()}
	var total time.Duration
	for i := range b.N {
		specs := benchSpecs(fmt.Sprintf("i%d/", i), benchTasks)
		start := time.Now()
		m.start()
		if _, err := c.SetTasks(ctx, specs); err != nil {
			b.Fatal(err)
		}
		m.stop()
		total += time.Since(start)
	}
	m.report(b, benchTasks*b.N, total)
}

// BenchmarkRemoveTasks reports the tasks/s of RemoveTasks removing 100,000
// tasks that SetTasks wrote (not timed). Run with -benchtime=3x.
func BenchmarkRemoveTasks(b *testing.B) {
	srv := redistest.Start(b)
	rc := srv.Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
	m := cpuMeter{pid: srv.PID()}
	var total time.Duration
	for i := range b.N {
		specs := benchSpecs(fmt.Sprintf("i%d/", i), benchTasks)
		if _, err := c.SetTasks(ctx, specs); err != nil {
			b.Fatal(err)
		}
		keys := make([]string, len(specs))
		for j, s := range specs {
			keys[j] = s.Key
		}
		start := time.Now()
		m.start()
		if err := c.RemoveTasks(ctx, keys); err != nil {
			b.Fatal(err)
		}
		m.stop()
		total += time.Since(start)
	}
	m.report(b, benchTasks*b.N, total)
}

// BenchmarkSetTaskParallel is the reference of BenchmarkSetTasks: 20,000
// of the same tasks by SetTask, one call each, from 32 goroutines.
func BenchmarkSetTaskParallel(b *testing.B) {
	const n, workers = 20_000, 32
	srv := redistest.Start(b)
	rc := srv.Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
	m := cpuMeter{pid: srv.PID()}
	var total time.Duration
	for i := range b.N {
		specs := benchSpecs(fmt.Sprintf("i%d/", i), n)
		start := time.Now()
		m.start()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := w; j < n; j += workers {
					if err := c.SetTask(ctx, specs[j]); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		m.stop()
		total += time.Since(start)
	}
	m.report(b, n*b.N, total)
}
