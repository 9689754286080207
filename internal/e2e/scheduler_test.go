package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestThreeProcessesFireEachInstantOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var ws []*worker
	for i := range 3 {
		ws = append(ws, startWorker(t, srv, fmt.Sprintf("w%d", i), "WORKER_TASKS=tick"))
	}
	time.Sleep(32 * time.Second)
	for _, w := range ws {
		w.stop(t)
	}
	fires := readFires(t, rdb)
	if len(fires) < 30 {
		t.Fatalf("%d fires in 32s of an every:1s task", len(fires))
	}
	checkEverySecond(t, fires)
	byProcess := map[string]int{}
	for _, f := range fires {
		byProcess[f.process]++
	}
	t.Logf("fires by process: %v", byProcess)
}

func TestSkewedProcessClocksAgree(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var ws []*worker
	for i, off := range []string{"-30s", "0s", "30s"} {
		ws = append(ws, startWorker(t, srv, fmt.Sprintf("skew%d", i), "WORKER_TASKS=tick", "WORKER_CLOCK_OFFSET="+off))
	}
	time.Sleep(12 * time.Second)
	for _, w := range ws {
		w.stop(t)
	}
	fires := readFires(t, rdb)
	if len(fires) < 10 {
		t.Fatalf("%d fires in 12s", len(fires))
	}
	for _, f := range fires {
		if f.startMS < f.fireMS {
			t.Errorf("fire %d started %dms early", f.fireMS, f.fireMS-f.startMS)
		}
	}
	checkEverySecond(t, fires)
}

// slowRun is one run of the Slow task.
type slowRun struct {
	start, end, fire int64
	process          string
}

func TestLongTaskNeverOverlapsAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var ws []*worker
	for i := range 3 {
		ws = append(ws, startWorker(t, srv, fmt.Sprintf("slow%d", i), "WORKER_TASKS=slow"))
	}
	time.Sleep(14 * time.Second)
	for _, w := range ws {
		w.stop(t)
	}
	runs := readSlow(t, rdb)
	if len(runs) < 3 {
		t.Fatalf("%d runs of a 2.5s task in 14s", len(runs))
	}
	for _, o := range overlaps(runs) {
		t.Error(o)
	}
	skips, err := rdb.HGet(context.Background(), "{crontab}:task:slow", "skips").Int()
	if err != nil || skips == 0 {
		t.Errorf("skips = %d (%v), want the fires that found the task running counted", skips, err)
	}
}

func TestSIGKILLMidRunIsRecordedAndScheduleContinues(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	ws := map[string]*worker{}
	for i := range 2 {
		id := fmt.Sprintf("kill%d", i)
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=slow")
	}
	// Wait until a run holds the task's lock, then kill its process.
	var owner string
	deadline := time.Now().Add(10 * time.Second)
	for owner == "" && time.Now().Before(deadline) {
		v, _ := rdb.Get(ctx, "{crontab}:lock:task:slow").Result()
		owner, _, _ = strings.Cut(v, "|")
		time.Sleep(20 * time.Millisecond)
	}
	if ws[owner] == nil {
		t.Fatalf("lock holder %q is not one of the workers", owner)
	}
	time.Sleep(500 * time.Millisecond) // mid-run
	ws[owner].kill()
	killed := time.Now()

	// The run is recorded as abandoned, and the survivor keeps firing.
	deadline = time.Now().Add(15 * time.Second)
	var abandonedAt time.Time
	after := false
	for time.Now().Before(deadline) && (abandonedAt.IsZero() || !after) {
		hist, _ := rdb.LRange(ctx, "{crontab}:history:slow", 0, -1).Result()
		for _, h := range hist {
			var rec struct {
				Outcome string `json:"outcome"`
				Process string `json:"process"`
				End     int64  `json:"end_ms"` // when the master recorded it
			}
			if json.Unmarshal([]byte(h), &rec) == nil && rec.Outcome == "abandoned" && rec.Process == owner {
				abandonedAt = time.UnixMilli(rec.End)
			}
		}
		runs, _ := rdb.LRange(ctx, "e2e:slow", 0, -1).Result()
		for _, r := range runs {
			p := strings.Split(r, "|")
			start, _ := strconv.ParseInt(p[0], 10, 64)
			if p[2] != owner && start > killed.UnixMilli() {
				after = true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The killed process beat at most a heartbeat before the kill and its
	// master lock, if it held it, was renewed then: it counts as dead a
	// process TTL after, and the master's next round of duties, a heartbeat
	// later at most, records its run abandoned.
	bound := workerTTL + workerHeartbeat + 500*time.Millisecond
	switch took := abandonedAt.Sub(killed); {
	case abandonedAt.IsZero():
		t.Error("the killed run was not recorded as abandoned")
	case took > bound:
		t.Errorf("the killed run was recorded abandoned %v after the kill, want within %v (process TTL %v + heartbeat %v + 500ms)",
			took, bound, workerTTL, workerHeartbeat)
	default:
		t.Logf("recorded abandoned %v after the kill", took.Round(time.Millisecond))
	}
	if !after {
		t.Error("no run of the task completed on the survivor after the kill")
	}
	if n, _ := rdb.HLen(ctx, "{crontab}:runs").Result(); n > 1 {
		t.Errorf("runs holds %d runs, want at most the survivor's", n)
	}
	t.Logf("recovered %v after the kill", time.Since(killed).Round(time.Millisecond))
}
