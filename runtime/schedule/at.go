package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxAtSeconds is the latest at: instant, 9999-12-31T23:59:59Z.
const maxAtSeconds = 253402300799

// atSchedule fires once, at a fixed instant.
type atSchedule struct {
	at time.Time
}

// parseAt parses the argument of at:, decimal Unix seconds.
func parseAt(arg string, loc *time.Location) (*atSchedule, error) {
	if !isASCIIDigits(arg) {
		switch {
		case arg == "":
			return nil, fmt.Errorf("at: missing time; want Unix seconds, e.g. at:1719590400")
		case strings.HasPrefix(arg, "-"):
			return nil, fmt.Errorf("at: time %q must be positive", arg)
		}
		return nil, fmt.Errorf("at: time %q is not a whole number of Unix seconds", arg)
	}
	sec, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || sec > maxAtSeconds {
		return nil, fmt.Errorf("at: time %q is after the year 9999 (Unix seconds are expected, not milliseconds)", arg)
	}
	if sec == 0 {
		return nil, fmt.Errorf("at: time %q must be positive", arg)
	}
	return &atSchedule{at: time.Unix(sec, 0).In(loc)}, nil
}

// Next returns the instant while it is strictly after t, then the zero Time.
func (s *atSchedule) Next(t time.Time) time.Time {
	if s.at.After(t) {
		return s.at
	}
	return time.Time{}
}

// String describes the schedule, e.g. "once at 2024-06-28T16:00:00Z".
func (s *atSchedule) String() string { return "once at " + s.at.UTC().Format(time.RFC3339) }
