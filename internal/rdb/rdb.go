package rdb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RDB is the data model of one namespace on one Redis (or Redis Cluster):
// its keys, its scripts and its stored formats. Each script has one typed
// method; callers never see KEYS or ARGV. It is safe for concurrent use.
type RDB struct {
	c redis.UniversalClient
	k Keys
}

// New returns the data model of namespace on client.
func New(client redis.UniversalClient, namespace string) *RDB {
	return &RDB{c: client, k: NewKeys(namespace)}
}

// Client returns the Redis client.
func (r *RDB) Client() redis.UniversalClient { return r.c }

// Keys returns the namespace's keys.
func (r *RDB) Keys() Keys { return r.k }

// IsReplyError reports whether err is Redis's error reply to one command
// (WRONGTYPE, a value that is not an integer, ...), not a failure to reach
// Redis; redis.Nil is not one.
func IsReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}

// loadScripts loads scripts into the server's script cache (on every
// master of a cluster), so pipelines can call them with EVALSHA.
func loadScripts(ctx context.Context, c redis.UniversalClient, scripts ...*redis.Script) error {
	for _, sc := range scripts {
		if err := sc.Load(ctx, c).Err(); err != nil {
			return fmt.Errorf("load script: %w", err)
		}
	}
	return nil
}

// isNoScript reports whether err says the script cache lacks a script, as
// after a Redis restart.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// pipelined runs fill in a pipeline and executes it. If the server lost
// its script cache (a restart), it loads scripts and sends again only the
// commands that found their script missing (NOSCRIPT), in a second
// pipeline, so no command runs twice: another connection may load a script
// while the pipeline runs, and the calls after that point ran already. The
// commands fill returned carry their final replies.
func pipelined[T any](ctx context.Context, c redis.UniversalClient, scripts []*redis.Script, fill func(redis.Pipeliner) T) (T, error) {
	pipe := c.Pipeline()
	out := fill(pipe)
	cmds, err := pipe.Exec(ctx)
	if !isNoScript(err) {
		return out, err
	}
	if lerr := loadScripts(ctx, c, scripts...); lerr != nil {
		return out, lerr
	}
	again := c.Pipeline()
	for _, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			cmd.SetErr(nil)
			_ = again.Process(ctx, cmd)
		}
	}
	if _, err := again.Exec(ctx); err != nil && !isReplyOnly(err) {
		return out, err
	}
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// isReplyOnly reports whether err is an error reply of one command (which
// that command carries), not a failure to reach the server.
func isReplyOnly(err error) bool { return IsReplyError(err) || errors.Is(err, redis.Nil) }
