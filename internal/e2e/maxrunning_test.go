package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// A worker SIGKILLed while its run holds its type's only fire slot
// (max_running=1) frees that slot when its run lease expires: the other
// worker, whose fires were skipped meanwhile, runs the task again within
// a run lease (1.5 s) and a second of the kill.
func TestSIGKILLFreesFireSlots(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	starts := func() []string { return list(t, rdb, "e2e:capped") }
	a := startWorker(t, srv, "a", "WORKER_TASKS=capped")
	deadline := time.Now().Add(10 * time.Second)
	for len(starts()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := starts(); len(s) != 1 || !strings.HasPrefix(s[0], "a|") {
		t.Fatalf("starts %v: want one run, of worker a", s)
	}
	startWorker(t, srv, "b", "WORKER_TASKS=capped")
	time.Sleep(3 * time.Second)
	if s := starts(); len(s) != 1 {
		t.Fatalf("with the slot held, starts %v: want still one run (max_running=1)", s)
	}
	skips, _ := strconv.Atoi(rdb.HGet(ctx, "{crontab}:task:capped", "skips").Val())
	if skips < 2 {
		t.Fatalf("%d skips while the slot was held, want >= 2", skips)
	}
	killed := time.Now()
	a.kill()
	deadline = time.Now().Add(6 * time.Second)
	for len(starts()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s := starts()
	if len(s) < 2 {
		t.Fatalf("no run within 6s of the kill: starts %v", s)
	}
	p := strings.Split(s[1], "|")
	startMS, _ := strconv.ParseInt(p[2], 10, 64)
	after := time.UnixMilli(startMS).Sub(killed)
	t.Logf("the next run started %v after the kill, on %s", after, p[0])
	if p[0] != "b" || after > 3*time.Second {
		t.Errorf("next run %q %v after the kill: want worker b within 3s", s[1], after)
	}
	if len(s) > 2 {
		t.Errorf("starts %v: want one run after the kill (max_running=1)", s)
	}
}
