package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxEverySeconds is the longest every: interval: 366 days.
const maxEverySeconds = 366 * 24 * 60 * 60

// maxUnixSeconds bounds the instants Next computes (about the year 146
// billion), far inside time.Time's range.
const maxUnixSeconds = 1 << 62

// everySchedule fires every interval seconds, on the multiples of the
// interval since the Unix epoch.
type everySchedule struct {
	seconds int64 // the interval, 1..maxEverySeconds
	loc     *time.Location
}

// parseEvery parses the argument of every:, e.g. "60", "30s", "5m" or "1h".
func parseEvery(arg string, loc *time.Location) (*everySchedule, error) {
	num, unit := arg, int64(1)
	if n := len(arg); n > 0 {
		switch arg[n-1] {
		case 's':
			num = arg[:n-1]
		case 'm':
			num, unit = arg[:n-1], 60
		case 'h':
			num, unit = arg[:n-1], 3600
		}
	}
	if !isASCIIDigits(num) {
		switch {
		case arg == "":
			return nil, fmt.Errorf("every: missing interval; want N, Ns, Nm or Nh with N a positive integer")
		case strings.HasPrefix(num, "-"):
			return nil, fmt.Errorf("every: interval %q must be positive", arg)
		case strings.ContainsAny(num, ".,eE"):
			return nil, fmt.Errorf("every: interval %q must be a whole number of seconds, minutes or hours", arg)
		case num != "" && isASCIIDigits(strings.TrimRightFunc(num, isASCIILetter)):
			return nil, fmt.Errorf("every: interval %q has an unknown unit; want s, m or h", arg)
		}
		return nil, fmt.Errorf("every: interval %q is not N, Ns, Nm or Nh with N a positive integer", arg)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > maxEverySeconds/unit {
		return nil, fmt.Errorf("every: interval %q is longer than 366 days", arg)
	}
	if n == 0 {
		return nil, fmt.Errorf("every: interval %q must be positive", arg)
	}
	return &everySchedule{
		seconds: n * unit,
		loc:     loc,
	}, nil
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// Next returns the first multiple of the interval since the Unix epoch that
// is strictly after t.
func (s *everySchedule) Next(t time.Time) time.Time {
	sec := t.Unix() // whole seconds, rounded down; the nanoseconds only make t later
	if sec > maxUnixSeconds {
		return time.Time{} // far beyond any real time; avoids overflow below
	}
	k := sec / s.seconds
	if sec%s.seconds < 0 { // floor division for instants before 1970
		k--
	}
	return time.Unix((k+1)*s.seconds, 0).In(s.loc)
}

// String describes the schedule, e.g. "every 30s" or "every 1m30s".
func (s *everySchedule) String() string { return "every " + durationWords(s.seconds) }
