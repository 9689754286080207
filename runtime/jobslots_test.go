package runtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rdbpkg "github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// slotFieldsSum returns the n of a slots hash's live fields (value
// "n|deadline_ms").
func slotFieldsSum(fields map[string]string, nowMS int64) (sum int64) {
	for _, v := range fields {
		a, b, _ := strings.Cut(v, "|")
		n, _ := strconv.ParseInt(a, 10, 64)
		d, _ := strconv.ParseInt(b, 10, 64)
		if d > nowMS {
			sum += n
		}
	}
	return sum
}

// max_running across four schedulers that claim ahead of their workers
// (a capped type without a rate prefetches): the handlers never run more
// than the cap at once; the slots hash's live fields never sum to more
// than the cap; a scheduler that stops deletes its field.
func TestMaxRunningSlotsHashHoldsTheCap(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := unique(t)
	flowTest(name)
	const capN, jobs = 4, 300
	reg := flowRegistry(t, TaskConfig{MaxRunning: capN})
	var stops []func()
	for range 4 {
		_, stop := runScheduler(t, rdb, reg, WithWorkers(8))
		stops = append(stops, stop)
	}
	key := newKeys("crontab").Slots("flow")
	var most atomic.Int64
	var badType atomic.Value
	done := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if typ := rdb.Type(ctx, key).Val(); typ != "hash" && typ != "none" {
				badType.Store(typ)
			}
			f := rdb.HGetAll(ctx, key).Val()
			if s := slotFieldsSum(f, time.Now().UnixMilli()); s > most.Load() {
				most.Store(s)
			}
			time.Sleep(time.Millisecond)
		}
	})
	c := NewClient(rdb, reg)
	enqueueFlow(t, c, jobs, flowJob{Test: name, SleepMS: 3})
	allRanOnce(t, name, jobs, 30*time.Second)
	close(done)
	sampler.Wait()
	if m, _, _ := flowRead(name); m > capN {
		t.Errorf("at most %d jobs ran at once, want <= %d (max_running)", m, capN)
	}
	if typ := badType.Load(); typ != nil {
		t.Errorf("the slots key is a %v, want a hash", typ)
	}
	if m := most.Load(); m > capN || m == 0 {
		t.Errorf("the slots hash's live fields summed to at most %d, want 1..%d", m, capN)
	}
	for _, stop := range stops {
		stop()
	}
	if f := rdb.HGetAll(ctx, key).Val(); len(f) != 0 {
		t.Errorf("after a graceful stop the slots hash has %v, want no field", f)
	}
}

// kickJob counts its runs.
type kickJob struct{}

var kickRuns atomic.Int64

func (kickJob) Handle(context.Context) error { kickRuns.Add(1); return nil }

// A claim that left jobs of a capped type because this process's own
// slots were all in flight is made again as soon as one of them ends, not
// after the claim's retry: with the retry an hour (and max-sleep its
// default second), 200 instant jobs with max_running 2 would take 100
// rounds of a second (50, taking JobSlotsAhead jobs per slot); they all
// run within 20 s.
func TestMaxRunningJobEndClaimsAtOnce(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	kickRuns.Store(0)
	reg := testRegistry(t, TaskConfig{Name: "kick", MaxRunning: 2, New: func() TaskInterface { return new(kickJob) }})
	s, err := NewScheduler(rdb, reg, WithLogger(testLogger()), WithProcessTTL(time.Second), WithWorkers(10))
	if err != nil {
		t.Fatal(err)
	}
	s.jobs.scanRetry = time.Hour
	c := NewClient(rdb, reg)
	for range 200 {
		if _, err := c.Enqueue(ctx, kickJob{}); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, 20*time.Second, "the 200 jobs", func() bool { return kickRuns.Load() == 200 })
	// Each claim takes at most JobSlotsAhead jobs per slot of 2.
	if n, least := s.jobs.claimSeq.Load(), uint64(200/(2*rdbpkg.JobSlotsAhead)); n < least {
		t.Errorf("%d claims for 200 jobs %d at a time, want >= %d", n, 2*rdbpkg.JobSlotsAhead, least)
	}
}

// slotJob fails when told to.
type slotJob struct {
	Fail    bool `json:"fail"`
	SleepMS int  `json:"sleep_ms"`
}

func (j slotJob) Handle(context.Context) error {
	time.Sleep(time.Duration(j.SleepMS) * time.Millisecond)
	if j.Fail {
		return errors.New("told to fail")
	}
	return nil
}

// Every way a claimed job of a capped type ends frees its local slot
// exactly once: run ok, failed and retried, failed for good, dead-lettered
// for a bad envelope, given back while waiting for a worker at the stop;
// a job of a type this process lacks (released) holds none. The count of
// jobs in flight never goes below 0 and is 0 at the end.
func TestJobSlotsFreedOnceOnEveryPath(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t, TaskConfig{Name: "slotted", MaxRunning: 50, Retries: 1, New: func() TaskInterface { return new(slotJob) }})
	logs, logger := newLogCapture()
	s, err := NewScheduler(rdb, reg, WithLogger(logger), WithProcessTTL(time.Second), WithWorkers(1),
		WithRetryBackoff(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(rdb, reg)
	for range 5 {
		if _, err := c.Enqueue(ctx, slotJob{SleepMS: 20}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := c.Enqueue(ctx, slotJob{Fail: true}); err != nil {
			t.Fatal(err)
		}
	}
	k := newKeys("crontab")
	due := float64(time.Now().UnixMilli())
	must(t, rdb.HSet(ctx, k.JobData(), "bad", `{"task":"slotted","payload":`, "other", `{"task":"other"}`).Err())
	must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: due, Member: "bad"}, redis.Z{Score: due, Member: "other"}).Err())
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(runCtx) }()
	waitFor(t, 10*time.Second, "the scheduler", func() bool {
		select {
		case <-s.started:
			return true
		default:
			return false
		}
	})
	s.jobs.jobLimits() // its capped map, set once
	var low atomic.Int64
	watch := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		for {
			select {
			case <-watch:
				return
			default:
			}
			if s := s.jobs.capped["slotted"]; s != nil {
				low.Store(min(low.Load(), s.inflight.Load()))
			}
			time.Sleep(200 * time.Microsecond)
		}
	})
	waitFor(t, 15*time.Second, "the failing jobs in the dead letters", func() bool {
		return rdb.ZCard(ctx, k.Dead()).Val() == 3 // two failed for good, one bad envelope
	})
	// Long jobs on one worker: the claims take some ahead (the credit of
	// the jobs run), which wait for the worker when the scheduler stops.
	for range 10 {
		if _, err := c.Enqueue(ctx, slotJob{SleepMS: 300}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "a claimed job waiting for the worker", func() bool { return len(s.jobs.waiting) > 0 })
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	close(watch)
	watcher.Wait()
	logs.expectLog(t, "claimed jobs given back")
	if n := s.jobs.capped["slotted"].inflight.Load(); n != 0 {
		t.Errorf("%d jobs in flight after the stop, want 0 (a path did not free its slot)", n)
	}
	if l := low.Load(); l < 0 {
		t.Errorf("jobs in flight went down to %d: a path freed a slot twice", l)
	}
	if f := rdb.HGetAll(ctx, k.Slots("slotted")).Val(); len(f) != 0 {
		t.Errorf("after the stop the slots hash has %v, want no field", f)
	}
}

// A process whose every type is capped claims its whole hand
// (JobSlotsAhead per slot, less what it holds) even when that is more than
// its free workers: the jobs beyond its slots wait in it for a slot, not
// for a worker. 400 jobs of a type capped at 10, on 12 workers: claims of
// at most the free workers would take 34 or more; claims of the hand take
// about 400 / (JobSlotsAhead/2 * 10). The cap holds throughout.
func TestMaxRunningClaimsTheHandBeyondWorkers(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	flowTest(name)
	const capN, workers, jobs = 10, 12, 400
	reg := flowRegistry(t, TaskConfig{MaxRunning: capN})
	c := NewClient(rdb, reg)
	enqueueFlow(t, c, jobs, flowJob{Test: name, SleepMS: 1})
	s, stop := runScheduler(t, rdb, reg, WithWorkers(workers))
	defer stop()
	allRanOnce(t, name, jobs, 30*time.Second)
	if m, _, _ := flowRead(name); m > capN {
		t.Errorf("at most %d jobs ran at once, want <= %d (max_running)", m, capN)
	}
	if n, most := s.jobs.claimSeq.Load(), uint64(jobs/workers/2); n > most {
		t.Errorf("%d claims for %d jobs, want <= %d: each claim takes the hand (%d per slot), not only the %d workers",
			n, jobs, most, rdbpkg.JobSlotsAhead, workers)
	}
}
