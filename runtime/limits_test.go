package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// At the largest settings a claim takes 2 * MaxBatch jobs in one script
// call, past Lua's unpack bound of about 8,000 values. The claim once
// failed there after it had taken the ids out of the queue, and their
// records stayed in jobs:data for good. Every job must run, and nothing
// stay behind.
func TestLargestBatchLosesNoJobs(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	var ran atomic.Int32
	reg := testRegistry(t, TaskConfig{Name: "count", New: func() TaskInterface { return &countJob{&ran} }})
	c := NewClient(rdb, reg)
	const n = 10000
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Value: countJob{}}
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, rdb, reg, WithWorkers(MaxBatch), WithBatch(MaxBatch))
	waitFor(t, 30*time.Second, "10,000 runs", func() bool { return ran.Load() == n })
	k := newKeys("crontab")
	waitFor(t, 10*time.Second, "the acks", func() bool {
		return rdb.HLen(ctx, k.JobData()).Val() == 0 && rdb.HLen(ctx, k.Owners()).Val() == 0
	})
	if left := rdb.ZCard(ctx, k.Jobs()).Val(); left != 0 {
		t.Errorf("%d jobs still queued", left)
	}
	if got := ran.Load(); got != n {
		t.Errorf("%d runs, want %d", got, n)
	}
}

// Every option refuses a value outside its documented range, naming the
// option, instead of clamping or ignoring it.
func TestOptionsRefuseValuesOutsideTheirRange(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	reg := NewRegistry()
	bad := []struct {
		name string
		opt  Option
	}{
		{"WithNamespace", WithNamespace("")},
		{"WithNamespace", WithNamespace("a{b}")},
		{"WithNamespace", WithNamespace(strings.Repeat("n", MaxNamespace+1))},
		{"WithWorkers", WithWorkers(0)},
		{"WithWorkers", WithWorkers(MaxWorkers + 1)},
		{"WithGracePeriod", WithGracePeriod(-time.Second)},
		{"WithMaxSleep", WithMaxSleep(0)},
		{"WithMaxSleep", WithMaxSleep(2 * time.Minute)},
		{"WithBatch", WithBatch(0)},
		{"WithBatch", WithBatch(MaxBatch + 1)},
		{"WithProcessID", WithProcessID("")},
		{"WithListener", WithListener(nil)},
		{"WithMiddleware", WithMiddleware(nil)},
		{"WithHistory", WithHistory(0, time.Hour)},
		{"WithHistory", WithHistory(10, time.Millisecond)},
		{"WithProcessTTL", WithProcessTTL(100 * time.Millisecond)},
		{"WithProcessTTL", WithProcessTTL(time.Hour)},
		{"WithRunLease", WithRunLease(0)},
		{"WithRunLease", WithRunLease(MinRunLease - time.Millisecond)},
		{"WithRunLease", WithRunLease(MaxRunLease + time.Millisecond)},
		{"WithRetryBackoff", WithRetryBackoff(0)},
		{"WithDeadLetters", WithDeadLetters(-1)},
		{"WithLocalClock", WithLocalClock(nil)},
		{"WithStartTimeout", WithStartTimeout(-time.Second)},
		{"WithStartTimeout", WithStartTimeout(MinStartTimeout - time.Millisecond)},
		{"WithStartTimeout", WithStartTimeout(MaxStartTimeout + time.Millisecond)},
	}
	for _, b := range bad {
		_, err := NewScheduler(rdb, reg, b.opt)
		if err == nil || !strings.Contains(err.Error(), b.name) {
			t.Errorf("NewScheduler with a bad %s: err %v, want one naming the option", b.name, err)
		}
	}
	if _, err := NewScheduler(rdb, reg, WithBatch(MaxBatch), WithWorkers(MaxWorkers)); err != nil {
		t.Errorf("the maximum values: %v", err)
	}
	if _, err := NewScheduler(rdb, reg, nil); err == nil {
		t.Error("a nil option was accepted")
	}
}

// An option that only the other of Scheduler and Client uses is an error,
// not silently dropped.
func TestOptionsOfTheOtherUserAreErrors(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	if _, err := NewScheduler(rdb, NewRegistry(), WithMaxPayload(10)); err == nil ||
		!strings.Contains(err.Error(), "WithMaxPayload is a Client option") {
		t.Errorf("NewScheduler(WithMaxPayload): %v", err)
	}
	c := NewClient(rdb, nil, WithWorkers(8))
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "WithWorkers is a Scheduler option") {
		t.Fatalf("NewClient(WithWorkers).Err(): %v", err)
	}
	if _, err := c.EnqueueRaw(ctx, "x", nil); err != c.Err() {
		t.Errorf("EnqueueRaw on a misconfigured client: %v, want %v", err, c.Err())
	}
	if _, err := c.inspect().Overview(ctx); err != c.Err() {
		t.Errorf("Overview on a misconfigured client: %v, want %v", err, c.Err())
	}
	if err := NewClient(rdb, nil, WithNamespace("ok"), WithProcessTTL(time.Second), WithLogger(nil)).Err(); err != nil {
		t.Errorf("options both use: %v", err)
	}
	in := NewInspector(rdb, WithMaxPayload(10))
	if err := in.Err(); err == nil || !strings.Contains(err.Error(), "WithMaxPayload is a Client option: an Inspector cannot use it") {
		t.Errorf("NewInspector(WithMaxPayload).Err(): %v", err)
	}
	if _, err := in.ListTasks(ctx); err != in.Err() {
		t.Errorf("ListTasks on a misconfigured inspector: %v, want %v", err, in.Err())
	}
	if err := NewInspector(rdb, WithNamespace("ok"), WithProcessTTL(time.Second)).Err(); err != nil {
		t.Errorf("options an Inspector uses: %v", err)
	}
	if err := NewClient(nil, nil).Err(); err == nil {
		t.Error("NewClient(nil) is usable")
	}
}
