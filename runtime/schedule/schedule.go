package schedule

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
// Every schedule returned by Parse also implements fmt.Stringer with its
// description in words (see Describe).
type Schedule interface {
	// Next returns the first fire strictly after t, or the zero Time when
	// there is none (an at: schedule that has fired, or a cron schedule past
	// the year 2099). The result is in the schedule's location.
	Next(t time.Time) time.Time
}

// Parse parses a schedule expression; times are computed in loc (nil means UTC).
// The grammar, the daylight-saving policy and the limits are in the package
// documentation.
//
// The error of a malformed expression, or of one that can never fire, says
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

// Describe explains s in English words, as stored in a task's interval
// field and shown by the crontab command and the dashboard next to the
// expression itself:
//
//	every:90s              every 1m30s
//	daily:08:00            at 08:00 every day
//	hourly:30              at minute 30 past every hour
//	cron:0 8 * * 1-5       at 08:00, Monday through Friday
//	cron:*/15 9-17 * * *   every 15 minutes from 09:00 through 17:59
//	cron:* 0 * * *         every minute from 00:00 through 00:59
//	cron:0 0 L * *         at 00:00 on the last day of the month
//	cron:0 9 * * 5#3       at 09:00 on the third Friday of the month
//	cron:0,7,13 1,5 * * *  at minutes 0,7,13 past hours 1,5
//	at:1719590400          once at 2024-06-28T16:00:00Z
//
// A description is exact: when the fields are too irregular for a phrase,
// it lists their values. The zone of a daily:, hourly: or cron: schedule
// follows in parentheses unless it is UTC ("at 08:00 every day
// (Europe/London)"); every: and at: schedules do not depend on it. Describe returns s.String() for any other fmt.Stringer, the
// Go type for other schedules and "" for nil.
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

// IsOnce reports whether s fires only once (an at: schedule, or one
// moved by Offset); the scheduler removes such a task after it ran. It is
// false for nil and for schedules not returned by Parse or Offset.
func IsOnce(s Schedule) bool {
	if o, ok := s.(offsetSchedule); ok {
		s = o.s
	}
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
	return newCronSchedule(spec, loc), nil
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
	return newCronSchedule(spec, loc), nil
}
