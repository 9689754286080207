package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the test binary as a worker when the bench re-executes it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		if err := WorkerMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmallRun runs every scenario at a small scale: each must finish and
// every correctness figure (nothing missing, doubled or early) must hold;
// the speed figures are not judged on a shared test machine.
func TestSmallRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of real processes")
	}
	cfg := Defaults()
	cfg.Out = filepath.Join(t.TempDir(), "r.json")
	cfg.Unix = true
	cfg.BurstJobs, cfg.SpreadJobs, cfg.SpreadOver = 500, 300, time.Second
	// 20 tasks over 3 processes: enough for the processes to split each
	// instant among themselves (runtime's minSplit is 4 per process).
	cfg.PeriodicFor, cfg.PeriodicTasks = 5*time.Second, []int{1, 20}
	cfg.ScaleJobs, cfg.ScaleChunk, cfg.ScaleProbe = 3000, 1000, 3*time.Second
	cfg.FailoverRounds, cfg.ProcessTTL = 1, time.Second
	cfg.Schedules = 2000
	cfg.Log = io.Discard
	var table strings.Builder
	r, err := Run(context.Background(), cfg, &table)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, table.String())
	}
	t.Logf("\n%s", table.String())
	correctness := map[string]bool{"missing+dup+early": true, "duplicates": true, "missed": true, "missed+duplicates": true,
		"started early": true, "jobs fired (due in 1h)": true, "executions": true, "missed + duplicate fires": true}
	n := 0
	for _, row := range r.Rows {
		if correctness[row.Metric] {
			n++
			if row.Pass == nil || !*row.Pass {
				t.Errorf("%s / %s = %v, want %s", row.Scenario, row.Metric, row.Ours, row.Target)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d correctness rows", n)
	}
	// S6's drain is compared with job speed measured side by side.
	var ref *Row
	for i, row := range r.Rows {
		if strings.HasPrefix(row.Scenario, "S6 ") && row.Metric == "drain rate" {
			ref = &r.Rows[i]
		}
	}
	if ref == nil || ref.Baseline == nil || *ref.Baseline <= 0 || ref.Ratio == nil {
		t.Errorf("S6 drain rate row without the reference jobs' rate: %+v", ref)
	}
	if _, err := os.Stat(cfg.Out); err != nil {
		t.Errorf("no JSON written: %v", err)
	}
}
