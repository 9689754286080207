package crontabtest

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// StartRedis starts a private redis-server for the test and returns a
// client on it; both are closed at tb's cleanup. The server is the
// installed redis-server, on a free port of 127.0.0.1, with its data and
// log in tb.TempDir, without persistence: an empty Redis of the test's own,
// which the test may flush. Its address is the client's Options().Addr.
//
// When redis-server is not on PATH, StartRedis fails the test (it never
// skips it) with how to install it: `apt-get install -y redis-server` or
// `brew install redis`. It also fails the test when the server does not
// answer within 10 s, with the tail of the server's log.
func StartRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	return redistest.Start(tb).Client(tb)
}
