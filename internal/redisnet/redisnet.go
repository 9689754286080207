// Package redisnet holds what the module's programs (the crontab command,
// the examples) say about their Redis connection: go-redis's own log lines
// routed to slog at debug level, and one clear error for a Redis that cannot
// be reached.
//
// go-redis logs through a process-wide logger of its own (redis.SetLogger)
// that writes to stderr: a client of an address where nothing listens prints
// "pool.go:770: redis: connection pool: failed to dial after 5 attempts ..."
// for every command, before the program's own error. [RouteLogs] sends those
// lines to a *slog.Logger at debug level instead, and [Explain] turns the
// dial error itself into one line that names the address and the reason:
//
//	cannot reach Redis at 127.0.0.1:1 (connection refused); set -redis or REDIS_URL
//
// It is not for the runtime: a library does not replace its user's go-redis
// logger. A program calls RouteLogs once, before its first command.
package redisnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// RouteLogs makes go-redis log through l at debug level (each record with
// the attribute source=go-redis) instead of writing to stderr; with a nil l
// its lines are discarded. It sets the process-wide logger of go-redis
// (redis.SetLogger), so a later call replaces it.
func RouteLogs(l *slog.Logger) { redis.SetLogger(slogLogger{l}) }

// slogLogger is go-redis's Logging interface on a *slog.Logger.
type slogLogger struct{ l *slog.Logger }

// Printf logs one go-redis line at debug level.
func (s slogLogger) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.l == nil || !s.l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	s.l.Log(ctx, slog.LevelDebug, fmt.Sprintf(format, v...), "source", "go-redis")
}

// Unreachable reports whether err, the error of a go-redis command or of
// anything that wraps one, says the client could not connect to Redis, and
// why in a few words: "connection refused", "i/o timeout", "no such host",
// "no such file or directory" (a unix socket that is not there).
func Unreachable(err error) (reason string, ok bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return "", false
	}
	var dns *net.DNSError
	var errno syscall.Errno
	var sys *os.SyscallError
	switch {
	case errors.As(op.Err, &dns):
		return dns.Err, true
	case op.Timeout():
		return "i/o timeout", true
	case errors.As(op.Err, &errno):
		return errno.Error(), true
	case errors.As(op.Err, &sys):
		return sys.Err.Error(), true
	default:
		return op.Err.Error(), true
	}
}

// UnreachableError is the error of a program that cannot connect to its
// Redis at Addr.
type UnreachableError struct {
	Addr   string // the address the program was given, host:port or a socket path
	Reason string // why, from [Unreachable]
	Hint   string // what to do about it: "set -redis or REDIS_URL"
	Err    error  // the dial error
}

// Error is "cannot reach Redis at ADDR (REASON); HINT".
func (e *UnreachableError) Error() string {
	s := fmt.Sprintf("cannot reach Redis at %s (%s)", e.Addr, e.Reason)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns the dial error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Explain returns an *UnreachableError for addr with hint when err says the
// client could not connect (see [Unreachable]), and err itself otherwise
// (nil for nil).
func Explain(err error, addr, hint string) error {
	reason, ok := Unreachable(err)
	if !ok {
		return err
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return ue
	}
	return &UnreachableError{Addr: addr, Reason: reason, Hint: hint, Err: err}
}

// Addr is the address a client dials, for messages: host:port, the socket
// path of a unix client, or the seed addresses of a cluster client, joined
// by commas. It is "" for a nil client.
func Addr(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	case nil:
		return ""
	default:
		return fmt.Sprintf("%T", c)
	}
}
