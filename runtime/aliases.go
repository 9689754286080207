package runtime

import (
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// This file keeps the names that moved to Redis-free packages: schedule
// expressions are in package schedule (github.com/gocrontab/crontab/runtime/schedule).

// Schedule tells when a task fires; it is schedule.Schedule. Next returns
// the first fire strictly after t, or the zero Time when there is none.
type Schedule = schedule.Schedule

// Parse parses a schedule expression; times are computed in loc (nil means
// UTC). It is schedule.Parse, whose package documentation describes the
// expression grammar.
func Parse(expression string, loc *time.Location) (Schedule, error) {
	return schedule.Parse(expression, loc)
}

// Describe returns a readable description of s, as stored in a task's
// interval field, such as "every 30s" or "daily at 03:00 (Europe/London)",
// and "" for nil. It is schedule.Describe.
func Describe(s Schedule) string { return schedule.Describe(s) }

// IsOnce reports whether s fires only once (an at: schedule); the scheduler
// removes such a task after it ran. It is false for nil and for schedules
// not returned by Parse. It is schedule.IsOnce.
func IsOnce(s Schedule) bool { return schedule.IsOnce(s) }
