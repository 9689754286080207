package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// This file is the cron engine: cronie's matching rules and daylight-saving
// policy on top of hashicorp/cronexpr.
//
// cronexpr is only ever asked about a fake "wall clock" space: a time.Time in
// time.UTC whose fields equal the local wall clock of the schedule's zone.
// There its daylight-saving code never runs, and the wrapper maps wall times
// to real instants itself, one period of constant UTC offset at a time
// (time.Time.ZoneBounds). cronexpr is given a canonical expression of plain
// number lists built from our own bitsets, never the user's text, so its
// parser's leniencies (5/10, reversed ranges, 7 in ranges, L, W, #) cannot
// leak through.

const (
	// maxPeriods bounds the offset periods one Next call walks. A search
	// crosses at most two or four transitions a year up to 2099.
	maxPeriods = 2048
)

var (
	// searchFloor is where searches from earlier instants start: cronexpr
	// knows no year before 1970, and no zone is a day away from UTC.
	searchFloor = time.Date(1969, time.December, 30, 0, 0, 0, 0, time.UTC)
	// searchCeil is past the last year cronexpr knows (2099) in every zone.
	searchCeil = time.Date(2100, time.January, 2, 0, 0, 0, 0, time.UTC)
)

// cronSchedule is a cron:, daily: or hourly: schedule.
type cronSchedule struct {
	spec     cronSpec
	wildcard bool                 // cronie's wildcard job: follows real time across transitions
	expr     *cronexpr.Expression // the canonical expression; never call Next on it directly
	weekdays uint8                // when not 0, fires only on these weekdays (bit 0 = Sunday)
	loc      *time.Location
	desc     string
}

// parseCron parses the argument of cron:.
func parseCron(arg string, loc *time.Location) (*cronSchedule, error) {
	spec, err := parseCronSpec(arg)
	if err != nil {
		return nil, err
	}
	return newCronSchedule(spec, loc, "cron "+spec.text+" ("+loc.String()+")")
}

// newCronSchedule builds the engine for a parsed spec.
func newCronSchedule(spec cronSpec, loc *time.Location, desc string) (*cronSchedule, error) {
	canonical, weekdays := spec.canonical()
	expr, err := cronexpr.Parse(canonical)
	if err != nil { // cannot happen: the canonical form is plain number lists
		return nil, fmt.Errorf("cron: %q: internal error: cronexpr rejects canonical form %q: %v", spec.text, canonical, err)
	}
	return &cronSchedule{
		spec:     spec,
		wildcard: spec.wildcard(),
		expr:     expr,
		weekdays: weekdays,
		loc:      loc,
		desc:     desc,
	}, nil
}

// canonical returns the 5-field expression for cronexpr: comma lists of
// plain numbers (or * for a full field), day-of-week 0-6. cronexpr ORs the
// day fields when both are restricted and otherwise uses the restricted one,
// as cronie does except in one case: cronie ANDs them when one field starts
// with * but both are restricted (0 0 */2 * 1). Then cronexpr gets the
// day-of-month field alone and weekdays is the day-of-week filter the caller
// applies to its results.
func (s *cronSpec) canonical() (expr string, weekdays uint8) {
	const allDom, allDow = 0xfffffffe, 0x7f
	dom, dow := numberList(s.dom, 1, 31), numberList(s.dow, 0, 6)
	switch {
	case s.dom == allDom && s.dow == allDow:
		dom, dow = "*", "*"
	case !s.andDays():
		// Either field matching is enough; a full field matches every day.
		if s.dom == allDom || s.dow == allDow {
			dom, dow = "*", "*"
		}
	case s.dow == allDow:
		dow = "*"
	case s.dom == allDom:
		dom = "*"
	default:
		dow, weekdays = "*", uint8(s.dow)
	}
	fields := []string{
		starList(s.minute, 0, 59), starList(s.hour, 0, 23), dom, starList(s.month, 1, 12), dow,
	}
	return strings.Join(fields, " "), weekdays
}

// starList is numberList, or * when the set holds every value low..high.
func starList(set uint64, low, high int) string {
	if set == (uint64(1)<<(high+1)-1)&^(uint64(1)<<low-1) {
		return "*"
	}
	return numberList(set, low, high)
}

// numberList formats a set as a comma list of the numbers in it.
func numberList(set uint64, low, high int) string {
	var b []byte
	for v := low; v <= high; v++ {
		if set&(1<<v) != 0 {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
	}
	return string(b)
}

// wallNext returns the first wall-clock time matching the schedule strictly
// after w, in the fake UTC wall-clock space, or the zero Time when there is
// none before 2100.
func (s *cronSchedule) wallNext(w time.Time) time.Time {
	for range 4 { // twice at most: see below
		// cronexpr's Next writes e.actualDaysOfMonthList: work on a copy so
		// concurrent calls never share it. The copy's maps and slices are
		// only read.
		e := *s.expr
		c := e.Next(w)
		if c.IsZero() || s.weekdays == 0 || s.weekdays&(1<<c.Weekday()) != 0 {
			return c
		}
		// A day of the wrong weekday: find the next day that matches all
		// day fields, and ask again from its start. Every day has matching
		// times, so the second answer is on that day.
		day, ok := s.nextDay(c)
		if !ok {
			break
		}
		w = day.Add(-time.Second)
	}
	return time.Time{}
}

// nextDay returns the first day after the day of c (in the wall-clock
// space) whose month, day of month and weekday all match, at 00:00, or false
// when there is none before 2100.
func (s *cronSchedule) nextDay(c time.Time) (time.Time, bool) {
	y, m, d := c.Date()
	for d++; y < 2100; d = 1 {
		if s.spec.month&(1<<m) != 0 {
			last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
			for ; d <= last; d++ {
				if s.spec.dom&(1<<d) == 0 {
					continue
				}
				if day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); s.weekdays&(1<<day.Weekday()) != 0 {
					return day, true
				}
			}
		}
		if m++; m > time.December {
			m, y = time.January, y+1
		}
	}
	return time.Time{}, false
}

// Next returns the first fire strictly after t.
//
// Real time is split into periods of constant UTC offset. Inside one period
// the wall clock is real time plus the offset, so the search asks wallNext
// for the first match after the wall clock of t and maps it back. A match
// that lies beyond the period's end continues in the next period, from the
// wall clock that period starts at; on the way, fixed-time jobs apply
// cronie's rules: a match in a spring-forward gap fires at the jump, and
// after a fall-back the wall times the previous period already reached do
// not fire again.
func (s *cronSchedule) Next(t time.Time) time.Time {
	if t.Before(searchFloor) {
		t = searchFloor
	}
	if !t.Before(searchCeil) {
		return time.Time{}
	}
	from, at := t, t // search strictly after from, in the period holding at
	for range maxPeriods {
		local := at.In(s.loc)
		_, offset := local.Zone()
		start, end := local.ZoneBounds()
		w := wallClock(from, offset)
		if !s.wildcard && !start.IsZero() {
			if _, before := start.Add(-time.Nanosecond).In(s.loc).Zone(); before > offset {
				// The clock went back at start. Fixed-time jobs fire only
				// at wall times the previous period did not reach, i.e.
				// from wallClock(start, before) on.
				if lo := wallClock(start, before).Add(-time.Nanosecond); w.Before(lo) {
					w = lo
				}
			}
		}
		c := s.wallNext(w)
		if c.IsZero() {
			return time.Time{}
		}
		r := c.Add(-time.Duration(offset) * time.Second)
		if end.IsZero() || r.Before(end) {
			return r.In(s.loc)
		}
		if !s.wildcard {
			// The clock jumps forward at end: a fixed-time job whose wall
			// time falls in the gap fires at the jump.
			if _, after := end.In(s.loc).Zone(); after > offset && c.Before(wallClock(end, after)) {
				return end.In(s.loc)
			}
		}
		from, at = end.Add(-time.Nanosecond), end
	}
	return time.Time{}
}

// wallClock returns the wall clock of t at a UTC offset (seconds east), as a
// time in time.UTC.
func wallClock(t time.Time, offset int) time.Time {
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// String describes the schedule, e.g. "cron 0 3 * * 1-5 (UTC)".
func (s *cronSchedule) String() string { return s.desc }
