package runtime

import "time"

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

// dutyDeadline is the server time (unix ms) after which a master duty's
// script, issued now, does nothing. A script that judges staleness (of
// heartbeats, leases, declarations) and reaches Redis late, because Redis
// was paused or restarting while go-redis held or retried the command,
// would otherwise judge by a clock that moved on while nobody could write.
func (s *Scheduler) dutyDeadline() int64 {
	return ms(s.clock.Now().Add(s.opts.processTTL / 2))
}
