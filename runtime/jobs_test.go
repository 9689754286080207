package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// smsJob is a job type with a payload.
type smsJob struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

var (
	smsMu   sync.Mutex
	smsSeen = map[string][]smsSeenRun{} // by test name (in Text)
)

type smsSeenRun struct {
	job     smsJob
	run     RunInfo
	started time.Time
}

func (j smsJob) Handle(ctx context.Context) error {
	run, _ := Run(ctx)
	smsMu.Lock()
	smsSeen[j.To] = append(smsSeen[j.To], smsSeenRun{j, run, time.Now()})
	smsMu.Unlock()
	if strings.HasPrefix(j.Text, "fail") {
		return errors.New("gateway down")
	}
	return nil
}

func smsRuns(to string) []smsSeenRun {
	smsMu.Lock()
	defer smsMu.Unlock()
	return append([]smsSeenRun(nil), smsSeen[to]...)
}

func smsRegistry(t testing.TB, retries int) *Registry {
	return testRegistry(t, TaskConfig{Name: "sms", Retries: retries, New: func() TaskInterface { return new(smsJob) }})
}

func TestJobRunsOnceAtItsTimeWithItsPayload(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	for range 2 {
		runScheduler(t, rdb, reg)
	}
	c := NewClient(rdb, reg)
	to := unique(t)
	enqueued := time.Now()
	id, err := c.Enqueue(ctx, smsJob{To: to, Text: "hi"}, In(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the job to run", func() bool { return len(smsRuns(to)) > 0 })
	time.Sleep(300 * time.Millisecond)
	runs := smsRuns(to)
	if len(runs) != 1 {
		t.Fatalf("job ran %d times, want once", len(runs))
	}
	r := runs[0]
	if r.job.Text != "hi" || r.run.JobID != id || r.run.Task != "sms" || r.run.Attempt != 1 {
		t.Errorf("run %+v", r)
	}
	if r.started.Before(enqueued.Add(300 * time.Millisecond)) {
		t.Errorf("job started %v after enqueue, before its 300ms delay", r.started.Sub(enqueued))
	}
	if err := c.Cancel(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Cancel after the run: %v, want ErrNotFound", err)
	}
	if err := c.Cancel(ctx, "no-such-job"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Cancel of an unknown id: %v, want ErrNotFound", err)
	}
	hist, _ := c.inspect().History(ctx, "sms", 0)
	if len(hist) != 1 || hist[0].JobID != id || hist[0].Outcome != OutcomeOK {
		t.Errorf("history %+v", hist)
	}
	if st, _ := c.inspect().Stats(ctx, "sms"); st != (Stats{Runs: 1}) {
		t.Errorf("stats %+v", st)
	}
}

func TestCancelledJobsNeverRun(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	c := NewClient(rdb, reg)
	keep, drop := unique(t)+"/keep", unique(t)+"/drop"
	var jobs []Job
	for i := range 1000 {
		to := keep
		if i%2 == 0 {
			to = drop
		}
		jobs = append(jobs, Job{Value: smsJob{To: to, Text: fmt.Sprint(i)}, Options: []EnqueueOption{In(time.Second)}})
	}
	ids, err := c.EnqueueMany(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if i%2 == 0 {
			if err := c.Cancel(ctx, id); err != nil {
				t.Fatalf("cancel %s: %v", id, err)
			}
		}
	}
	runScheduler(t, rdb, reg)
	waitFor(t, 10*time.Second, "the kept jobs", func() bool { return len(smsRuns(keep)) == 500 })
	time.Sleep(300 * time.Millisecond)
	if n := len(smsRuns(drop)); n != 0 {
		t.Errorf("%d cancelled jobs ran", n)
	}
	if n := len(smsRuns(keep)); n != 500 {
		t.Errorf("%d of 500 kept jobs ran", n)
	}
}

func TestRetriesBackoffAndDeadLetters(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 2)
	runScheduler(t, rdb, reg, WithRetryBackoff(100*time.Millisecond))
	c := NewClient(rdb, reg)
	to := unique(t)
	id, err := c.Enqueue(ctx, smsJob{To: to, Text: "fail always"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the job to be dead-lettered", func() bool {
		dead, _ := c.inspect().DeadJobs(ctx, 0)
		return len(dead) == 1
	})
	runs := smsRuns(to)
	if len(runs) != 3 {
		t.Fatalf("failing job with retries=2 ran %d times, want 3", len(runs))
	}
	for i, r := range runs {
		if r.run.Attempt != i+1 {
			t.Errorf("run %d has attempt %d", i, r.run.Attempt)
		}
		if i > 0 {
			gap := r.started.Sub(runs[i-1].started)
			// The backoff is at least 80% of its base (jitter). The retry's
			// due time is kept in whole milliseconds of the server's clock,
			// which the scheduler estimates: allow 2 ms for both.
			want := 100 * time.Millisecond << (i - 1)
			if least := want*8/10 - 2*time.Millisecond; gap < least {
				t.Errorf("retry %d came %v after the previous attempt, want backoff ≥ %v", i, gap, least)
			}
		}
	}
	dead, _ := c.inspect().DeadJobs(ctx, 0)
	if d := dead[0]; d.ID != id || d.Task != "sms" || d.Attempts != 3 || d.Error != "gateway down" {
		t.Errorf("dead job %+v", d)
	}
	var payload smsJob
	if err := json.Unmarshal(dead[0].Payload, &payload); err != nil || payload.To != to {
		t.Errorf("dead payload %s: %v", dead[0].Payload, err)
	}
	if st, _ := c.inspect().Stats(ctx, "sms"); st != (Stats{Runs: 3, Failures: 3}) {
		t.Errorf("stats %+v", st)
	}

	// Re-enqueued from the dead letters, it runs again from attempt 1.
	if err := c.inspect().RetryDead(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the retried job", func() bool { return len(smsRuns(to)) >= 4 })
	if r := smsRuns(to)[3]; r.run.Attempt != 1 {
		t.Errorf("re-enqueued dead job ran with attempt %d, want 1", r.run.Attempt)
	}
	if err := c.inspect().RetryDead(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RetryDead of an unknown id: %v", err)
	}
	// Per-job override: no retries.
	to2 := to + "/once"
	if _, err := c.Enqueue(ctx, smsJob{To: to2, Text: "fail"}, MaxRetries(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the no-retry job to die", func() bool {
		dead, _ := c.inspect().DeadJobs(ctx, 0)
		return len(dead) >= 2
	})
	if n := len(smsRuns(to2)); n != 1 {
		t.Errorf("MaxRetries(0) job ran %d times", n)
	}
}

func TestEnqueueValidation(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, smsRegistry(t, 0), WithMaxPayload(100))
	if _, err := c.Enqueue(ctx, smsJob{To: strings.Repeat("x", 200)}); err == nil || !strings.Contains(err.Error(), "limit is 100") {
		t.Errorf("oversized payload: %v", err)
	}
	if _, err := c.Enqueue(ctx, probeTask[m0]{}); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("unregistered type: %v", err)
	}
	if _, err := c.EnqueueRaw(ctx, "sms", json.RawMessage("{not json")); err == nil {
		t.Error("invalid raw JSON accepted")
	}
	id, err := c.Enqueue(ctx, smsJob{To: "a"}, WithID("order-42"), In(time.Hour))
	if err != nil || id != "order-42" {
		t.Fatalf("WithID: %q, %v", id, err)
	}
	if _, err := c.Enqueue(ctx, smsJob{To: "b"}, WithID("order-42")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second enqueue with the same id: %v, want ErrDuplicate", err)
	}
	if n, _ := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Result(); n != 1 {
		t.Errorf("%d jobs pending, want 1", n)
	}
}

func TestUnknownJobTypeIsKept(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	runScheduler(t, rdb, smsRegistry(t, 0), WithMaxSleep(100*time.Millisecond))
	c := NewClient(rdb, nil)
	id, err := c.EnqueueRaw(ctx, "from-a-newer-deploy", json.RawMessage(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if ok, _ := rdb.HExists(ctx, k.JobData(), id).Result(); !ok {
		t.Fatal("job of an unknown type was dropped")
	}
	// Pending, or for a moment claimed by a process that is putting it back.
	tx := rdb.TxPipeline() // both read at one moment
	pend, flight := tx.ZScore(ctx, k.Jobs(), id), tx.HGet(ctx, k.Owners(), id)
	_, _ = tx.Exec(ctx)
	if pendErr, flightErr := pend.Err(), flight.Err(); pendErr != nil && flightErr != nil {
		t.Errorf("job of an unknown type is neither pending nor in flight: %v, %v", pendErr, flightErr)
	}
}

// TestRawProtocolEnqueue enqueues with redis-cli, as a producer in another
// language would: ZADD + HSET, documented in the package doc.
func TestRawProtocolEnqueue(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	runScheduler(t, rdb, smsRegistry(t, 0))
	to := unique(t)
	host, port, _ := strings.Cut(srv.Addr(), ":")
	due := time.Now().Add(200 * time.Millisecond).UnixMilli()
	env := fmt.Sprintf(`{"task":"sms","payload":{"to":%q,"text":"from php"}}`, to)
	for _, args := range [][]string{
		{"HSET", "{crontab}:jobs:data", "php-1", env},
		{"ZADD", "{crontab}:jobs", fmt.Sprint(due), "php-1"},
		{"PUBLISH", "{crontab}:wake", "job"},
	} {
		out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v: %s", args, err, out)
		}
	}
	waitFor(t, 5*time.Second, "the raw job", func() bool { return len(smsRuns(to)) == 1 })
	if r := smsRuns(to)[0]; r.job.Text != "from php" || r.run.JobID != "php-1" {
		t.Errorf("raw job ran as %+v", r)
	}
}

func TestRunTimeTasks(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := smsRegistry(t, 0)
	runScheduler(t, rdb, reg)
	runScheduler(t, rdb, reg)
	to := unique(t)
	c := NewClient(rdb, reg)
	err := c.SetTask(ctx, TaskSpec{Key: "nightly sms", Type: "sms", Params: smsJob{To: to, Text: "tick"}, Expression: "every:1s"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the run-time task to fire", func() bool { return len(smsRuns(to)) >= 2 })
	runs := smsRuns(to)
	if runs[0].job.Text != "tick" || runs[0].run.Task != "nightly sms" || runs[1].run.Fire.Sub(runs[0].run.Fire) != time.Second {
		t.Errorf("runs %+v", runs[:2])
	}
	// Changed at run time: new params are seen by every process.
	if err := c.SetTask(ctx, TaskSpec{Key: "nightly sms", Type: "sms", Params: smsJob{To: to, Text: "tock"}, Expression: "every:1s"}); err != nil {
		t.Fatal(err)
	}
	n := len(smsRuns(to))
	waitFor(t, 3*time.Second, "the changed params", func() bool {
		r := smsRuns(to)
		return len(r) > n+1 && r[len(r)-1].job.Text == "tock"
	})
	if err := c.RemoveTask(ctx, "nightly sms"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	n = len(smsRuns(to))
	time.Sleep(1500 * time.Millisecond)
	if m := len(smsRuns(to)); m != n {
		t.Errorf("removed task ran %d more times", m-n)
	}
	if err := c.RemoveTask(ctx, "nightly sms"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}
	for _, bad := range []TaskSpec{
		{Key: "x", Type: "nope", Expression: "every:1s"},
		{Key: "x", Type: "sms", Expression: "every:0s"},
		{Key: "x", Type: "sms", Expression: "every:1s", TZ: "Mars/Base"},
		{Key: "x", Type: "sms", Expression: "every:1s", Params: []int{1}},
	} {
		if err := c.SetTask(ctx, bad); err == nil {
			t.Errorf("SetTask(%+v) accepted", bad)
		}
	}
}

func TestHistoryIsBoundedByCountAndAge(t *testing.T) {
	t.Parallel()
	// runTen runs ten jobs with the given bounds, a record three hours old
	// at the tail of the history first, and returns the history.
	runTen := func(t *testing.T, records int, age time.Duration) ([]Record, time.Duration) {
		rdb := redistest.Start(t).Client(t)
		ctx := context.Background()
		k := newKeys("crontab")
		reg := smsRegistry(t, 0)
		old := Record{Task: "sms", Fire: time.Now().Add(-3 * time.Hour), End: time.Now().Add(-3 * time.Hour), Outcome: OutcomeOK}
		rdb.RPush(ctx, k.History("sms"), old.encode())
		runScheduler(t, rdb, reg, WithHistory(records, age))
		c := NewClient(rdb, reg)
		to := t.Name() + newJobID() // unique across -count runs
		for i := range 10 {
			if _, err := c.Enqueue(ctx, smsJob{To: to, Text: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, 5*time.Second, "the jobs and their records", func() bool {
			st, _ := c.inspect().Stats(ctx, "sms")
			return len(smsRuns(to)) == 10 && st.Runs == 10
		})
		hist, err := c.inspect().History(ctx, "sms", 0)
		if err != nil {
			t.Fatal(err)
		}
		ttl, _ := rdb.PTTL(ctx, k.History("sms")).Result()
		return hist, ttl
	}
	t.Run("count", func(t *testing.T) {
		t.Parallel()
		hist, _ := runTen(t, 3, 7*24*time.Hour)
		if len(hist) != 3 {
			t.Errorf("history holds %d records, want the cap of 3", len(hist))
		}
	})
	t.Run("age", func(t *testing.T) {
		t.Parallel()
		hist, ttl := runTen(t, 100, time.Hour)
		if len(hist) != 10 {
			t.Errorf("history holds %d records, want the 10 new ones (the 3h-old one dropped by the 1h age)", len(hist))
		}
		for _, r := range hist {
			if r.End.Before(time.Now().Add(-time.Hour)) {
				t.Errorf("a record older than the age bound survived: %+v", r)
			}
		}
		if ttl <= 0 || ttl > time.Hour {
			t.Errorf("history key TTL %v, want it to expire within the age bound (1h)", ttl)
		}
	})
}

func TestDeadLettersAreBounded(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	reg := smsRegistry(t, 0)
	runScheduler(t, rdb, reg, WithDeadLetters(2))
	c := NewClient(rdb, reg)
	to := t.Name() + newJobID() // unique across -count runs
	for i := range 4 {
		if _, err := c.Enqueue(ctx, smsJob{To: to, Text: fmt.Sprintf("fail %d", i)}, In(time.Duration(i)*100*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "the failing jobs", func() bool { return len(smsRuns(to)) == 4 })
	waitFor(t, 5*time.Second, "their acks", func() bool {
		st, _ := c.inspect().Stats(ctx, "sms")
		return st.Failures == 4
	})
	if n, _ := rdb.ZCard(ctx, k.Dead()).Result(); n != 2 {
		t.Errorf("%d dead jobs, want the cap of 2", n)
	}
	if n, _ := rdb.HLen(ctx, k.DeadData()).Result(); n != 2 {
		t.Errorf("%d dead-job records, want 2 (dropped ids keep no data)", n)
	}
	dead, _ := c.inspect().DeadJobs(ctx, 0)
	for _, d := range dead {
		if d.Error != "gateway down" {
			t.Errorf("dead job %+v", d)
		}
	}
}

// panicJob panics when asked to, else records that it ran.
type panicJob struct {
	Panic bool   `json:"panic"`
	Key   string `json:"key"`
}

var panicRuns sync.Map // key -> *atomic.Int64 of attempts started

func (j panicJob) Handle(ctx context.Context) error {
	n, _ := panicRuns.LoadOrStore(j.Key, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if j.Panic {
		panic("boom " + j.Key)
	}
	return nil
}

// A job whose handler panics is a failed run with the panic in its error,
// retried per its retries and then dead-lettered; the scheduler keeps
// running and runs the next job.
func TestJobPanicIsAFailedRun(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := unique(t)
	reg := testRegistry(t, TaskConfig{Name: name, Retries: 1, New: func() TaskInterface { return new(panicJob) }})
	var mu sync.Mutex
	var failed []error
	s, _ := runScheduler(t, rdb, reg, WithRetryBackoff(50*time.Millisecond), WithHooks(Hooks{
		Failed: func(_ context.Context, _ RunInfo, err error) { mu.Lock(); failed = append(failed, err); mu.Unlock() }}))
	c := NewClient(rdb, reg)
	key := name + "/panics"
	id, err := c.Enqueue(ctx, panicJob{Panic: true, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the panicking job to be dead-lettered", func() bool {
		dead, _ := c.inspect().DeadJobs(ctx, 0)
		return len(dead) == 1
	})
	dead, _ := c.inspect().DeadJobs(ctx, 0)
	if d := dead[0]; d.ID != id || d.Attempts != 2 || !strings.Contains(d.Error, "panic: boom "+key) {
		t.Errorf("dead job %+v; want 2 attempts (retries=1) and the panic in the error", d)
	}
	if n, _ := panicRuns.Load(key); n == nil || n.(*atomic.Int64).Load() != 2 {
		t.Errorf("the panicking job started %v times, want 2", n)
	}
	waitFor(t, 5*time.Second, "two failed runs in the history", func() bool { return historyOutcomes(t, s, name)[OutcomeFailed] == 2 })
	recs, _ := s.History(ctx, name, 0)
	for _, r := range recs {
		if r.Outcome != OutcomeFailed || !strings.Contains(r.Error, "panic: boom "+key) {
			t.Errorf("history record %+v; want failed with the panic", r)
		}
	}
	mu.Lock()
	if len(failed) != 2 || !strings.Contains(failed[0].Error(), "panic: boom") {
		t.Errorf("Failed hook got %v, want the two panics", failed)
	}
	mu.Unlock()

	// The scheduler lives on: the next job of the same type runs.
	next := name + "/next"
	if _, err := c.Enqueue(ctx, panicJob{Key: next}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the next job to run", func() bool { return historyOutcomes(t, s, name)[OutcomeOK] == 1 })
	if n, _ := panicRuns.Load(next); n == nil || n.(*atomic.Int64).Load() != 1 {
		t.Errorf("the next job started %v times, want once", n)
	}
}
