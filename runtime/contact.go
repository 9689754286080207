package runtime

import (
	"context"
	"time"
)

// redisContact follows, in the maintenance loop, whether this process has
// had steady contact with Redis. After Redis was unreachable or stalled
// (down, restarting, paused, failing over) every process's heartbeat, job
// leases and declared tasks look stale at once, though the processes are
// alive: they had no way to write. Judging them dead then would record
// their runs abandoned (and retry them), deliver their jobs again, and prune
// the tasks they declare. So the duties that judge staleness wait until
// this process has had a process TTL of steady contact, time enough for
// every live process to check in again.
type redisContact struct {
	since  time.Time // start of the current stretch of steady contact
	last   time.Time // end of the last successful heartbeat
	failed bool      // the last heartbeat failed
}

// ok records a successful heartbeat that ran from start to end. It returns
// how long contact was broken when this heartbeat ends a failure or a
// stall (a heartbeat slower than half the TTL, or more than a TTL since the
// last one), else 0.
func (c *redisContact) ok(start, end time.Time, ttl time.Duration) time.Duration {
	var broken time.Duration
	switch {
	case c.last.IsZero():
		c.since = end
	case c.failed || end.Sub(start) > ttl/2 || end.Sub(c.last) > ttl:
		c.since = end
		broken = end.Sub(c.last)
	}
	c.last, c.failed = end, false
	return broken
}

// fail records a failed heartbeat.
func (c *redisContact) fail() { c.failed = true }

// settled reports whether contact has been steady for at least ttl.
func (c *redisContact) settled(now time.Time, ttl time.Duration) bool {
	return !c.since.IsZero() && !c.failed && now.Sub(c.since) >= ttl
}

// dutyKey carries, in the context of one round of master duties, the
// deadline of its scripts.
type dutyKey struct{}

// dutyContext starts a round of master duties on the heartbeat that
// ended at beatAt (server time): every staleness-judging script of the
// round does nothing if Redis runs it later than dutyWindow after that
// heartbeat. Processes beat every TTL/5, so no live process can look a
// TTL old before that, unless Redis or this process was away since the
// heartbeat: a loop held up between its heartbeat and its round (its calls
// stalled by an outage, the process not scheduled), or a read of the round
// delayed (held or retried by the client), would otherwise feed a script
// that judges by a clock that moved on while nobody could write, and
// prune the tasks of live processes or record their runs abandoned.
func (mt *maintainer) dutyContext(ctx context.Context, beatAt time.Time) context.Context {
	return context.WithValue(ctx, dutyKey{}, ms(beatAt.Add(dutyWindow(mt.opts.processTTL))))
}

// dutyWindow is how long after a heartbeat a round of master duties
// started on it may act: 0.7 of a process TTL.
func dutyWindow(ttl time.Duration) time.Duration { return ttl * 7 / 10 }

// dutyDeadline is the server time (unix ms) after which a master duty's
// script does nothing: the round's (see dutyContext), or dutyWindow from
// now outside a round.
func (mt *maintainer) dutyDeadline(ctx context.Context) int64 {
	if v, ok := ctx.Value(dutyKey{}).(int64); ok {
		return v
	}
	return ms(mt.clock.Now().Add(dutyWindow(mt.opts.processTTL)))
}
