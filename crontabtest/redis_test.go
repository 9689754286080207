package crontabtest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/crontabtest"
)

// StartRedis gives the test an empty Redis of its own, gone at cleanup.
func TestStartRedis(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var addr string
	f := run(func(tb testing.TB) {
		rdb := crontabtest.StartRedis(tb)
		addr = rdb.Options().Addr
		if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
			tb.Errorf("a new server holds %d keys (%v)", n, err)
		}
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			tb.Errorf("SET: %v", err)
		}
	})
	if f.Failed() {
		t.Fatal(f.output())
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("address %q, want loopback", addr)
	}
	// The fake's cleanup has run: the server is gone.
	other := crontabtest.StartRedis(t) // a client to dial addr with
	opts := *other.Options()
	opts.Addr, opts.MaxRetries, opts.DialTimeout = addr, -1, 200*time.Millisecond
	probe := newClient(t, &opts)
	if err := probe.Ping(ctx).Err(); err == nil {
		t.Errorf("the server on %s still answers after cleanup", addr)
	}
}

// childEnv marks the test binary run by TestStartRedisWithoutRedisServer.
const childEnv = "CRONTABTEST_CHILD_NO_REDIS"

// Without redis-server on PATH, StartRedis fails the test (it does not
// skip it) and says how to install it. The test runs itself again with
// PATH set to an empty directory.
func TestStartRedisWithoutRedisServer(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		crontabtest.StartRedis(t)
		t.Log("StartRedis returned")
		return
	}
	t.Parallel()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestStartRedisWithoutRedisServer$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	text := string(out)
	wantIn(t, text, "--- FAIL: TestStartRedisWithoutRedisServer", "redis-server is not on PATH",
		"apt-get install -y redis-server", "brew install redis")
	for _, no := range []string{"--- SKIP", "StartRedis returned"} {
		if strings.Contains(text, no) {
			t.Errorf("the child's output has %q:\n%s", no, text)
		}
	}
}
