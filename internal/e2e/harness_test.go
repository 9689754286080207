package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// workerBin is the worker program, built once by TestMain.
var workerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "e2e-worker")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workerBin = filepath.Join(dir, "worker")
	out, err := goBuild(workerBin, "./worker").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build worker: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goBuild returns the command that builds pkg to bin, with the race
// detector when this test binary has it.
func goBuild(bin, pkg string) *exec.Cmd {
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	return exec.Command("go", append(args, pkg)...)
}

// raceReports fails t when a program's output holds a report of the race
// detector (the program was built with it, see goBuild).
func raceReports(t *testing.T, program, output string) {
	t.Helper()
	if strings.Contains(output, "WARNING: DATA RACE") {
		t.Errorf("%s reported a data race:\n%s", program, output)
	}
}

// worker is one running worker process.
type worker struct {
	id   string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startWorker starts a worker process on srv and stops it at cleanup.
func startWorker(t *testing.T, srv *redistest.Server, id string, env ...string) *worker {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), id+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(workerBin)
	cmd.Env = append(os.Environ(), append([]string{"REDIS_URL=" + srv.URL(), "WORKER_ID=" + id}, env...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{id: id, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { w.done <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		w.stop(t)
		b, _ := os.ReadFile(logPath)
		raceReports(t, "worker "+id, string(b))
		if t.Failed() {
			lines := strings.Split(string(b), "\n")
			t.Logf("--- last lines of worker %s log:\n%s", id, strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return w
}

// stop sends SIGTERM and waits for a graceful exit.
func (w *worker) stop(t *testing.T) {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		t.Errorf("worker %s did not stop within 20s of SIGTERM", w.id)
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// wait waits up to d for the process to exit by itself (a producer, see
// worker/produce.go) and fails t unless it exits cleanly.
func (w *worker) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case err := <-w.done:
		if err != nil {
			b, _ := os.ReadFile(w.log)
			t.Fatalf("worker %s: %v\n%s", w.id, err, b)
		}
	case <-time.After(d):
		t.Fatalf("worker %s did not exit within %v", w.id, d)
	}
}

// kill sends SIGKILL and waits for the process to die.
func (w *worker) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
}

// fire is one Tick run read back from Redis.
type fire struct {
	fireMS, startMS int64
	process         string
}

func readFires(t *testing.T, rdb *redis.Client) []fire {
	t.Helper()
	raw, err := rdb.LRange(context.Background(), "e2e:fires", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []fire
	for _, r := range raw {
		p := strings.Split(r, "|")
		if len(p) != 4 {
			t.Fatalf("bad record %q", r)
		}
		f := fire{process: p[2]}
		f.fireMS, _ = strconv.ParseInt(p[1], 10, 64)
		f.startMS, _ = strconv.ParseInt(p[3], 10, 64)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b fire) int { return int(a.fireMS - b.fireMS) })
	return out
}

// checkEverySecond asserts fires hold each second from the first to the
// last exactly once, and returns the lags.
func checkEverySecond(t *testing.T, fires []fire) []time.Duration {
	t.Helper()
	if len(fires) == 0 {
		t.Fatal("no fires")
	}
	seen := map[int64]int{}
	var lags []time.Duration
	for _, f := range fires {
		seen[f.fireMS]++
		lags = append(lags, time.Duration(f.startMS-f.fireMS)*time.Millisecond)
	}
	dups, missed := 0, 0
	for ms := fires[0].fireMS; ms <= fires[len(fires)-1].fireMS; ms += 1000 {
		switch n := seen[ms]; {
		case n == 0:
			missed++
			t.Errorf("instant %v never fired", time.UnixMilli(ms).UTC())
		case n > 1:
			dups += n - 1
			t.Errorf("instant %v fired %d times", time.UnixMilli(ms).UTC(), n)
		}
	}
	slices.Sort(lags)
	t.Logf("instants=%d fires=%d duplicates=%d missed=%d lag p50=%v p99=%v max=%v",
		len(seen), len(fires), dups, missed, lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1])
	return lags
}
