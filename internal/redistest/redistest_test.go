package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustSetGet writes a unique value under key and reads it back.
func mustSetGet(t *testing.T, ctx context.Context, rdb redis.Cmdable, key string) {
	t.Helper()
	want := fmt.Sprintf("v-%d", time.Now().UnixNano())
	if err := rdb.Set(ctx, key, want, 0).Err(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
	got, err := rdb.Get(ctx, key).Result()
	if err != nil || got != want {
		t.Fatalf("GET %s = %q, %v; want %q", key, got, err, want)
	}
}

// processGone reports whether pid no longer exists (neither running nor a
// zombie waiting to be reaped).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestStartPingSetGet(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t)
	if s.Network() != "tcp" {
		t.Errorf("Network() = %q, want tcp", s.Network())
	}
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Errorf("Addr() = %q, want 127.0.0.1:PORT", s.Addr())
	}
	if s.PID() <= 0 {
		t.Errorf("PID() = %d", s.PID())
	}
	rdb := s.Client(t)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	mustSetGet(t, ctx, rdb, "k")

	// The server runs with the settings the project relies on.
	for param, want := range map[string]string{
		"save": "", "bind": "127.0.0.1", "protected-mode": "no", "appendonly": "no", "daemonize": "no",
	} {
		got, err := rdb.ConfigGet(ctx, param).Result()
		if err != nil || got[param] != want {
			t.Errorf("CONFIG GET %s = %q, %v; want %q", param, got[param], err, want)
		}
	}
	if dir, err := rdb.ConfigGet(ctx, "dir").Result(); err != nil || filepath.Dir(s.LogPath()) != dir["dir"] {
		t.Errorf("dir = %q, %v; log %s should be in it", dir["dir"], err, s.LogPath())
	}
	if tail := s.LogTail(50); !strings.Contains(tail, "Ready to accept connections") {
		t.Errorf("LogTail does not show the server is ready:\n%s", tail)
	}

	// URL round-trips through redis.ParseURL.
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s.URL(), err)
	}
	if opt.Addr != s.Addr() || opt.Network != "tcp" {
		t.Errorf("ParseURL(%q) = %s %s, want tcp %s", s.URL(), opt.Network, opt.Addr, s.Addr())
	}
}

func TestUnixSocket(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithUnixSocket())
	if s.Network() != "unix" {
		t.Errorf("Network() = %q, want unix", s.Network())
	}
	if !filepath.IsAbs(s.Addr()) || len(s.Addr()) > 100 {
		t.Errorf("Addr() = %q, want a short absolute socket path", s.Addr())
	}
	if fi, err := os.Stat(s.Addr()); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("stat %s: %v, %v; want a socket", s.Addr(), fi, err)
	}
	mustSetGet(t, ctx, s.Client(t), "k")
	if port, err := s.Client(t).ConfigGet(ctx, "port").Result(); err != nil || port["port"] != "0" {
		t.Errorf("port = %q, %v; want 0 (no TCP)", port["port"], err)
	}

	if !strings.HasPrefix(s.URL(), "unix://") {
		t.Errorf("URL() = %q, want unix://", s.URL())
	}
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s.URL(), err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	mustSetGet(t, ctx, c, "via-url")
}

func TestPassword(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	const pw = "p@ss:w/rd #1"
	s := redistest.Start(t, redistest.WithPassword(pw))

	anon := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer anon.Close()
	if err := anon.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("unauthenticated SET: %v, want NOAUTH", err)
	}
	wrong := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: "nope", MaxRetries: -1})
	defer wrong.Close()
	if err := wrong.Ping(ctx).Err(); err == nil {
		t.Errorf("PING with a wrong password succeeded")
	}

	mustSetGet(t, ctx, s.Client(t), "k")
	if got, err := s.Client(t).ConfigGet(ctx, "protected-mode").Result(); err != nil || got["protected-mode"] != "yes" {
		t.Errorf("protected-mode = %q, %v; want yes (default) with a password", got["protected-mode"], err)
	}

	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s.URL(), err)
	}
	if opt.Password != pw || opt.Username != "" {
		t.Errorf("ParseURL(%q) credentials = %q/%q, want \"\"/%q", s.URL(), opt.Username, opt.Password, pw)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	mustSetGet(t, ctx, c, "via-url")
}

func TestACLUser(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithACLUser("app", "s3cret"), redistest.WithUnixSocket())

	anon := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Addr(), MaxRetries: -1})
	defer anon.Close()
	if err := anon.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("unauthenticated SET: %v, want NOAUTH (default user disabled)", err)
	}
	wrong := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Addr(), Username: "app", Password: "nope", MaxRetries: -1})
	defer wrong.Close()
	if err := wrong.Ping(ctx).Err(); err == nil {
		t.Errorf("PING with a wrong password succeeded")
	}

	rdb := s.Client(t)
	if who, err := rdb.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != "app" {
		t.Errorf("ACL WHOAMI = %q, %v; want app", who, err)
	}
	mustSetGet(t, ctx, rdb, "k")
	// Full access: keys, admin commands, pub/sub channels.
	if err := rdb.ConfigSet(ctx, "hz", "20").Err(); err != nil {
		t.Errorf("CONFIG SET as app: %v", err)
	}
	if err := rdb.Publish(ctx, "chan", "x").Err(); err != nil {
		t.Errorf("PUBLISH as app: %v", err)
	}

	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s.URL(), err)
	}
	if opt.Username != "app" || opt.Password != "s3cret" {
		t.Errorf("ParseURL(%q) credentials = %q/%q", s.URL(), opt.Username, opt.Password)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	mustSetGet(t, ctx, c, "via-url")
}

func TestACLUserWithPassword(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithACLUser("app", "a"), redistest.WithPassword("d"))
	def := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: "d", MaxRetries: -1})
	defer def.Close()
	if who, err := def.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != "default" {
		t.Errorf("default user with its password: ACL WHOAMI = %q, %v", who, err)
	}
	if who, err := s.Client(t).Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != "app" {
		t.Errorf("Client: ACL WHOAMI = %q, %v; want app", who, err)
	}
}

func TestAOFSurvivesKill(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithAOF())
	rdb := s.Client(t)
	if got, err := rdb.ConfigGet(ctx, "appendfsync").Result(); err != nil || got["appendfsync"] != "always" {
		t.Errorf("appendfsync = %q, %v; want always", got["appendfsync"], err)
	}
	if err := rdb.Set(ctx, "k", "durable", 0).Err(); err != nil {
		t.Fatal(err)
	}
	addr, pid := s.Addr(), s.PID()
	s.Kill()
	if !processGone(pid) {
		t.Fatalf("pid %d still exists after Kill", pid)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Kill", addr)
	}
	s.Restart(t)
	if s.Addr() != addr || s.PID() == pid {
		t.Errorf("after Restart: addr %s pid %d; want addr %s and a new pid (was %d)", s.Addr(), s.PID(), addr, pid)
	}
	// The same client reconnects.
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "durable" {
		t.Fatalf("after SIGKILL and Restart with AOF: GET k = %q, %v; want durable", got, err)
	}
	// A graceful Stop keeps it too.
	s.Stop()
	s.Restart(t)
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "durable" {
		t.Fatalf("after Stop and Restart with AOF: GET k = %q, %v; want durable", got, err)
	}
}

func TestRestartWithoutAOFLosesData(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithUnixSocket())
	rdb := s.Client(t)
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t) // graceful stop first: --save "" writes no snapshot
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after Restart without AOF: EXISTS k = %d, %v; want 0", n, err)
	}
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	s.Restart(t)
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after Kill and Restart without AOF: EXISTS k = %d, %v; want 0", n, err)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t)
	opt := s.Options()
	opt.ReadTimeout = 200 * time.Millisecond
	opt.WriteTimeout = 200 * time.Millisecond
	opt.MaxRetries = -1
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	s.Pause()
	start := time.Now()
	err := rdb.Get(ctx, "k").Err()
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("GET on a paused server: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("GET on a paused server took %v, want about the 200ms read timeout", d)
	}

	s.Resume()
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET after Resume = %q, %v; want v", got, err)
	}

	// Stop works on a paused server.
	pid := s.PID()
	s.Pause()
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("Stop on a paused server hangs")
	}
	if !processGone(pid) {
		t.Errorf("pid %d still exists after Stop", pid)
	}
}

func TestTwoServers(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Addr() == b.Addr() || a.PID() == b.PID() {
		t.Fatalf("two servers share %s / pid %d", a.Addr(), a.PID())
	}
	if a.LogPath() == b.LogPath() {
		t.Fatalf("two servers share the log %s", a.LogPath())
	}
	ra, rb := a.Client(t), b.Client(t)
	if err := ra.Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("a key set on one server exists on the other: %d, %v", n, err)
	}
}

func TestManyServersInParallel(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 8)
	t.Run("group", func(t *testing.T) {
		for i := range cap(seen) {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				s := redistest.Start(t)
				mustSetGet(t, ctxT(t), s.Client(t), "k")
				seen <- s.Addr()
			})
		}
	})
	close(seen)
	addrs := map[string]bool{}
	for a := range seen {
		if addrs[a] {
			t.Errorf("address %s handed out twice", a)
		}
		addrs[a] = true
	}
}

func TestWithArgs(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := redistest.Start(t, redistest.WithArgs("--hz", "100"), redistest.WithArgs("--maxmemory", "10mb"))
	got, err := s.Client(t).ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["hz"] != "100" || got["maxmemory"] != strconv.Itoa(10<<20) {
		t.Errorf("hz = %q, maxmemory = %q; want 100, %d", got["hz"], got["maxmemory"], 10<<20)
	}
}

func TestWithPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port

	// While the port is held, Start fails the test and shows the log.
	msg := expectFatal(t, func(tb testing.TB) { redistest.Start(tb, redistest.WithPort(port)) })
	if !strings.Contains(msg, "Address already in use") || !strings.Contains(msg, "redis.log") {
		t.Errorf("Fatalf message lacks the bind error or the log:\n%s", msg)
	}
	l.Close()

	s := redistest.Start(t, redistest.WithPort(port))
	if want := "127.0.0.1:" + strconv.Itoa(port); s.Addr() != want {
		t.Errorf("Addr() = %q, want %q", s.Addr(), want)
	}
	mustSetGet(t, ctxT(t), s.Client(t), "k")
}

// TestCleanup checks that a sub-test's cleanup leaves no process (nor zombie)
// and no socket directory behind.
func TestCleanup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []redistest.Option
		after func(s *redistest.Server)
	}{
		{name: "running"},
		{name: "unix-aof", opts: []redistest.Option{redistest.WithUnixSocket(), redistest.WithAOF()}},
		{name: "paused", after: (*redistest.Server).Pause},
		{name: "stopped", after: (*redistest.Server).Stop},
		{name: "killed", after: (*redistest.Server).Kill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pid int
			var addr, dataDir string
			t.Run("inner", func(t *testing.T) {
				s := redistest.Start(t, tc.opts...)
				pid, addr, dataDir = s.PID(), s.Addr(), filepath.Dir(s.LogPath())
				if tc.after != nil {
					tc.after(s)
				}
			})
			if !processGone(pid) {
				t.Errorf("pid %d still exists after cleanup", pid)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("data dir %s still exists after cleanup: %v", dataDir, err)
			}
			if filepath.IsAbs(addr) {
				if _, err := os.Stat(filepath.Dir(addr)); !os.IsNotExist(err) {
					t.Errorf("socket dir of %s still exists after cleanup: %v", addr, err)
				}
			}
		})
	}
}

// TestMissingBinary must not run in parallel: it changes PATH.
func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	msg := expectFatal(t, func(tb testing.TB) { redistest.Start(tb) })
	if !strings.Contains(msg, "redis-server is not on PATH") || !strings.Contains(msg, "apt-get install -y redis-server") {
		t.Errorf("Fatalf message lacks the cause or the install hint:\n%s", msg)
	}
}

// fatalTB records the first Fatal and ends the goroutine, like testing.T.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalTB) FailNow() {
	f.msg = "FailNow"
	runtime.Goexit()
}

// expectFatal runs f with a TB whose Fatal is recorded, and returns the
// message; it fails t when f does not call Fatal.
func expectFatal(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	if tb.msg == "" {
		t.Fatalf("want a Fatal, got none")
	}
	return tb.msg
}

func TestLaunchAndClose(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s, err := redistest.Launch(redistest.WithUnixSocket(), redistest.WithArgs("--hz", "10"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(s.Options())
	defer rdb.Close()
	mustSetGet(t, ctx, rdb, "k")
	dir, sock, pid := filepath.Dir(s.LogPath()), s.Addr(), s.PID()
	s.Close()
	if !processGone(pid) {
		t.Errorf("pid %d still exists after Close", pid)
	}
	for _, p := range []string{dir, sock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Close: %v", p, err)
		}
	}
}

func TestLaunchFailsWithoutServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := redistest.Launch(); err == nil || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Errorf("Launch without redis-server on PATH: %v, want the install hint", err)
	}
}

// TestCountCommands counts commands sent alone and in a pipeline, by
// name, and by a label and weight of the test's.
func TestCountCommands(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	byName := redistest.CountCommands(c, nil)
	fields := redistest.CountCommands(c, func(cmd redis.Cmder) (string, int64) {
		if cmd.Name() == "hmget" {
			return "fields", int64(len(cmd.Args()) - 2)
		}
		return "", 0
	})
	c.HGetAll(ctx, "h")
	pipe := c.Pipeline()
	pipe.HMGet(ctx, "h", "a", "b", "c")
	pipe.HGetAll(ctx, "h")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if byName.Count("hgetall") != 2 || byName.Count("hmget") != 1 || fields.Count("fields") != 3 {
		t.Errorf("counted hgetall %d, hmget %d, fields %d; want 2, 1, 3", byName.Count("hgetall"), byName.Count("hmget"), fields.Count("fields"))
	}
	byName.Reset()
	if byName.Count("hgetall") != 0 {
		t.Error("Reset kept a count")
	}
}
