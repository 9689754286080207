package redisnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/gocrontab/crontab/internal/redistest"
)

// closedAddr is a loopback address where nothing listens: a port that was
// free a moment ago.
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

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	live := srv.Client(t)
	if err := live.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opt    *redis.Options
		cmd    func(c *redis.Client) error
		reason string // "" for an error that is not a failure to connect
	}{
		{"closed port", &redis.Options{Addr: closedAddr(t)}, nil, "connection refused"},
		{"no socket", &redis.Options{Network: "unix", Addr: filepath.Join(t.TempDir(), "none.sock")}, nil, "no such file or directory"},
		{"wrong type", srv.Options(), func(c *redis.Client) error { return c.LPush(ctx, "k", "x").Err() }, ""},
		{"nil reply", srv.Options(), func(c *redis.Client) error { return c.Get(ctx, "nokey").Err() }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.MaxRetries = -1
			c := redis.NewClient(tc.opt)
			defer c.Close()
			cmd := tc.cmd
			if cmd == nil {
				cmd = func(c *redis.Client) error { return c.Ping(ctx).Err() }
			}
			err := cmd(c)
			if err == nil {
				t.Fatal("no error")
			}
			wrapped := fmt.Errorf("crontab: list tasks: %w", err)
			reason, ok := Unreachable(wrapped)
			if ok != (tc.reason != "") || reason != tc.reason {
				t.Errorf("Unreachable(%v) = %q, %v; want %q", wrapped, reason, ok, tc.reason)
			}
			got := Explain(wrapped, tc.opt.Addr, "set REDIS_URL")
			var ue *UnreachableError
			if tc.reason == "" {
				if got != wrapped {
					t.Errorf("Explain changed %v into %v", wrapped, got)
				}
				return
			}
			if !errors.As(got, &ue) || !errors.Is(got, err) {
				t.Fatalf("Explain = %#v, want an *UnreachableError wrapping %v", got, err)
			}
			want := "cannot reach Redis at " + tc.opt.Addr + " (" + tc.reason + "); set REDIS_URL"
			if got.Error() != want {
				t.Errorf("Explain: %q, want %q", got, want)
			}
			if again := Explain(fmt.Errorf("more: %w", got), "other", "other hint"); again != got {
				t.Errorf("Explain of an explained error: %v, want %v", again, got)
			}
		})
	}
	if r, ok := Unreachable(nil); ok || r != "" {
		t.Errorf("Unreachable(nil) = %q, %v", r, ok)
	}
	if Explain(nil, "x", "y") != nil {
		t.Error("Explain(nil) is not nil")
	}
}

func TestAddr(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "10.0.0.1:6380"})
	defer c.Close()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"a:1", "b:2"}})
	defer cc.Close()
	for _, tc := range []struct {
		c    redis.UniversalClient
		want string
	}{{c, "10.0.0.1:6380"}, {cc, "a:1,b:2"}, {nil, ""}} {
		if got := Addr(tc.c); got != tc.want {
			t.Errorf("Addr(%T) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestRouteLogs: the pool's dial failures go to the slog logger at debug
// level, not to stderr; with a nil logger nowhere. Not parallel: it sets
// go-redis's process-wide logger.
func TestRouteLogs(t *testing.T) {
	t.Cleanup(logging.Enable)
	var buf bytes.Buffer
	RouteLogs(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	c := redis.NewClient(&redis.Options{Addr: closedAddr(t), MaxRetries: -1, DialerRetries: 2, DialerRetryTimeout: time.Millisecond})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Fatal("PING of a closed port succeeded")
	}
	out := buf.String()
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "failed to dial") || !strings.Contains(out, "source=go-redis") {
		t.Errorf("go-redis's dial failure did not reach the logger at debug level:\n%s", out)
	}

	// At info level (slog's default) the line is dropped.
	buf.Reset()
	RouteLogs(slog.New(slog.NewTextHandler(&buf, nil)))
	_ = c.Ping(context.Background()).Err()
	if buf.Len() != 0 {
		t.Errorf("logged at info level: %s", buf.String())
	}
	RouteLogs(nil)
	_ = c.Ping(context.Background()).Err() // does not panic, logs nothing
}
