package chaos

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestMain runs the test binary as a worker process when the soak starts
// it with WorkerArg, so workers are built as the tests are (with -race
// under make test).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		os.Exit(WorkerMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestChaosSoak is make chaos with seed 1 for 60 s: it fails on any
// violation, and on a harness that cannot run (no redis-server: it never
// skips for that). Only -short skips it.
func TestChaosSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the 60 s chaos soak does not run with -short")
	}
	rep, err := Run(context.Background(), Config{Seed: 1, Duration: 60 * time.Second, Logf: t.Logf})
	if rep != nil {
		t.Logf("summary:\n%s", rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Errorf("%d violations (see the summary above; journals and logs in %s)", len(rep.Violations), rep.Dir)
	}
	total := 0
	for _, n := range rep.Faults {
		total += n
	}
	if total < 10 || rep.instants < 100 || rep.jobsRan < 100 {
		t.Errorf("the soak did too little to prove anything: %d faults, %d instants, %d jobs ran", total, rep.instants, rep.jobsRan)
	}
}
