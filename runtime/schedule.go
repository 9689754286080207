package runtime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxExpressionLen is the longest schedule expression Parse accepts, in bytes.
const maxExpressionLen = 256

// formsWanted lists the expression forms for error messages.
const formsWanted = "want every:, daily:, hourly:, cron: or at:"

// Schedule tells when a task fires. The schedules returned by Parse are
// immutable and safe for concurrent use by any number of goroutines.
//
// Every schedule returned by Parse also implements fmt.Stringer with a
// readable description (see Describe).
type Schedule interface {
	// Next returns the first fire strictly after t, or the zero Time when
	// there is none (an at: schedule that has fired, or a cron schedule past
	// the year 2099). The result is in the schedule's location.
	Next(t time.Time) time.Time
}

// Parse parses a schedule expression; times are computed in loc (nil means UTC).
//
// An expression is a form prefix and its argument, with no spaces around the
// colon:
//
//	every:N, every:Ns   every N seconds (N a positive integer)
//	every:Nm, every:Nh  every N minutes / hours
//	daily:HH:MM         every day at HH:MM (H or HH 0-23, MM 00-59), same as cron:MM HH * * *
//	hourly:MM           every hour at minute MM (0-59), same as cron:MM * * * *
//	cron:EXPR           a crontab(5) schedule: 5 fields or an @macro (see below)
//	at:UNIX             once, at that Unix time in seconds (a positive integer)
//
// An every: interval is at most 366 days. It is aligned to the Unix epoch and
// independent of loc: Next(t) is the smallest multiple of the interval since
// 1970-01-01T00:00:00Z that is strictly after t, so every process computes
// the same instants without shared state, and run N is exactly N intervals
// after run 0 however long each run takes.
//
// An at: schedule returns its instant from Next while the instant is strictly
// after t, then the zero Time; IsOnce reports such schedules.
//
// cron: takes exactly five fields separated by spaces or tabs (minute 0-59,
// hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-7 or
// SUN-SAT, where 0 and 7 are Sunday; names are case-insensitive), or one of
// @hourly, @daily, @midnight, @weekly, @monthly, @yearly and @annually. Each
// field is a comma-separated list of *, */STEP, N, N-M and N-M/STEP; a
// day-of-week range may end in 7 or SUN (FRI-SUN). As in cronie, when the
// day-of-month or the day-of-week field starts with *, a day must match both
// fields; when both are restricted it must match either. Seconds and years
// fields, ?, L, W, #, ~, N/STEP without a range, reversed ranges, steps of 0
// or longer than the field's span, and schedules that can never fire (such as
// 0 0 30 2 *) are errors. Cron schedules end in 2099: after that Next returns
// the zero Time.
//
// daily:, hourly: and cron: schedules follow cronie's daylight-saving policy
// in loc. A job whose minute or hour field starts with * (a "wildcard" job,
// hourly: included) follows real time: wall-clock times skipped by a
// spring-forward transition never fire, and wall-clock times repeated by a
// fall-back transition fire on both occurrences. Any other job (a "fixed-time"
// job, daily: included) fires once per wall-clock time: a time that falls in a
// spring-forward gap fires at the instant of the jump (once, however many
// times in the gap match), and a time in a repeated fall-back range fires on
// its first occurrence only.
//
// Expressions longer than 256 bytes are rejected. Errors say
// what is wrong, for example
//
//	cron: minute field "61": value 61 out of range 0-59
//	every: interval "0s" must be positive
//
// Parse never panics, and Next never loops without bound.
func Parse(expression string, loc *time.Location) (Schedule, error) {
	if loc == nil {
		loc = time.UTC
	}
	if expression == "" {
		return nil, errors.New("empty expression; " + formsWanted)
	}
	if len(expression) > maxExpressionLen {
		return nil, fmt.Errorf("expression is %d bytes; the limit is %d", len(expression), maxExpressionLen)
	}
	form, arg, ok := strings.Cut(expression, ":")
	if !ok {
		return nil, fmt.Errorf("expression %q has no form prefix; %s", expression, formsWanted)
	}
	var s Schedule
	var err error
	switch form {
	case "every":
		s, err = unlessErr(parseEvery(arg, loc))
	case "at":
		s, err = unlessErr(parseAt(arg, loc))
	case "daily":
		s, err = unlessErr(parseDaily(arg, loc))
	case "hourly":
		s, err = unlessErr(parseHourly(arg, loc))
	case "cron":
		s, err = unlessErr(parseCron(arg, loc))
	default:
		err = fmt.Errorf("unknown expression form %q; %s", form+":", formsWanted)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// unlessErr converts a concrete schedule to a Schedule, or to a nil
// Schedule (not an interface holding a nil pointer) when err is not nil.
func unlessErr[S Schedule](s S, err error) (Schedule, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Describe returns a readable description of s, as stored in a task's
// interval field: "every 30s", "daily at 03:00 (Europe/London)",
// "hourly at minute 30 (UTC)", "cron 0 3 * * 1-5 (UTC)" or
// "once at 2024-06-28T16:00:00Z". It returns s.String() for any other
// fmt.Stringer, the Go type for other schedules and "" for nil.
func Describe(s Schedule) string {
	switch s := s.(type) {
	case nil:
		return ""
	case fmt.Stringer:
		return s.String()
	default:
		return fmt.Sprintf("%T", s)
	}
}

// IsOnce reports whether s fires only once (an at: schedule); the scheduler
// removes such a task after it ran. It is false for nil and for schedules
// not returned by Parse.
func IsOnce(s Schedule) bool {
	_, ok := s.(*atSchedule)
	return ok
}

// isASCIIDigits reports whether s is a non-empty run of ASCII digits.
func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDaily parses the argument of daily:, "HH:MM" or "H:MM", into the
// cron schedule MM HH * * * (a fixed-time job).
func parseDaily(arg string, loc *time.Location) (*cronSchedule, error) {
	hh, mm, ok := strings.Cut(arg, ":")
	if !ok || !isASCIIDigits(hh) || len(hh) > 2 || !isASCIIDigits(mm) || len(mm) != 2 {
		return nil, fmt.Errorf("daily: time %q is not HH:MM (hour 0-23, two-digit minute 00-59)", arg)
	}
	h, _ := strconv.Atoi(hh)
	m, _ := strconv.Atoi(mm)
	if h > 23 {
		return nil, fmt.Errorf("daily: time %q: hour %d out of range 0-23", arg, h)
	}
	if m > 59 {
		return nil, fmt.Errorf("daily: time %q: minute %d out of range 0-59", arg, m)
	}
	spec, err := parseCronSpec(fmt.Sprintf("%d %d * * *", m, h))
	if err != nil {
		return nil, err
	}
	return newCronSchedule(spec, loc, fmt.Sprintf("daily at %02d:%02d (%s)", h, m, loc))
}

// parseHourly parses the argument of hourly:, "MM" or "M", into the cron
// schedule MM * * * * (a wildcard job).
func parseHourly(arg string, loc *time.Location) (*cronSchedule, error) {
	if !isASCIIDigits(arg) || len(arg) > 2 {
		return nil, fmt.Errorf("hourly: minute %q is not a number 0-59", arg)
	}
	m, _ := strconv.Atoi(arg)
	if m > 59 {
		return nil, fmt.Errorf("hourly: minute %q out of range 0-59", arg)
	}
	spec, err := parseCronSpec(fmt.Sprintf("%d * * * *", m))
	if err != nil {
		return nil, err
	}
	return newCronSchedule(spec, loc, fmt.Sprintf("hourly at minute %02d (%s)", m, loc))
}
