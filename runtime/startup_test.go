package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// quickClient is a client of srv that makes one attempt per command and
// one dial retry, so each attempt of Run's start fails within a few
// milliseconds while the server is down (go-redis's defaults retry for
// about 1.7s).
func quickClient(t *testing.T, srv *redistest.Server) *redis.Client {
	opts := srv.Options()
	opts.MaxRetries, opts.DialerRetries = -1, 1
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// downRedis starts a private redis-server and stops it, for a test that
// starts a scheduler before its Redis: the address is free, and
// Relaunch brings the server up on it.
func downRedis(t *testing.T) *redistest.Server {
	t.Helper()
	srv := redistest.Start(t)
	srv.Stop()
	return srv
}

// startRun starts Run in a goroutine without waiting for it to start; the
// returned func cancels its ctx. Run's result arrives on done.
func startRun(t *testing.T, client redis.UniversalClient, reg *Registry, opts ...Option) (*Scheduler, context.CancelFunc, <-chan error) {
	t.Helper()
	opts = append([]Option{WithProcessTTL(time.Second), WithGracePeriod(time.Second)}, opts...)
	s, err := NewScheduler(client, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, returned := make(chan error, 1), make(chan struct{})
	go func() { done <- s.Run(ctx); close(returned) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-returned:
		case <-time.After(15 * time.Second):
			t.Errorf("Run did not return 15s after its ctx ended")
		}
	})
	return s, cancel, done
}

func isReady(s *Scheduler) bool {
	select {
	case <-s.Ready():
		return true
	default:
		return false
	}
}

var attemptRE = regexp.MustCompile(`attempt=(\d+)`)

func TestRunWaitsForRedis(t *testing.T) {
	t.Parallel()
	srv := downRedis(t)
	name := t.Name()
	var fired atomic.Int64
	behave(t, name, func(context.Context) error { fired.Add(1); return nil })
	logs, logger := newLogCapture()
	s, _, done := startRun(t, quickClient(t, srv), testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)}),
		WithLogger(logger))

	time.Sleep(1200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Run returned while Redis was down: %v", err)
	default:
	}
	if isReady(s) {
		t.Fatal("Ready is closed while Redis is down")
	}
	waiting := logs.lines("waiting for Redis")
	if len(waiting) < 3 {
		t.Fatalf("%d attempts logged in 1.2s, want at least 3 (100ms backoff doubling); the log:\n%s", len(waiting), logs.String())
	}
	for i, line := range waiting {
		if !strings.Contains(line, "addr="+srv.Addr()) || !strings.Contains(line, "level=WARN") || !strings.Contains(line, "retry_in=") {
			t.Errorf("attempt line lacks the address %s, the level or the delay: %s", srv.Addr(), line)
		}
		if m := attemptRE.FindStringSubmatch(line); m == nil || m[1] != fmt.Sprint(i+1) {
			t.Errorf("line %d does not log attempt=%d (one line per attempt): %s", i, i+1, line)
		}
	}

	if err := srv.Relaunch(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("Run returned: %v", err)
	case <-time.After(8 * time.Second):
		t.Fatalf("not ready 8s after Redis came up; the log:\n%s", logs.String())
	}
	logs.expectLog(t, "Redis reachable", "addr="+srv.Addr())
	waitFor(t, 5*time.Second, "a fire once Redis is up", func() bool { return fired.Load() > 0 })
}

// A Redis that answers PING and TIME but refuses writes for a while (here
// NOREPLICAS, as a master waiting for its replicas does) fails the start at
// the heartbeat: Run waits and tries again, and starts once writes pass.
func TestRunRetriesATransientFailureAfterPing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	must(t, admin.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	logs, logger := newLogCapture()
	s, _, done := startRun(t, srv.Client(t), testRegistry(t), WithLogger(logger))

	waitFor(t, 5*time.Second, "two attempts refused with NOREPLICAS", func() bool {
		return len(logs.lines("waiting for Redis", "NOREPLICAS")) >= 2
	})
	if isReady(s) {
		t.Fatal("Ready is closed while Redis refuses writes")
	}
	must(t, admin.ConfigSet(ctx, "min-replicas-to-write", "0").Err())
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("Run returned: %v", err)
	case <-time.After(8 * time.Second):
		t.Fatalf("not ready 8s after writes pass; the log:\n%s", logs.String())
	}
}

// Permanent errors end Run at once, whatever the start timeout.
func TestRunFailsAtOnceOnAPermanentError(t *testing.T) {
	t.Parallel()
	t.Run("NOAUTH", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t, redistest.WithPassword("secret"))
		opts := srv.Options()
		opts.Password = ""
		client := redis.NewClient(opts)
		t.Cleanup(func() { _ = client.Close() })
		began := time.Now()
		_, _, done := startRun(t, client, testRegistry(t), WithLogger(nil))
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
				t.Errorf("Run = %v, want the NOAUTH error", err)
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Errorf("Run took %v to fail on NOAUTH, want at once", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run still waits 5s after a NOAUTH reply")
		}
	})
	t.Run("WRONGTYPE", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		client := srv.Client(t)
		name := "wrongtype"
		must(t, client.Set(context.Background(), newKeys(DefaultNamespace).Task(name), "not a hash", 0).Err())
		_, _, done := startRun(t, client, testRegistry(t, TaskConfig{Name: name, Expression: "every:1h", New: probeNew(0)}),
			WithLogger(nil))
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "crontab: register tasks") {
				t.Errorf("Run = %v, want the registration's error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run still waits 5s after a wrong-type key")
		}
	})
}

func TestRunStartTimeout(t *testing.T) {
	t.Parallel()
	srv := downRedis(t)
	for _, c := range []struct {
		name   string
		client *redis.Client
	}{
		{"default client", srv.Client(t)}, // one attempt retries dialing for 1.7s: cut at the timeout
		{"quick client", quickClient(t, srv)},
	} {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			_, _, done := startRun(t, c.client, testRegistry(t), WithLogger(nil), WithStartTimeout(500*time.Millisecond))
			select {
			case err := <-done:
				d := time.Since(began)
				want := "crontab: redis at " + srv.Addr() + " not reachable after 500ms ("
				if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "attempts): read redis TIME: ") ||
					strings.Count(err.Error(), "crontab:") != 1 {
					t.Fatalf("Run = %v, want an error starting %q", err, want)
				}
				if c.client.Options().MaxRetries < 0 && !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("Run's error does not wrap the refused connection: %v", err)
				}
				if d < 450*time.Millisecond || d > 1500*time.Millisecond {
					t.Errorf("Run gave up after %v, want about 500ms", d)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Run still waits 3s into a start timeout of 500ms")
			}
		})
	}
}

func TestWithStartTimeoutRange(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = client.Close() })
	for _, d := range []time.Duration{0, MinStartTimeout, time.Minute, MaxStartTimeout} {
		if _, err := NewScheduler(client, NewRegistry(), WithStartTimeout(d)); err != nil {
			t.Errorf("WithStartTimeout(%v): %v", d, err)
		}
	}
	for _, d := range []time.Duration{-time.Second, time.Nanosecond, MinStartTimeout - 1, MaxStartTimeout + 1} {
		_, err := NewScheduler(client, NewRegistry(), WithStartTimeout(d))
		if err == nil || !strings.Contains(err.Error(), "WithStartTimeout") || !strings.Contains(err.Error(), d.String()) {
			t.Errorf("WithStartTimeout(%v): error %v, want one naming the option and the value", d, err)
		}
	}
	if _, err := buildOptions(scopeClient, []Option{WithStartTimeout(time.Second)}); err == nil ||
		!strings.Contains(err.Error(), "WithStartTimeout is a Scheduler option") {
		t.Errorf("a Client given WithStartTimeout: %v, want an error", err)
	}
}

func TestRunCancelledWhileWaitingForRedis(t *testing.T) {
	t.Parallel()
	srv := downRedis(t)
	// The default client is inside go-redis's dial retries 300ms in; the
	// quick one in Run's backoff.
	for _, client := range []*redis.Client{srv.Client(t), quickClient(t, srv)} {
		s, cancel, done := startRun(t, client, testRegistry(t), WithLogger(nil))
		time.Sleep(300 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v after its ctx ended before start, want nil (a graceful stop)", err)
			}
		case <-time.After(time.Second):
			t.Fatal("Run did not return within 1s of its ctx ending while it waited for Redis")
		}
		if isReady(s) {
			t.Error("Ready is closed though the scheduler never started")
		}
	}

	// A ctx that ended before Run was called.
	s2, err := NewScheduler(srv.Client(t), testRegistry(t), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	if err := s2.Run(ctx); err != nil {
		t.Errorf("Run with an ended ctx = %v, want nil", err)
	}
}

// replyErr is an error reply of Redis, as go-redis's are (redis.Error).
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

func TestTransientStartErrors(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err       error
		transient bool
	}{
		{refused, true},
		{fmt.Errorf("crontab: read redis TIME: %w", refused), true},
		{io.EOF, true},
		{context.DeadlineExceeded, true},
		{redis.ErrPoolTimeout, true},
		{errors.New("redis: all sentinels specified in configuration are unreachable"), true},
		{replyErr("LOADING Redis is loading the dataset in memory"), true},
		{fmt.Errorf("crontab: register tasks: %w", replyErr("LOADING Redis is loading the dataset in memory")), true},
		{replyErr("BUSY Redis is busy running a script"), true},
		{replyErr("MASTERDOWN Link with MASTER is down"), true},
		{replyErr("CLUSTERDOWN The cluster is down"), true},
		{replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{replyErr("READONLY You can't write against a read only replica."), true},
		{replyErr("NOREPLICAS Not enough good replicas to write."), true},
		{replyErr("ERR max number of clients reached"), true},
		{replyErr("NOAUTH Authentication required."), false},
		{replyErr("WRONGPASS invalid username-password pair or user is disabled."), false},
		{replyErr("NOPERM User x has no permissions to run the 'evalsha' command"), false},
		{fmt.Errorf("crontab: register tasks: %w", replyErr("WRONGTYPE Operation against a key holding the wrong kind of value")), false},
		{replyErr("OOM command not allowed when used memory > 'maxmemory'."), false},
		{replyErr("ERR unknown command 'HSETEX'"), false},
		{redis.ErrClosed, false},
		{errors.New("x509: certificate signed by unknown authority"), false},
	} {
		if got := transientStart(c.err); got != c.transient {
			t.Errorf("transientStart(%v) = %v, want %v", c.err, got, c.transient)
		}
	}
}

func TestRedisAddr(t *testing.T) {
	t.Parallel()
	plain := redis.NewClient(&redis.Options{Addr: "10.0.0.1:6379"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000"}})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{"10.0.0.1:26379"}})
	t.Cleanup(func() { _ = plain.Close(); _ = cluster.Close(); _ = failover.Close() })
	for c, want := range map[redis.UniversalClient]string{
		plain:    "10.0.0.1:6379",
		cluster:  "cluster 10.0.0.1:7000,10.0.0.2:7000",
		failover: "sentinel failover",
	} {
		if got := redisAddr(c); got != want {
			t.Errorf("redisAddr(%T) = %q, want %q", c, got, want)
		}
	}
}
