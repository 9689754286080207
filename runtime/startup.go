package runtime

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// The backoff of Run's wait for Redis: the first retry after about
// startFirstDelay, each next one twice as late, capped at startMaxDelay,
// each with ±20% jitter (so a fleet restarted together does not retry in
// step).
const (
	startFirstDelay = 100 * time.Millisecond
	startMaxDelay   = 5 * time.Second
)

// errStopped says that Run's ctx ended before the scheduler started.
var errStopped = errors.New("crontab: stopped before start")

// startup runs the steps of Run's start that talk to Redis (connect),
// again and again while they fail with a transient error (transientStart),
// until they succeed, a permanent error, Run's ctx ends (errStopped), or
// the start timeout passes (the last error, wrapped with the address and
// the attempts). Every attempt that fails with a transient error is logged
// once, at warning level, with the address, the attempt and the delay
// before the next one.
func (s *Scheduler) startup(ctx context.Context) error {
	began := time.Now()
	var deadline time.Time
	if d := s.opts.startTimeout; d > 0 {
		deadline = began.Add(d)
	}
	addr := redisAddr(s.rdb)
	delay := startFirstDelay
	for attempt := 1; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			actx, cancel = context.WithDeadline(ctx, deadline)
		}
		err := s.connect(actx)
		cancel()
		switch {
		case err == nil:
			if attempt > 1 {
				s.log.Info("Redis reachable", "addr", addr, "attempts", attempt,
					"waited", time.Since(began).Round(time.Millisecond).String())
			}
			return nil
		case ctx.Err() != nil:
			return errStopped
		case !transientStart(err):
			return err
		case !deadline.IsZero() && !time.Now().Before(deadline):
			return s.gaveUp(addr, attempt, err)
		}
		wait := jitter(delay)
		delay = min(2*delay, startMaxDelay)
		if !deadline.IsZero() {
			wait = min(wait, time.Until(deadline))
		}
		s.log.Warn("waiting for Redis", "addr", addr, "attempt", attempt, "retry_in", wait.Round(time.Millisecond).String(), "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errStopped
		case <-t.C:
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return s.gaveUp(addr, attempt, err)
		}
	}
}

// gaveUp is the error of a start that timed out (WithStartTimeout).
func (s *Scheduler) gaveUp(addr string, attempts int, err error) error {
	return wrapErr(err, "redis at %s not reachable after %v (%d attempts)", addr, s.opts.startTimeout, attempts)
}

// connect is one attempt at the steps of the start that talk to Redis. Each
// is idempotent, so a failed attempt is simply made again: the clock sync,
// the quarantine of foreign values, the first heartbeat and the
// registration of the tasks.
func (s *Scheduler) connect(ctx context.Context) error {
	if err := s.clock.Sync(ctx, 5); err != nil {
		return err
	}
	s.start = s.clock.Now()
	if err := s.maint.quarantine(ctx); err != nil {
		return wrapErr(err, "quarantine")
	}
	s.runTypes = runNames(s.reg)
	s.maint.digest = registryDigest(s.reg)
	if err := s.maint.heartbeat(ctx); err != nil {
		return wrapErr(err, "heartbeat")
	}
	return s.maint.register(ctx)
}

// transientStart reports whether an error of the start may go away by
// itself, so Run waits and tries again: Redis cannot be reached (refused,
// reset or timed-out connections, DNS, a closed connection, no reachable
// sentinel or cluster node, a full pool) or replies that it is not ready
// yet (LOADING, BUSY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN, READONLY during a
// failover, NOREPLICAS, max clients). Every other error is permanent and Run returns it
// at once: authentication and permissions (NOAUTH, WRONGPASS, NOPERM), a
// key of the wrong type (WRONGTYPE), OOM, an unknown command or a script
// error, a closed client, TLS certificate errors.
func transientStart(err error) bool {
	if err == nil || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		for _, p := range []string{"LOADING ", "BUSY ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "READONLY ", "NOREPLICAS ", "ERR max number of clients"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsClusterDownError(err) ||
			redis.IsTryAgainError(err) || redis.IsReadOnlyError(err) || redis.IsMaxClientsError(err) || redis.IsNoReplicasError(err)
	}
	var nerr net.Error
	switch {
	case errors.As(err, &nerr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return true
	}
	msg := err.Error()
	for _, s := range []string{"all sentinels specified in configuration are unreachable", "cluster has no nodes", "connection not available"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// jitter spreads d by ±20%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// redisAddr names the Redis a client talks to, for logs and errors: the
// address of a plain client, the seed addresses of a cluster or the shards
// of a ring. go-redis does not expose the master name or the sentinels of a
// failover client (its Options().Addr is "FailoverClient"): it is named
// "sentinel failover".
func redisAddr(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		if a := c.Options().Addr; a == "FailoverClient" {
			return "sentinel failover"
		} else if a != "" {
			return a
		}
	case *redis.ClusterClient:
		if a := c.Options().Addrs; len(a) > 0 {
			return "cluster " + strings.Join(a, ",")
		}
		return "cluster (sentinel failover)"
	case *redis.Ring:
		var a []string
		for _, addr := range c.Options().Addrs {
			a = append(a, addr)
		}
		if len(a) > 0 {
			slices.Sort(a)
			return "ring " + strings.Join(a, ",")
		}
	}
	return "redis"
}
