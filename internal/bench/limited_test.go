package bench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// testEnv is an env on a private redis-server whose workers are this test
// binary (see TestMain).
func testEnv(t *testing.T) *env {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, redistest.WithUnixSocket())
	cfg := Defaults()
	cfg.Self = self
	return &env{cfg: cfg, srv: srv, admin: srv.Client(t), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		report: &Report{Details: map[string]any{}, Load: map[string]string{}}}
}

// Runs of several processes overlap by their start and end times; a run
// ending when another starts does not overlap it.
func TestMostAtOnceCountsOverlappingSpans(t *testing.T) {
	rec := newRecorder(4)
	rec.record(0, 100, 200, 0)
	rec.record(1, 150, 300, 0)
	rec.record(2, 200, 250, 0) // starts as 0 ends: 1 and 2 run
	rec.record(3, 310, 320, 0) // alone
	if got := rec.mostAtOnce(); got != 2 {
		t.Errorf("most at once %d, want 2", got)
	}
	if got := mostWithin([]int64{5, 0, 10, 11, 20}, 10); got != 3 {
		t.Errorf("most within 10 of 0,5,10,11,20: %d, want 3 (5, 10, 11)", got)
	}
}

// The priority backlog's figures per type: job i is of kinds[i%3]; each
// type's lag, last end, and the order in which the types finished.
func TestPriorityOutcomesSplitByType(t *testing.T) {
	const ms = int64(time.Millisecond)
	due := make([]int64, 6)
	rec := newRecorder(6)
	// p0: jobs 0, 3 end at 50, 60 ms; p5: 1, 4 at 30, 40; p10: 2, 5 at 10, 20.
	ends := []int64{50, 30, 10, 60, 40, 20}
	for i, e := range ends {
		rec.record(i, (e-5)*ms, e*ms, 0)
	}
	got := priorityOutcomes(rec, due, kindPriority)
	want := map[int]struct {
		finished int
		done     float64
		lagMax   float64
	}{0: {3, 60, 55}, 5: {2, 40, 35}, 10: {1, 20, 15}}
	for _, p := range got {
		w := want[p.Priority]
		if p.Finished != w.finished || p.DoneMS != w.done || p.Lag.Max != w.lagMax || p.Lag.N != 2 {
			t.Errorf("priority %d: finished %d, done %vms, lag %+v; want %d, %vms, max %vms of 2", p.Priority, p.Finished, p.DoneMS, p.Lag,
				w.finished, w.done, w.lagMax)
		}
	}
}

// The limited S1 across processes: two worker processes run a type with
// max_running 2 and rate 10/1s; the bench sees every run and completion
// they report, the most at once over both, and every start in the rate
// window with its Redis time, no window holding more than the rate.
func TestLimitedBurstAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes for 6s")
	}
	e := testEnv(t)
	w := workload{kinds: kindPlain, maxRunning: 2, rate: crontab.Rate{N: 10, Per: time.Second}, procs: 2}
	const n = 25
	o, rec, err := e.runJobs(context.Background(), "test", burstDue(n), "", w)
	if err != nil {
		t.Fatal(err)
	}
	if o.Missing+o.Duplicates+o.Early+o.WrongFire != 0 || rec.done.Load() != n {
		t.Fatalf("outcome %+v, %d completed; want every job once, on time", o, rec.done.Load())
	}
	if most := rec.mostAtOnce(); most < 1 || most > 2 {
		t.Errorf("most at once %d, want 1 or 2", most)
	}
	rw := rec.rate
	if rw == nil || rw.err != nil {
		t.Fatalf("rate watch %+v", rw)
	}
	if len(rw.starts) != n || rw.most(time.Second) != 10 || rw.gap >= 1000 {
		t.Errorf("window: %d starts, %d most in 1s, reads %dms apart; want %d, 10, < 1000", len(rw.starts), rw.most(time.Second), rw.gap, n)
	}
	// 25 starts at 10 per second: the last window opens 2 s after the first.
	if o.AllDoneMS < 1900 {
		t.Errorf("all done %vms after due: the rate did not hold the drain back", o.AllDoneMS)
	}
	if s := w.String(); s != "1 type, 2 processes, max_running 2, rate 10/1s" {
		t.Errorf("workload %q", s)
	}
}

// The priority backlog across three processes finishes every job of every
// type once. Until the registry takes priorities (TaskConfig.Priority), it
// refuses the workload and the test is skipped.
func TestPriorityBacklogAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes for 5s")
	}
	e := testEnv(t)
	e.cfg.PriorityJobs, e.cfg.LimitProcs = 2000, 3
	details := map[string]any{}
	if err := e.runPriority(context.Background(), details); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.report.Rows {
		if r.Metric == "missing+dup+early" && (r.Pass == nil || !*r.Pass) {
			t.Errorf("%s: %s = %v", r.Scenario, r.Metric, r.Ours)
		}
	}
	// Weights 11, 6 and 1 for equal backlogs: priority 10's jobs start
	// first, then 5's, then 0's (by median lag; the last ends of a small
	// backlog claimed in large batches can come in any order).
	if len(e.report.Notes) != 1 || !strings.Contains(e.report.Notes[0], "finished in the order") {
		t.Errorf("notes %q", e.report.Notes)
	}
	p50 := map[string]float64{}
	for _, r := range e.report.Rows {
		if strings.HasSuffix(r.Metric, " lag p50") {
			p50[strings.TrimSuffix(r.Metric, " lag p50")] = r.Ours
		}
	}
	if !(p50["priority 10"] < p50["priority 5"] && p50["priority 5"] < p50["priority 0"]) {
		t.Errorf("lag p50 by priority %v, want 10 < 5 < 0", p50)
	}
}
