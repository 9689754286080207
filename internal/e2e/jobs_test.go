package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// jobRun is one run of the Count job read back from Redis.
type jobRun struct {
	n       int
	process string
	attempt int
}

func readJobs(t *testing.T, srv *redistest.Server) []jobRun {
	t.Helper()
	raw, err := srv.Client(t).LRange(context.Background(), tasks.JobsKey, 0, -1).Result()
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
	for _, id := range ids[total:] {
		if err := c.Cancel(ctx, id); err != nil {
			t.Fatalf("cancel: %v", err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(readJobs(t, srv)) < total && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(4 * time.Second) // past the cancelled jobs' time
	runs := readJobs(t, srv)
	count := map[int]int{}
	byProcess := map[string]int{}
	for _, r := range runs {
		count[r.n]++
		byProcess[r.process]++
	}
	missing, dups, ranCancelled := 0, 0, 0
	for i := range total + cancelled {
		switch n := count[i]; {
		case i >= total && n > 0:
			ranCancelled++
		case i < total && n == 0:
			missing++
		case n > 1:
			dups++
		}
	}
	if missing+dups+ranCancelled > 0 {
		t.Errorf("of %d jobs: %d never ran, %d ran more than once; %d of %d cancelled jobs ran", total, missing, dups, ranCancelled, cancelled)
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
	var owner string
	deadline := time.Now().Add(10 * time.Second)
	for owner == "" && time.Now().Before(deadline) {
		if j, err := c.Job(ctx, id); err == nil && j.State == crontab.JobRunning {
			owner = j.Owner
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ws[owner] == nil {
		t.Fatalf("job owner %q is not a worker", owner)
	}
	ws[owner].kill()
	killed := time.Now()
	deadline = time.Now().Add(30 * time.Second)
	for len(readJobs(t, srv)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	runs := readJobs(t, srv)
	if len(runs) != 1 {
		t.Fatalf("job runs after the kill: %+v, want one redelivery", runs)
	}
	if r := runs[0]; r.process == owner || r.attempt != 2 || r.n != 7 {
		t.Errorf("redelivered run %+v; want attempt 2 on the survivor", r)
	}
	t.Logf("delivered again and done %v after the kill", time.Since(killed).Round(time.Millisecond))
}
