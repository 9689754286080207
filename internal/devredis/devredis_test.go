package devredis

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
)

// env is a Getenv of these variables only.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// closedAddr is a loopback host:port where nothing listens.
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

// TestOpenURL: REDIS_URL wins, and must answer.
func TestOpenURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	var out testio.Buffer
	r, err := Open(ctx, Config{Name: "x", Private: true, Stderr: &out,
		Getenv: env(EnvURL, srv.URL(), EnvAddr, closedAddr(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Private || r.URL != srv.URL() || r.Addr != srv.Addr() || out.String() != "" {
		t.Errorf("Open = %+v, printed %q; want REDIS_URL's server, silently", r, out.String())
	}
	c := redis.NewClient(r.Options())
	defer c.Close()
	if err := c.Set(ctx, "devredis", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := srv.Client(t).Get(ctx, "devredis").Val(); v != "1" {
		t.Errorf("the client of Options does not reach REDIS_URL's server: %q", v)
	}

	down := closedAddr(t)
	for _, tc := range []struct{ url, want string }{
		{"redis://" + down, "cannot reach Redis at " + down + " (connection refused); check REDIS_URL"},
		{"http://x", `REDIS_URL "http://x": redis: invalid URL scheme: http`},
	} {
		_, err := Open(ctx, Config{Private: true, Stderr: &out, Getenv: env(EnvURL, tc.url)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("REDIS_URL=%s: %v, want %q", tc.url, err, tc.want)
		}
	}
	if out.String() != "" {
		t.Errorf("printed %q", out.String())
	}
}

// TestOpenProbed: with REDIS_URL unset, the server at the probed address.
func TestOpenProbed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var out testio.Buffer
	r, err := Open(context.Background(), Config{Private: true, Stderr: &out, Getenv: env(EnvAddr, srv.Addr())})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Private || r.Addr != srv.Addr() || r.URL != "redis://"+srv.Addr() || out.String() != "" {
		t.Errorf("Open = %+v, printed %q; want the probed server", r, out.String())
	}
	// A server that answers but refuses this program is not replaced by a
	// private one: the error says what it answered.
	locked := redistest.Start(t, redistest.WithPassword("s3cret"))
	want := "the server at " + locked.Addr() + " (REDIS_URL unset) is not a Redis this program can use: PING: NOAUTH"
	if r, err := Open(context.Background(), Config{Private: true, Stderr: &out, Getenv: env(EnvAddr, locked.Addr())}); err == nil ||
		!strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; set REDIS_URL") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a password-protected server at the probed address: %+v, %v; want %q...", r, err, want)
	}
	if out.String() != "" {
		t.Errorf("printed %q", out.String())
	}
	if _, err := Open(context.Background(), Config{Getenv: env(EnvAddr, "nohostport")}); err == nil ||
		!strings.Contains(err.Error(), `CRONTAB_DEV_REDIS_ADDR "nohostport": want host:port`) {
		t.Errorf("a bad CRONTAB_DEV_REDIS_ADDR: %v", err)
	}
}

// TestOpenPrivate: nothing at the probed address, redis-server on PATH: a
// private server, announced in one line, gone with its directory at Close.
func TestOpenPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the server's directory goes here
	ctx := context.Background()
	down := closedAddr(t)
	var out testio.Buffer
	r, err := Open(ctx, Config{Name: "basic", Private: true, Stderr: &out, Getenv: env(EnvAddr, down)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := "basic: no Redis at " + down + " (REDIS_URL unset); started a private redis-server at " + r.Addr + " for this run\n"
	if !r.Private || r.srv == nil || out.String() != want || !strings.HasPrefix(r.Addr, "127.0.0.1:") || r.URL != "redis://"+r.Addr {
		t.Fatalf("Open = %+v, printed %q; want a private server and %q", r, out.String(), want)
	}
	c := redis.NewClient(r.Options())
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"save", "appendonly"} {
		if v := c.ConfigGet(ctx, arg).Val()[arg]; v != map[string]string{"save": "", "appendonly": "no"}[arg] {
			t.Errorf("CONFIG GET %s = %q", arg, v)
		}
	}
	pid := r.srv.PID()
	dirs, _ := filepath.Glob(filepath.Join(tmp, "*"))
	if len(dirs) != 1 {
		t.Errorf("files in TMPDIR while it runs: %v; want its directory", dirs)
	}
	r.Close()
	r.Close() // twice is harmless
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("redis-server (pid %d) still runs after Close", pid)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("the private server still answers after Close")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}

// TestOpenNoServer: nothing at the probed address and no redis-server on
// PATH (or Private unset): one line that says how to get one.
func TestOpenNoServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	down := closedAddr(t)
	var out testio.Buffer
	for _, tc := range []struct {
		private bool
		want    string
	}{
		{true, "no Redis at " + down + " (REDIS_URL unset) and no redis-server on PATH to start one: apt-get install redis-server, or set REDIS_URL"},
		{false, "no Redis at " + down + " (REDIS_URL unset; connection refused): start redis-server (apt-get install redis-server) or set REDIS_URL"},
	} {
		r, err := Open(context.Background(), Config{Private: tc.private, Stderr: &out, Getenv: env(EnvAddr, down)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Private %v: Open = %+v, %v; want %q", tc.private, r, err, tc.want)
		}
	}
	if out.String() != "" {
		t.Errorf("printed %q", out.String())
	}
}
