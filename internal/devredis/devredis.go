// Package devredis finds the Redis that the module's example programs run
// against, so that `make run` works on a machine with nothing set up.
//
// [Open] decides, in this order:
//
//  1. REDIS_URL is set: that Redis. It must answer PING, or Open returns one
//     line that names its address ("cannot reach Redis at 127.0.0.1:1
//     (connection refused); check REDIS_URL").
//  2. A Redis answers at $CRONTAB_DEV_REDIS_ADDR (host:port; default
//     127.0.0.1:6379, where a developer's redis-server listens): that one. A
//     server there that answers PING with an error (NOAUTH) is an error.
//  3. [Config.Private] is set and redis-server is on PATH: a private
//     redis-server, started for this run on a free loopback port, in a new
//     temporary directory, without persistence (--save "" --appendonly no).
//     Open says so in one line on [Config.Stderr] (below). [Redis.Close]
//     kills it and removes its directory; on Linux the kernel also kills it
//     when the program dies first (PR_SET_PDEATHSIG), though a program
//     killed with SIGKILL leaves the directory in $TMPDIR behind.
//  4. Otherwise an error of one line that says how to get a Redis:
//     `apt-get install redis-server`, or set REDIS_URL.
//
// The line of step 3:
//
//	basic: no Redis at 127.0.0.1:6379 (REDIS_URL unset); started a private redis-server at 127.0.0.1:41235 for this run
//
// Programs whose processes must share one Redis (a producer and its
// workers) leave Config.Private unset: a private server per process would
// split them. CRONTAB_DEV_REDIS_ADDR lets a test point step 2 at a closed
// port, so that it never uses a Redis it did not start.
//
// The private server is started by [redistest.Launch], the launcher the
// benchmark and the chaos soak use too (a process group of its own, port
// retries, the wait for PING).
//
// It is for examples and demos, not for services: a service is given its
// Redis and waits for it (Scheduler.Run does).
package devredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redisnet"
	"github.com/gocrontab/crontab/internal/redistest"
)

const (
	// EnvURL names the variable that gives the Redis URL.
	EnvURL = "REDIS_URL"
	// EnvAddr names the variable that gives the host:port probed when
	// REDIS_URL is unset.
	EnvAddr = "CRONTAB_DEV_REDIS_ADDR"
	// DefaultAddr is the address probed when REDIS_URL and
	// CRONTAB_DEV_REDIS_ADDR are unset.
	DefaultAddr = "127.0.0.1:6379"
	// InstallHint is how to get redis-server on Debian and Ubuntu.
	InstallHint = "apt-get install redis-server"
	// ProbeTimeout bounds each PING of Open.
	ProbeTimeout = 2 * time.Second
)

// Config says how a program finds its Redis. The zero value uses REDIS_URL
// or the server at the probed address, and starts none.
type Config struct {
	// Name is the program's name, the prefix of the line Open prints
	// ("basic: ..."). Default "redis".
	Name string
	// Private makes Open start a private redis-server when REDIS_URL is
	// unset and no Redis answers at the probed address.
	Private bool
	// Getenv reads the environment. Default os.Getenv.
	Getenv func(string) string
	// Stderr gets the line Open prints when it starts a server. Default
	// os.Stderr.
	Stderr io.Writer
}

// Redis is the Redis a program runs against, from [Open].
type Redis struct {
	// URL is its redis:// URL (REDIS_URL's, or one Open made).
	URL string
	// Addr is its address, host:port or a socket path, for messages.
	Addr string
	// Private reports whether Open started it for this run.
	Private bool

	opt *redis.Options
	srv *redistest.Server
}

// Options returns new go-redis options for r.
func (r *Redis) Options() *redis.Options {
	o := *r.opt
	return &o
}

// Close stops a private server and removes its files. It does nothing for
// a Redis that Open did not start, and nothing the second time.
func (r *Redis) Close() {
	if r.srv != nil {
		r.srv.Close()
		r.srv = nil
	}
}

// Open finds the program's Redis as the package documentation describes.
// Its errors are one line, without the program's name.
func Open(ctx context.Context, cfg Config) (*Redis, error) {
	if cfg.Name == "" {
		cfg.Name = "redis"
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if url := cfg.Getenv(EnvURL); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", EnvURL, url, err)
		}
		if err := ping(ctx, opt); err != nil {
			if _, ok := redisnet.Unreachable(err); ok {
				return nil, redisnet.Explain(err, opt.Addr, "check "+EnvURL)
			}
			return nil, fmt.Errorf("Redis at %s (%s): PING: %w", opt.Addr, EnvURL, err)
		}
		return &Redis{URL: url, Addr: opt.Addr, opt: opt}, nil
	}

	addr := cfg.Getenv(EnvAddr)
	if addr == "" {
		addr = DefaultAddr
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("%s %q: want host:port: %w", EnvAddr, addr, err)
	}
	opt := &redis.Options{Addr: addr}
	err := ping(ctx, opt)
	if err == nil {
		return &Redis{URL: "redis://" + addr, Addr: addr, opt: opt}, nil
	}
	reason, unreachable := redisnet.Unreachable(err)
	if !unreachable {
		return nil, fmt.Errorf("the server at %s (%s unset) is not a Redis this program can use: PING: %v; set %s", addr, EnvURL, err, EnvURL)
	}
	if !cfg.Private {
		return nil, fmt.Errorf("no Redis at %s (%s unset; %s): start redis-server (%s) or set %s", addr, EnvURL, reason, InstallHint, EnvURL)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("no Redis at %s (%s unset) and no redis-server on PATH to start one: %s, or set %s", addr, EnvURL, InstallHint, EnvURL)
	}
	srv, err := redistest.Launch()
	if err != nil {
		return nil, fmt.Errorf("no Redis at %s (%s unset), and a private redis-server did not start: %w", addr, EnvURL, err)
	}
	r := &Redis{URL: srv.URL(), Addr: srv.Addr(), Private: true, opt: srv.Options(), srv: srv}
	fmt.Fprintf(cfg.Stderr, "%s: no Redis at %s (%s unset); started a private redis-server at %s for this run\n", cfg.Name, addr, EnvURL, r.Addr)
	return r, nil
}

// ping sends one PING to opt's server, without retries.
func ping(ctx context.Context, opt *redis.Options) error {
	o := *opt
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DialTimeout = ProbeTimeout
	c := redis.NewClient(&o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	err := c.Ping(ctx).Err()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return fmt.Errorf("no answer to PING within %v: %w", ProbeTimeout, err)
	}
	return err
}
