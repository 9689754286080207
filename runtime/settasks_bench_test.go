package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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

// BenchmarkSetTasks reports the tasks/s of SetTasks creating 100,000
// every:1h tasks with small params on a private server, validation
// included. Run with -benchtime=3x.
func BenchmarkSetTasks(b *testing.B) {
	rc := redistest.Start(b).Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
	var total time.Duration
	for i := range b.N {
		specs := benchSpecs(fmt.Sprintf("i%d/", i), benchTasks)
		start := time.Now()
		if _, err := c.SetTasks(ctx, specs); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(benchTasks*b.N)/total.Seconds(), "tasks/s")
}

// BenchmarkRemoveTasks reports the tasks/s of RemoveTasks removing 100,000
// tasks that SetTasks wrote (not timed). Run with -benchtime=3x.
func BenchmarkRemoveTasks(b *testing.B) {
	rc := redistest.Start(b).Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
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
		if err := c.RemoveTasks(ctx, keys); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(benchTasks*b.N)/total.Seconds(), "tasks/s")
}

// BenchmarkSetTaskParallel is the reference of BenchmarkSetTasks: 20,000
// of the same tasks by SetTask, one call each, from 32 goroutines.
func BenchmarkSetTaskParallel(b *testing.B) {
	const n, workers = 20_000, 32
	rc := redistest.Start(b).Client(b)
	c := NewClient(rc, smsRegistry(b, 0))
	ctx := context.Background()
	var total time.Duration
	for i := range b.N {
		specs := benchSpecs(fmt.Sprintf("i%d/", i), n)
		start := time.Now()
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
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "tasks/s")
}
