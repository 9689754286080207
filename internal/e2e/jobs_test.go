package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
	crontab "github.com/gocrontab/crontab/runtime"
)

// jobRun is one run of the Count job read back from Redis.
type jobRun struct {
	n       int
	process string
	attempt int
}

// readJobs reads the runs of Count recorded in key: tasks.JobsKey as they
// end, tasks.JobStartsKey as they start.
func readJobs(t *testing.T, srv *redistest.Server, key string) []jobRun {
	t.Helper()
	raw, err := srv.Client(t).LRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]jobRun, 0, len(raw))
	for _, r := range raw {
		p := strings.Split(r, "|")
		n, _ := strconv.Atoi(p[0])
		a, _ := strconv.Atoi(p[2])
		out = append(out, jobRun{n, p[1], a})
	}
	return out
}

// The worker's process TTL (worker/main.go sets it), the heartbeat and job
// lease that follow from it.
const (
	workerTTL       = 2 * time.Second
	workerHeartbeat = workerTTL / 5
	workerJobLease  = 2 * workerTTL
)

// awaitNoMoreDeliveries waits until no job is pending, leased or owned, and
// a job lease (plus two heartbeats and a margin, for the master's round
// that would deliver again) has passed since since: a job whose lease was
// lost before it finished has shown its second start by then, and none can
// start after.
func awaitNoMoreDeliveries(t *testing.T, rdb *redis.Client, since time.Time) {
	t.Helper()
	ctx := context.Background()
	quiet := since.Add(workerJobLease + 2*workerHeartbeat + 500*time.Millisecond)
	testio.WaitFor(t, 30*time.Second, "no job pending or in flight, a job lease on", func() bool {
		return time.Now().After(quiet) && rdb.ZCard(ctx, "{crontab}:jobs").Val() == 0 &&
			rdb.ZCard(ctx, "{crontab}:jobs:lease").Val() == 0 && rdb.HLen(ctx, "{crontab}:jobs:owner").Val() == 0
	})
}

func TestTenThousandJobsAcrossThreeProcessesRunOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for i := range 3 {
		startWorker(t, srv, fmt.Sprintf("jobs%d", i), "WORKER_TASKS=count")
	}
	c := tasks.NewClient(rdb)
	const total, cancelled = 10000, 1000
	var jobs []crontab.Job
	for i := range total + cancelled {
		jobs = append(jobs, crontab.Job{Value: tasks.Count{N: i}, Options: []crontab.EnqueueOption{
			crontab.In(time.Duration(i%2000) * time.Millisecond)}})
	}
	// The cancelled ones are due later, so they are still pending when
	// cancelled.
	for i := total; i < total+cancelled; i++ {
		jobs[i].Options = []crontab.EnqueueOption{crontab.In(3 * time.Second)}
	}
	start := time.Now()
	ids, err := c.EnqueueMany(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled from 16 goroutines: one at a time, 1,000 cancels on a
	// loaded machine took longer than the 3 s the jobs were pending for.
	if err := cancelAll(ctx, c, ids[total:], 16); err != nil {
		t.Fatalf("cancel (%v after the enqueue began): %v", time.Since(start).Round(time.Millisecond), err)
	}
	testio.WaitFor(t, 60*time.Second, "every job to end", func() bool { return len(readJobs(t, srv, tasks.JobsKey)) >= total })
	awaitNoMoreDeliveries(t, rdb, time.Now()) // and past the cancelled jobs' time
	ended := map[int]int{}
	for _, r := range readJobs(t, srv, tasks.JobsKey) {
		ended[r.n]++
	}
	started := map[int]int{}
	byProcess := map[string]int{}
	for _, r := range readJobs(t, srv, tasks.JobStartsKey) {
		started[r.n]++
		byProcess[r.process]++
	}
	missing, dups, ranCancelled := 0, 0, 0
	for i := range total + cancelled {
		switch n := started[i]; {
		case i >= total && n > 0:
			ranCancelled++
		case i < total && ended[i] == 0:
			missing++
		case n > 1:
			dups++
		}
	}
	if missing+dups+ranCancelled > 0 {
		t.Errorf("of %d jobs: %d never ran, %d started more than once; %d of %d cancelled jobs started", total, missing, dups, ranCancelled, cancelled)
	}
	t.Logf("%d jobs ran once each in %v, by process %v", total, time.Since(start).Round(time.Millisecond), byProcess)
}

func TestSIGKILLMidJobDeliversAgain(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	ws := map[string]*worker{}
	for i := range 2 {
		id := fmt.Sprintf("jk%d", i)
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=count")
	}
	c := tasks.NewClient(rdb)
	id, err := c.Enqueue(ctx, tasks.Count{N: 7, Sleep: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Killed once its handler has started (its start is recorded): a job
	// that is only claimed (owned, waiting for a worker) has no start to
	// count yet.
	var owner string
	testio.WaitFor(t, 10*time.Second, "the job to start", func() bool {
		j, err := crontab.NewInspector(rdb).Job(ctx, id)
		if starts := readJobs(t, srv, tasks.JobStartsKey); err == nil && j.State == crontab.JobRunning && len(starts) == 1 {
			owner = starts[0].process
		}
		return owner != ""
	})
	if ws[owner] == nil {
		t.Fatalf("job owner %q is not a worker", owner)
	}
	ws[owner].kill()
	killed := time.Now()
	testio.WaitFor(t, 30*time.Second, "the job delivered again to end", func() bool { return len(readJobs(t, srv, tasks.JobsKey)) > 0 })
	done := time.Since(killed)
	awaitNoMoreDeliveries(t, rdb, time.Now())
	if runs := readJobs(t, srv, tasks.JobsKey); len(runs) != 1 {
		t.Errorf("job runs ended after the kill: %+v, want one", runs)
	}
	starts := readJobs(t, srv, tasks.JobStartsKey)
	if len(starts) != 2 || starts[0] != (jobRun{7, owner, 1}) {
		t.Fatalf("job starts %+v; want attempt 1 on the killed worker %s, then one redelivery", starts, owner)
	}
	if r := starts[1]; r.process == owner || r.attempt != 2 || r.n != 7 {
		t.Errorf("redelivered run %+v; want attempt 2 on the survivor", r)
	}
	t.Logf("delivered again and done %v after the kill", done.Round(time.Millisecond))
}

// cancelAll cancels the jobs ids from n goroutines and returns the first
// error.
func cancelAll(ctx context.Context, c *crontab.Client, ids []string, n int) error {
	errs := make(chan error, len(ids))
	next := make(chan string)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for id := range next {
				if err := c.Cancel(ctx, id); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}
