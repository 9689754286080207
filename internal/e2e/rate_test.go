package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
	crontab "github.com/gocrontab/crontab/runtime"
)

// windowRecorder polls rate windows of the count type and keeps every
// start it saw: a start stays in its window at least the window's length,
// so polling more often than that sees each one.
type windowRecorder struct {
	stop func()
	done chan struct{}

	mu      sync.Mutex
	starts  map[string]map[string]time.Time // rate key ("": the type's) -> member -> start
	maxGap  time.Duration                   // the longest time between two polls
	pollErr error
}

// recordWindows polls the windows of count for keys every per/4 until
// stop.
func recordWindows(rc *redis.Client, per time.Duration, keys ...string) *windowRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	wr := &windowRecorder{stop: cancel, done: make(chan struct{}), starts: map[string]map[string]time.Time{}}
	for _, k := range keys {
		wr.starts[k] = map[string]time.Time{}
	}
	db := rdb.New(rc, crontab.DefaultNamespace)
	go func() {
		defer close(wr.done)
		last := time.Now()
		for {
			stopped := ctx.Err() != nil
			for _, k := range keys {
				w, _, err := db.RateStarts(context.WithoutCancel(ctx), "count", k, 0)
				wr.mu.Lock()
				if err != nil && wr.pollErr == nil {
					wr.pollErr = err
				}
				for _, s := range w {
					wr.starts[k][s.Member] = time.UnixMilli(s.AtMS)
				}
				wr.mu.Unlock()
			}
			now := time.Now()
			wr.mu.Lock()
			wr.maxGap = max(wr.maxGap, now.Sub(last))
			wr.mu.Unlock()
			last = now
			if stopped {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(per / 4):
			}
		}
	}()
	return wr
}

// finish stops the polling after one last poll and returns the starts of
// each key's window, in order. It fails t when a poll failed or two polls
// were a window apart (a start may have been missed).
func (wr *windowRecorder) finish(t *testing.T, per time.Duration) map[string][]time.Time {
	t.Helper()
	wr.stop()
	<-wr.done
	if wr.pollErr != nil {
		t.Fatalf("poll rate window: %v", wr.pollErr)
	}
	if wr.maxGap >= per {
		t.Fatalf("polls of the rate windows were %v apart, not under the window (%v): starts may be missing", wr.maxGap, per)
	}
	out := map[string][]time.Time{}
	for k, m := range wr.starts {
		out[k] = slices.SortedFunc(func(yield func(time.Time) bool) {
			for _, at := range m {
				if !yield(at) {
					return
				}
			}
		}, time.Time.Compare)
	}
	return out
}

// mostInWindow returns the most starts (sorted) that any window of length
// per holds: the window (at-per, at] of each start at.
func mostInWindow(starts []time.Time, per time.Duration) int {
	most, lo := 0, 0
	for hi, at := range starts {
		for !starts[lo].After(at.Add(-per)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// checkRate fails t when some window of length per held more than n of
// starts.
func checkRate(t *testing.T, what string, starts []time.Time, n int, per time.Duration) {
	t.Helper()
	if most := mostInWindow(starts, per); most > n {
		t.Errorf("%s: a window of %v held %d starts, want at most %d", what, per, most, n)
	} else {
		t.Logf("%s: %d starts, at most %d in a window of %v", what, len(starts), most, per)
	}
}

// checkNoneDead fails t when a job is dead.
func checkNoneDead(t *testing.T, rc *redis.Client) {
	t.Helper()
	dead, err := crontab.NewInspector(rc).Jobs(context.Background(), crontab.JobFilter{State: crontab.JobDead})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) > 0 {
		t.Errorf("%d dead jobs, want none: first %+v", len(dead), dead[0])
	}
}

// endedOnce fails t unless each of ns ended exactly once (tasks.JobsKey).
func endedOnce(t *testing.T, srv *redistest.Server, ns []int) {
	t.Helper()
	ended := map[int]int{}
	for _, r := range readJobs(t, srv, tasks.JobsKey) {
		ended[r.n]++
	}
	bad := 0
	for _, n := range ns {
		if ended[n] != 1 {
			bad++
			if bad <= 5 {
				t.Errorf("job %d ended %d times, want once", n, ended[n])
			}
		}
	}
	if bad > 0 || len(ended) != len(ns) {
		t.Errorf("%d of %d jobs did not end exactly once; %d distinct jobs ended", bad, len(ns), len(ended))
	}
}

// The rate of a job type holds across processes, on Redis time: three
// workers drain a backlog due at once, one is SIGKILLed mid-drain, and no
// window of the rate's length ever holds more than its N starts, the
// killed worker's jobs delivered again after their lease included; every
// job ends once, none dies.
func TestRateHoldsAcrossProcessesAndAKill(t *testing.T) {
	t.Parallel()
	const (
		n, per = 50, time.Second
		jobs   = 300
		sleep  = 600 * time.Millisecond
	)
	srv := redistest.Start(t)
	rc := srv.Client(t)
	ctx := context.Background()
	ws := map[string]*worker{}
	for i := range 3 {
		id := fmt.Sprintf("rate%d", i)
		// 20 workers each: a window's starts spread over the processes.
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=count", fmt.Sprintf("WORKER_RATE=%d/%v", n, per), "WORKER_WORKERS=20")
	}
	wr := recordWindows(rc, per, "")
	var batch []crontab.Job
	var ns []int
	for i := range jobs {
		batch = append(batch, crontab.Job{Value: tasks.Count{N: i, Sleep: sleep, Spans: true}})
		ns = append(ns, i)
	}
	start := time.Now()
	if _, err := tasks.NewClient(rc).EnqueueMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Mid-drain (past the first window), kill a worker that runs jobs
	// that all started less than sleep-250ms ago and none of whose runs
	// ended in the last 200ms: none of its runs is between its end and its
	// ack, so each of its jobs is run again, and once.
	var victim string
	var held int
	testio.WaitFor(t, 15*time.Second, "a worker with fresh runs only, mid-drain", func() bool {
		spans := readSpans(t, srv)
		if len(spans) <= n || len(spans) > jobs-n {
			return false
		}
		now := time.Now()
		fresh, stale := map[string]int{}, map[string]bool{}
		for _, s := range spans {
			switch {
			case s.end.IsZero() && now.Sub(s.start) < sleep-250*time.Millisecond:
				fresh[s.process]++
			case s.end.IsZero() || now.Sub(s.end) < 200*time.Millisecond:
				stale[s.process] = true
			}
		}
		for p, k := range fresh {
			if !stale[p] && ws[p] != nil {
				victim, held = p, k
				return true
			}
		}
		return false
	})
	ws[victim].kill()
	killed := time.Now()
	testio.WaitFor(t, 25*time.Second, "every job to end", func() bool {
		done := map[int]bool{}
		for _, r := range readJobs(t, srv, tasks.JobsKey) {
			done[r.n] = true
		}
		return len(done) == jobs
	})
	drained := time.Since(start)
	awaitNoMoreDeliveries(t, rc, killed)
	starts := wr.finish(t, per)[""]

	checkRate(t, "type window", starts, n, per)
	// Every claim is in the window: a job's claims are its last attempt
	// (one killed between its claim and its start shows as attempt 2).
	claims := map[int]int{}
	redelivered := 0
	for _, r := range readJobs(t, srv, tasks.JobStartsKey) {
		claims[r.n] = max(claims[r.n], r.attempt)
		if r.attempt > 1 {
			redelivered++
			if r.process == victim {
				t.Errorf("job %d delivered again to the killed worker %s", r.n, victim)
			}
		}
	}
	total := 0
	for _, c := range claims {
		total += c
	}
	if len(starts) != total {
		t.Errorf("the window recorded %d starts, want the %d claims of the jobs", len(starts), total)
	}
	if redelivered < held || held == 0 {
		t.Errorf("%d runs were deliveries again, want at least the %d the killed worker ran", redelivered, held)
	}
	// Delivered again after their lease, which the kill left to run out.
	var again time.Duration // the first delivery again, after the kill
	for _, s := range readSpans(t, srv) {
		if s.process == victim || attemptOf(s) < 2 {
			continue
		}
		if d := s.start.Sub(killed); again == 0 || d < again {
			again = d
		}
		if s.start.Before(killed.Add(workerJobLease - 2*workerHeartbeat)) {
			t.Errorf("run %s started %v after the kill, before the killed worker's lease ran out", s.run, s.start.Sub(killed))
		}
	}
	endedOnce(t, srv, ns)
	checkNoneDead(t, rc)
	t.Logf("killed %s running %d jobs %v after the enqueue; %d jobs drained in %v with %d deliveries again, the first %v after the kill",
		victim, held, killed.Sub(start).Round(time.Millisecond), jobs, drained.Round(time.Millisecond), redelivered, again.Round(time.Millisecond))
}

// attemptOf returns the attempt of a span's run ("n|process|attempt").
func attemptOf(s span) int {
	a, _ := strconv.Atoi(s.run[strings.LastIndexByte(s.run, '|')+1:])
	return a
}

// A rate key's window holds across processes, and a full window of one
// key holds back no job of another: a backlog of key "big" (three
// windows' worth) enqueued ahead of a window's worth of key "small", on
// three workers; small's jobs all start before big's window first has to
// slide, and end well before big's last.
func TestRateKeyWindowsHoldApartAcrossProcesses(t *testing.T) {
	t.Parallel()
	const (
		n, per     = 50, time.Second
		big, small = 3 * n, n / 2
		smallBase  = 1000
		sleep      = 100 * time.Millisecond
	)
	srv := redistest.Start(t)
	rc := srv.Client(t)
	ctx := context.Background()
	rate := fmt.Sprintf("WORKER_RATE=%d/%v", n, per)
	for i := range 3 {
		startWorker(t, srv, fmt.Sprintf("key%d", i), "WORKER_TASKS=count", rate)
	}
	all := crontab.NewRegistry()
	if err := tasks.Register(all); err != nil {
		t.Fatal(err)
	}
	reg, err := tasks.LimitCount(all, 0, crontab.Rate{N: n, Per: per})
	if err != nil {
		t.Fatal(err)
	}
	c := crontab.NewClient(rc, reg)
	wr := recordWindows(rc, per, "", "big", "small")
	var ns []int
	enqueue := func(key string, from, count int) {
		var batch []crontab.Job
		for i := from; i < from+count; i++ {
			batch = append(batch, crontab.Job{Value: tasks.Count{N: i, Sleep: sleep, Spans: true},
				Options: []crontab.EnqueueOption{crontab.RateKey(key)}})
			ns = append(ns, i)
		}
		if _, err := c.EnqueueMany(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	enqueue("big", 0, big)
	enqueue("small", smallBase, small)
	testio.WaitFor(t, 25*time.Second, "every job to end", func() bool {
		return len(readJobs(t, srv, tasks.JobsKey)) >= big+small
	})
	windows := wr.finish(t, per)
	checkRate(t, `key "big"`, windows["big"], n, per)
	checkRate(t, `key "small"`, windows["small"], n, per)
	if len(windows["big"]) != big || len(windows["small"]) != small || len(windows[""]) != 0 {
		t.Errorf("windows hold %d (big), %d (small), %d (the type's) starts: want %d, %d, 0",
			len(windows["big"]), len(windows["small"]), len(windows[""]), big, small)
	}
	endedOnce(t, srv, ns)
	checkNoneDead(t, rc)
	if t.Failed() {
		return
	}
	// On Redis time: big's start n+1 waited for big's window to slide;
	// small's did not wait for it.
	slid, lastSmall := windows["big"][n], windows["small"][small-1]
	if !lastSmall.Before(slid) {
		t.Errorf("small's last start %v after big's first start: not before big's window slid (%v): big's full window held small back",
			lastSmall.Sub(windows["big"][0]), slid.Sub(windows["big"][0]))
	}
	var smallEnd, bigEnd time.Time
	for _, s := range readSpans(t, srv) {
		var k int
		_, _ = fmt.Sscanf(s.run, "%d|", &k)
		if k >= smallBase {
			smallEnd = later(smallEnd, s.end)
		} else {
			bigEnd = later(bigEnd, s.end)
		}
	}
	if bigEnd.Sub(smallEnd) < per {
		t.Errorf("small's jobs ended %v before big's, want at least a window (%v) before", bigEnd.Sub(smallEnd), per)
	}
	t.Logf("small's last start %v and last end %v after big's first start; big's window slid at %v, big's last end %v",
		lastSmall.Sub(windows["big"][0]), smallEnd.Sub(windows["big"][0]), slid.Sub(windows["big"][0]), bigEnd.Sub(windows["big"][0]))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
