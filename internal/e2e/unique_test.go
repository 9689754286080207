package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// produced is one enqueue of a producer process (tasks.ProducedKey).
type produced struct {
	n             int
	result, id    string
	before, after time.Time // Redis time around the enqueue
	process, err  string
}

func readProduced(t *testing.T, rc *redis.Client) []produced {
	t.Helper()
	var out []produced
	for _, r := range list(t, rc, tasks.ProducedKey) {
		p := strings.SplitN(r, "|", 7)
		if len(p) != 7 {
			t.Fatalf("bad record %q", r)
		}
		n, _ := strconv.Atoi(p[0])
		b, _ := strconv.ParseInt(p[3], 10, 64)
		a, _ := strconv.ParseInt(p[4], 10, 64)
		out = append(out, produced{n, p[1], p[2], time.UnixMicro(b), time.UnixMicro(a), p[5], p[6]})
	}
	return out
}

// runProducers runs procs producer processes (worker/produce.go), each
// with goroutines goroutines of each enqueues, all from one instant, with
// env for each process i from envOf, and waits for them to exit.
func runProducers(t *testing.T, srv *redistest.Server, procs, goroutines, each int, envOf func(i int) []string) {
	t.Helper()
	at := time.Now().Add(time.Second).UnixMilli() // time enough for every process to start
	var ws []*worker
	for i := range procs {
		env := append([]string{fmt.Sprintf("WORKER_PRODUCE=%d", each), fmt.Sprintf("WORKER_PRODUCE_GOROUTINES=%d", goroutines),
			fmt.Sprintf("WORKER_PRODUCE_AT=%d", at)}, envOf(i)...)
		ws = append(ws, startWorker(t, srv, fmt.Sprintf("prod%d", i), env...))
	}
	for _, w := range ws {
		w.wait(t, 20*time.Second)
	}
}

// Unique across processes: four producer processes of eight goroutines
// each enqueue one job of one identity at one instant; exactly one job is
// created, every other enqueue fails with ErrDuplicate naming it.
func TestUniqueAcrossProducerProcesses(t *testing.T) {
	t.Parallel()
	const procs, goroutines = 4, 8
	srv := redistest.Start(t)
	rc := srv.Client(t)
	runProducers(t, srv, procs, goroutines, 1, func(int) []string {
		return []string{"WORKER_PRODUCE_BASE=7", "WORKER_UNIQUE_TTL=5s"}
	})
	recs := readProduced(t, rc)
	if len(recs) != procs*goroutines {
		t.Fatalf("%d enqueues recorded, want %d", len(recs), procs*goroutines)
	}
	var created []produced
	for _, r := range recs {
		if r.result == "ok" {
			created = append(created, r)
		}
	}
	if len(created) != 1 {
		t.Fatalf("%d enqueues created a job, want exactly one: %+v", len(created), created)
	}
	first := created[0]
	overlapped := 0
	for _, r := range recs {
		if r == first {
			continue
		}
		if r.result != "dup" || r.id != first.id {
			t.Errorf("enqueue %+v: want ErrDuplicate naming job %s", r, first.id)
		}
		if r.before.Before(first.after) && first.before.Before(r.after) {
			overlapped++
		}
	}
	jobs, err := crontab.NewInspector(rc).Jobs(context.Background(), crontab.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != first.id || jobs[0].Unique == "" {
		t.Errorf("jobs %+v: want the one unique job %s", jobs, first.id)
	}
	t.Logf("job %s created by %s; %d of the other %d enqueues overlapped it on Redis time", first.id, first.process, overlapped, len(recs)-1)
}

// Debounce across processes: four producer processes of two goroutines
// each enqueue ten jobs one after another, with distinct payloads, of one
// identity (UniqueKey) with Debounce; one job is left pending, whose
// payload and due time are those of the enqueue Redis ran last.
func TestDebounceAcrossProducerProcesses(t *testing.T) {
	t.Parallel()
	const procs, goroutines, each = 4, 2, 10
	const debounce = 20 * time.Second // no worker runs it anyway
	srv := redistest.Start(t)
	rc := srv.Client(t)
	runProducers(t, srv, procs, goroutines, each, func(i int) []string {
		return []string{fmt.Sprintf("WORKER_PRODUCE_BASE=%d", 100*i), "WORKER_PRODUCE_DISTINCT=1",
			"WORKER_UNIQUE_KEY=deb", "WORKER_DEBOUNCE=" + debounce.String()}
	})
	recs := readProduced(t, rc)
	if len(recs) != procs*goroutines*each {
		t.Fatalf("%d enqueues recorded, want %d", len(recs), procs*goroutines*each)
	}
	jobs, err := crontab.NewInspector(rc).Jobs(context.Background(), crontab.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].State != crontab.JobPending {
		t.Fatalf("jobs %+v: want one pending job", jobs)
	}
	job := jobs[0]
	byN := map[int]produced{}
	for _, r := range recs {
		if r.result != "ok" || r.id != job.ID {
			t.Errorf("enqueue %+v: want job %s, no error", r, job.ID)
		}
		byN[r.n] = r
	}
	var payload tasks.Count
	if err := json.Unmarshal(job.Payload, &payload); err != nil {
		t.Fatalf("payload %s: %v", job.Payload, err)
	}
	last, ok := byN[payload.N]
	if !ok {
		t.Fatalf("pending payload %s is no enqueue's", job.Payload)
	}
	// No enqueue began (on Redis time) after the one whose payload is
	// left had returned: that one ran last.
	var after []int
	for _, r := range recs {
		if r.before.After(last.after) {
			after = append(after, r.n)
		}
	}
	if len(after) > 0 {
		t.Errorf("the pending payload is %d's, yet the enqueues of %v began after that one returned", last.n, after)
	}
	// Its due time is that enqueue's time plus the delay (ms on Redis time).
	lo, hi := last.before.Add(debounce).Truncate(time.Millisecond), last.after.Add(debounce)
	if job.Due.Before(lo) || job.Due.After(hi) {
		t.Errorf("due %v, want %v plus the enqueue of %d's time: within [%v, %v]", job.Due, debounce, last.n, lo, hi)
	}
	t.Logf("%d enqueues left job %s with the payload of %d (by %s)", len(recs), job.ID, last.n, last.process)
}
