package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
)

// buildExample builds the example main package at pkg into a temp dir.
func buildExample(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := goBuild(bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// startExample starts bin with args and REDIS_URL pointing at srv.
func startExample(t *testing.T, bin string, srv *redistest.Server, args ...string) (*exec.Cmd, *testio.Buffer) {
	t.Helper()
	var out testio.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "REDIS_URL="+srv.URL())
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		raceReports(t, filepath.Base(bin), out.String())
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(bin), out.String())
		}
	})
	return cmd, &out
}

// TestExampleBasic runs what `make run` runs: the fires show as they
// happen, and Ctrl-C stops it cleanly.
func TestExampleBasic(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	bin := buildExample(t, "github.com/gocrontab/crontab/examples/basic")
	cmd, out := startExample(t, bin, srv)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "heartbeat      fire=") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "heartbeat      fire=") {
		t.Fatal("no heartbeat fire shown within 15s")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after Ctrl-C: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not stop within 15s of Ctrl-C")
	}
	if !strings.Contains(out.String(), "scheduler stopped") {
		t.Error("no clean-stop line")
	}
	n, err := srv.Client(t).Exists(context.Background(), "{crontab}:task:clean logs").Result()
	if err != nil || n != 1 {
		t.Errorf("task hash of \"clean logs\" missing: %v", err)
	}
}

// TestExampleDelayed runs the producer against a worker: the jobs run once
// at their time, the duplicate and the cancelled one never do, the failing
// one ends in the dead letters.
func TestExampleDelayed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	worker := buildExample(t, "github.com/gocrontab/crontab/examples/delayed/worker")
	producer := buildExample(t, "github.com/gocrontab/crontab/examples/delayed/producer")
	_, wout := startExample(t, worker, srv)
	time.Sleep(300 * time.Millisecond)
	cmd := exec.Command(producer)
	cmd.Env = append(os.Environ(), "REDIS_URL="+srv.URL())
	pout, err := cmd.CombinedOutput()
	raceReports(t, "producer", string(pout))
	if err != nil {
		t.Fatalf("producer: %v\n%s", err, pout)
	}
	for _, want := range []string{"order-42-shipped already enqueued", "cancelled "} {
		if !strings.Contains(string(pout), want) {
			t.Errorf("producer output lacks %q:\n%s", want, pout)
		}
	}
	rdb := srv.Client(t)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := rdb.ZCard(context.Background(), "{crontab}:dead").Result(); n == 1 && strings.Count(wout.String(), "sent to") >= 4 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	w := wout.String()
	if n := strings.Count(w, "sent to"); n != 4 {
		t.Errorf("worker sent %d messages, want 4 (3 codes and the order once)", n)
	}
	if strings.Count(w, "order 42 shipped") != 1 {
		t.Error("the idempotent order message did not run exactly once")
	}
	if strings.Contains(w, "+15550199") {
		t.Error("the cancelled reminder ran")
	}
	if n, _ := rdb.ZCard(context.Background(), "{crontab}:dead").Result(); n != 1 {
		t.Errorf("%d dead jobs, want the failing one", n)
	}
}
