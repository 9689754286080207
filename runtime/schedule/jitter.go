package schedule

import (
	"fmt"
	"hash/fnv"
	"time"
)

// MaxJitter is the largest jitter a task takes (the directive key jitter,
// TaskConfig.Jitter, TaskSpec.Jitter): 24 hours.
const MaxJitter = 24 * time.Hour

// ValidateJitter checks a task's jitter: 0 (none) or a whole number of
// milliseconds from 1ms to MaxJitter. A jitter above the schedule's period
// is allowed; it spreads the task's instants no more than the period
// would.
func ValidateJitter(d time.Duration) error {
	switch {
	case d < 0 || d > MaxJitter:
		return fmt.Errorf("jitter %v: want 0 (none) to %v", d, MaxJitter)
	case d%time.Millisecond != 0:
		return fmt.Errorf("jitter %v: want a whole number of milliseconds", d)
	}
	return nil
}

// JitterOffset returns the stable offset in [0, d) of the task key for a
// jitter of d: the FNV-64a hash (hash/fnv.New64a) of the key's bytes,
// modulo d in whole milliseconds, in milliseconds. It depends on nothing
// but the key and d, so every process and every release computes the same
// offset; it is 0 when d is under a millisecond.
func JitterOffset(key string, d time.Duration) time.Duration {
	n := uint64(d / time.Millisecond)
	if n == 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return time.Duration(h.Sum64()%n) * time.Millisecond
}

// Offset returns s with each of its instants moved later by d, in
// absolute time: Next(t) is s.Next(t - d) + d, and the zero Time when s
// has none left. For a cron schedule in a daylight-saving transition the
// offset is added to the instant the policy yields (see Daylight-saving
// time), not to the wall-clock time: a fixed-time job at 02:30 on a
// spring-forward night fires at the jump plus d. Offset returns s itself
// when d <= 0 or s is nil. The schedule it returns describes itself as s
// does, followed by " + <d>".
func Offset(s Schedule, d time.Duration) Schedule {
	if d <= 0 || s == nil {
		return s
	}
	return offsetSchedule{s: s, d: d}
}

// offsetSchedule is s moved later by d (Offset).
type offsetSchedule struct {
	s Schedule
	d time.Duration
}

// Next returns the first instant of s plus d strictly after t.
func (o offsetSchedule) Next(t time.Time) time.Time {
	n := o.s.Next(t.Add(-o.d))
	if n.IsZero() {
		return n
	}
	return n.Add(o.d)
}

// String describes the schedule: s's description and the offset.
func (o offsetSchedule) String() string { return Describe(o.s) + " + " + o.d.String() }
