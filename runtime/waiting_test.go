package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// holdJob blocks while Hold, until holdGate closes (at the end of the
// test that uses it), so that its test sees a cap full and workers busy.
type holdJob struct {
	Hold bool   `json:"hold"`
	N    string `json:"n"`
}

var holdGate = make(chan struct{})

// One Go type per registered name (a registry maps each to one name).
type (
	holdCapped struct{ holdJob }
	holdRated  struct{ holdJob }
	holdKeyed  struct{ holdJob }
	holdFree   struct{ holdJob }
	holdOrphan struct{ holdJob }
	holdUrgent struct{ holdJob }
)

func (j holdJob) Handle(ctx context.Context) error {
	if j.Hold {
		select {
		case <-holdGate:
		case <-ctx.Done():
		}
	}
	return nil
}

// ExplainWaiting says why each due pending job waits, against a live
// scheduler: a full cap, a full type window, a full rate-key window while
// another key's is free, a type no live process runs, and a job held only
// by busy workers; jobs of a lower priority while a higher one is due;
// a job not yet due gets no reason.
func TestExplainWaiting(t *testing.T) {
	t.Cleanup(func() { close(holdGate) })
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t,
		TaskConfig{Name: "capped", MaxRunning: 1, New: func() TaskInterface { return new(holdCapped) }},
		TaskConfig{Name: "rated", Rate: Rate{N: 1, Per: time.Hour}, New: func() TaskInterface { return new(holdRated) }},
		TaskConfig{Name: "keyed", Rate: Rate{N: 1, Per: time.Hour}, New: func() TaskInterface { return new(holdKeyed) }},
		TaskConfig{Name: "free", New: func() TaskInterface { return new(holdFree) }},
		TaskConfig{Name: "orphan", New: func() TaskInterface { return new(holdOrphan) }},
		TaskConfig{Name: "urgent", Priority: 5, New: func() TaskInterface { return new(holdUrgent) }},
	)
	runScheduler(t, rdb, reg, WithWorkers(2), WithTasks("capped", "rated", "keyed", "free", "urgent"))
	c := NewClient(rdb, reg, WithProcessTTL(time.Second))
	in := NewInspector(rdb, WithProcessTTL(time.Second))
	enqueueAs := func(typ string, job holdJob, opts ...EnqueueOption) string {
		t.Helper()
		b, _ := json.Marshal(job)
		id, err := c.EnqueueRaw(ctx, typ, b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	pending := func() int {
		jobs, err := in.Jobs(ctx, JobFilter{State: JobPending})
		if err != nil {
			t.Fatal(err)
		}
		return len(jobs)
	}
	// Fill the windows (the jobs run and end), then the cap and the
	// workers (the jobs hold).
	enqueueAs("rated", holdJob{N: "r1"})
	enqueueAs("keyed", holdJob{N: "k1"}, RateKey("tenant-7"))
	waitFor(t, 10*time.Second, "the first rated jobs to run", func() bool { return pending() == 0 })
	enqueueAs("capped", holdJob{Hold: true, N: "c1"})
	enqueueAs("free", holdJob{Hold: true, N: "f1"})
	waitFor(t, 10*time.Second, "the holding jobs to run", func() bool {
		jobs, _ := in.Jobs(ctx, JobFilter{State: JobRunning})
		return len(jobs) == 2
	})
	want := map[string]string{
		enqueueAs("capped", holdJob{N: "c2"}):                     "max_running 1/1",
		enqueueAs("rated", holdJob{N: "r2"}):                      "rate 1/1h0m0s",
		enqueueAs("keyed", holdJob{N: "k2"}, RateKey("tenant-7")): "rate key tenant-7 1/1h0m0s",
		enqueueAs("keyed", holdJob{N: "k3"}, RateKey("tenant-8")): "priority 0 (1 due higher)",
		enqueueAs("free", holdJob{N: "f2"}):                       "priority 0 (1 due higher)",
		enqueueAs("urgent", holdJob{N: "u1"}):                     "due",
		enqueueAs("orphan", holdJob{N: "o1"}):                     "no process",
		enqueueAs("free", holdJob{N: "later"}, In(time.Hour)):     "",
		enqueueAs("capped", holdJob{N: "c-later"}, In(time.Hour)): "",
	}
	time.Sleep(300 * time.Millisecond) // claims that could take them have run
	jobs, err := in.Jobs(ctx, JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.ExplainWaiting(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, j := range jobs {
		w, ok := want[j.ID]
		if !ok {
			if j.Waiting != (Wait{}) {
				t.Errorf("%s job %s (%s): waiting %q, want none", j.State, j.ID, j.Task, j.Waiting)
			}
			continue
		}
		seen++
		if got := j.Waiting.String(); got != w {
			t.Errorf("job %s (%s %s): waiting %q, want %q", j.ID, j.Task, j.Payload, got, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d pending jobs listed", seen, len(want))
	}
	if err := in.ExplainWaiting(ctx, nil); err != nil {
		t.Errorf("ExplainWaiting of no jobs: %v", err)
	}
}

// The reasons are tested in the claim's order: a type no process runs
// waits for that whatever its limits; a full cap comes before a full
// window, and both before jobs of higher priorities; WaitReasons lists each reason once, due last.
func TestClassifyWaitOrder(t *testing.T) {
	full := TypeFlow{MaxRunning: 2, Running: 2, Rate: Rate{N: 1, Per: time.Second}, Starts: 1}
	for _, tc := range []struct {
		in   waitInput
		want string
	}{
		{waitInput{flow: full}, "no process"},
		{waitInput{runs: true, flow: full}, "max_running 2/2"},
		{waitInput{runs: true, flow: TypeFlow{MaxRunning: 2, Running: 1, Rate: full.Rate, Starts: 1}}, "rate 1/1s"},
		{waitInput{runs: true, flow: full, job: JobInfo{RateKey: "k"}, keyStarts: 1}, "max_running 2/2"},
		{waitInput{runs: true, flow: TypeFlow{Rate: full.Rate, Starts: 1}, job: JobInfo{RateKey: "k"}}, "due"},
		{waitInput{runs: true, flow: full, higherDue: 3}, "max_running 2/2"},
		{waitInput{runs: true, flow: TypeFlow{Priority: -1}, higherDue: 3}, "priority -1 (3 due higher)"},
		{waitInput{runs: true}, "due"},
	} {
		if got := classifyWait(tc.in).String(); got != tc.want {
			t.Errorf("classifyWait(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := WaitReasons(); len(got) != 5 || got[4] != WaitDue {
		t.Errorf("WaitReasons() = %q", got)
	}
}
