package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/testio"
)

// closedAddr is a loopback host:port where nothing listens: the address the
// first-run tests probe instead of 127.0.0.1:6379, so they never use a
// Redis they did not start.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// firstRunEnv is the environment of a first run: no REDIS_URL, the probe
// at a closed port, TMPDIR a directory of the test, and the given extras.
func firstRunEnv(probe, tmp string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "REDIS_URL", "CRONTAB_DEV_REDIS_ADDR", "CRONTAB_NAMESPACE", "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"CRONTAB_DEV_REDIS_ADDR=" + probe, "TMPDIR=" + tmp}, extra...)...)
}

var privateLine = regexp.MustCompile(`(?m)^basic: no Redis at (\S+) \(REDIS_URL unset\); started a private redis-server at (127\.0\.0\.1:\d+) for this run$`)

// TestExampleBasicFirstRun is `make run` on a machine with no Redis
// running: basic starts a private redis-server (the one on PATH), says so in
// one line, fires its tasks against it, and on SIGINT, SIGTERM or its own
// death leaves no server behind; on a clean exit no files either.
func TestExampleBasicFirstRun(t *testing.T) {
	t.Parallel()
	bin := buildExample(t, "github.com/gocrontab/crontab/examples/basic")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			probe, tmp := closedAddr(t), t.TempDir()
			var out testio.Buffer
			cmd := exec.Command(bin)
			cmd.Env = firstRunEnv(probe, tmp)
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-done
				raceReports(t, "basic", out.String())
				if t.Failed() {
					t.Logf("output of basic:\n%s", out.String())
				}
			})
			testio.WaitFor(t, 20*time.Second, "a heartbeat fire on the private server", func() bool {
				return strings.Contains(out.String(), "heartbeat      fire=")
			})
			o := out.String()
			m := privateLine.FindAllStringSubmatch(o, -1)
			if len(m) != 1 || m[0][1] != probe {
				t.Fatalf("want one line saying a private redis-server started (probe %s), got %q", probe, m)
			}
			addr := m[0][2]
			if !strings.Contains(o, "running against "+addr) {
				t.Errorf("the scheduler does not say it runs against %s", addr)
			}
			for _, bad := range []string{"pool.go", "connection pool", "waiting for Redis"} {
				if strings.Contains(o, bad) {
					t.Errorf("output holds %q", bad)
				}
			}

			// The scheduler fires against that server.
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer rdb.Close()
			if n, err := rdb.Exists(ctx, "{crontab}:task:heartbeat").Result(); err != nil || n != 1 {
				t.Errorf("task hash of heartbeat on the private server: %d, %v", n, err)
			}
			pid := serverPID(t, rdb)
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "*")); len(dirs) != 1 {
				t.Errorf("TMPDIR while it runs: %v; want the server's directory", dirs)
			}

			_ = cmd.Process.Signal(sig)
			select {
			case err := <-done:
				done <- err // for the cleanup
				if sig != syscall.SIGKILL && err != nil {
					t.Errorf("exit after %v: %v", sig, err)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("did not stop within 15s of %v", sig)
			}
			testio.WaitFor(t, 5*time.Second, "the private redis-server to be gone", func() bool {
				_, err := os.Stat("/proc/" + strconv.Itoa(pid))
				return err != nil
			})
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("something still listens on %s", addr)
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "*"))
			if sig != syscall.SIGKILL && len(left) != 0 {
				t.Errorf("left behind in TMPDIR: %v", left)
			}
			if sig != syscall.SIGKILL && !strings.Contains(out.String(), "scheduler stopped") {
				t.Error("no clean-stop line")
			}
		})
	}
}

// serverPID is the process id of the server rdb speaks to.
func serverPID(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("INFO server has no process_id:\n%s", info)
	return 0
}

// TestExamplesNoRedis: with no Redis to use, each example exits non-zero
// with one line that says how to get one: basic when there is no
// redis-server on PATH either, the examples whose processes share a Redis
// (delayed, roles) at once, and all of them when REDIS_URL names a closed
// port.
func TestExamplesNoRedis(t *testing.T) {
	t.Parallel()
	noPath := t.TempDir() // a PATH without redis-server
	down := closedAddr(t)
	bins := map[string]string{} // each example built once
	for _, tc := range []struct {
		pkg  string
		args []string
		env  []string
		want string
	}{
		{"basic", nil, []string{"PATH=" + noPath},
			"basic: no Redis at PROBE (REDIS_URL unset) and no redis-server on PATH to start one: apt-get install redis-server, or set REDIS_URL"},
		{"delayed/worker", nil, nil,
			"worker: no Redis at PROBE (REDIS_URL unset; connection refused): start redis-server (apt-get install redis-server) or set REDIS_URL"},
		{"delayed/producer", nil, nil,
			"producer: no Redis at PROBE (REDIS_URL unset; connection refused): start redis-server (apt-get install redis-server) or set REDIS_URL"},
		{"roles", []string{"-role", "worker"}, nil,
			"roles: no Redis at PROBE (REDIS_URL unset; connection refused): start redis-server (apt-get install redis-server) or set REDIS_URL"},
		{"basic", nil, []string{"REDIS_URL=redis://" + down}, "basic: cannot reach Redis at " + down + " (connection refused); check REDIS_URL"},
		{"delayed/worker", nil, []string{"REDIS_URL=redis://" + down}, "worker: cannot reach Redis at " + down + " (connection refused); check REDIS_URL"},
		{"delayed/producer", nil, []string{"REDIS_URL=redis://" + down}, "producer: cannot reach Redis at " + down + " (connection refused); check REDIS_URL"},
		{"roles", []string{"-role", "scheduler"}, []string{"REDIS_URL=redis://" + down}, "roles: cannot reach Redis at " + down + " (connection refused); check REDIS_URL"},
	} {
		bin := bins[tc.pkg]
		if bin == "" {
			bin = buildExample(t, "github.com/gocrontab/crontab/examples/"+tc.pkg)
			bins[tc.pkg] = bin
		}
		t.Run(tc.pkg+" "+strings.Join(tc.env, " "), func(t *testing.T) {
			t.Parallel()
			probe, tmp := closedAddr(t), t.TempDir()
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = firstRunEnv(probe, tmp, tc.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still running after 20s; stderr:\n%s", stderr.String())
			}
			raceReports(t, tc.pkg, stderr.String())
			if code := cmd.ProcessState.ExitCode(); code == 0 {
				t.Errorf("exit status 0")
			}
			want := strings.ReplaceAll(tc.want, "PROBE", probe) + "\n"
			if stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("stderr %q, stdout %q; want stderr %q", stderr.String(), stdout.String(), want)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
				t.Errorf("left behind in TMPDIR: %v", left)
			}
		})
	}
}
