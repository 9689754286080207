package schedule

import (
	"fmt"
	"sync"
	"time"
)

// Cache parses (expression, zone) pairs once. Processes compute the
// next instant from the expression stored in the task hash, not from their
// own registry, so processes of different builds agree on every instant.
//
// The zero Cache is empty and ready to use; it is safe for concurrent use
// and must not be copied after first use. It remembers errors too, and at
// most 10,000 pairs: past that it starts over empty.
type Cache struct {
	mu sync.Mutex
	m  map[[2]string]scheduleEntry
}

type scheduleEntry struct {
	s   Schedule
	err error
}

// maxCachedSchedules bounds the cache; past it the cache starts over.
const maxCachedSchedules = 10000

// Get returns Parse(expression, loc) for the zone loc that
// time.LoadLocation(tz) returns ("" and "UTC" mean UTC). Its error names
// the part at fault: `tz "X": ...` or `expression "X": ...`.
func (c *Cache) Get(expression, tz string) (Schedule, error) {
	k := [2]string{expression, tz}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		return e.s, e.err
	}
	if c.m == nil || len(c.m) >= maxCachedSchedules {
		c.m = make(map[[2]string]scheduleEntry)
	}
	var e scheduleEntry
	loc, err := time.LoadLocation(tz)
	if err != nil {
		e.err = fmt.Errorf("tz %q: %w", tz, err)
	} else if e.s, err = Parse(expression, loc); err != nil {
		e.err = fmt.Errorf("expression %q: %w", expression, err)
	}
	c.m[k] = e
	return e.s, e.err
}

// Len reports how many (expression, zone) pairs the cache holds: one per
// pair, however many tasks share it.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
