package schedule

import (
	"math/bits"
	"time"
)

// This file is the cron engine: cronie's matching rules and daylight-saving
// policy on bitsets.
//
// Matching runs in a fake "wall clock" space: a time.Time in time.UTC whose
// fields equal the local wall clock of the schedule's zone. wallNext finds
// matches there, month by month and day by day from the spec's days table,
// and Next maps wall times to real instants itself, one period of constant
// UTC offset at a time (time.Time.ZoneBounds).

const (
	// maxPeriods bounds the offset periods one Next call walks. A search
	// crosses at most two or four transitions a year up to 2099.
	maxPeriods = 2048
	// firstYear and lastYear bound the wall-clock years schedules fire in.
	firstYear, lastYear = 1970, 2099
)

var (
	// searchFloor is where searches from earlier instants start: no
	// schedule fires before 1970 and no zone is a day away from UTC.
	searchFloor = time.Date(1969, time.December, 30, 0, 0, 0, 0, time.UTC)
	// searchCeil is past the last year schedules fire in (2099) in every zone.
	searchCeil = time.Date(2100, time.January, 2, 0, 0, 0, 0, time.UTC)
)

// cronSchedule is a cron:, daily: or hourly: schedule.
type cronSchedule struct {
	spec     cronSpec
	wildcard bool // cronie's wildcard job: follows real time across transitions
	loc      *time.Location
}

// parseCron parses the argument of cron:.
func parseCron(arg string, loc *time.Location) (*cronSchedule, error) {
	spec, err := parseCronSpec(arg)
	if err != nil {
		return nil, err
	}
	return newCronSchedule(spec, loc), nil
}

// newCronSchedule builds the engine for a parsed spec.
func newCronSchedule(spec cronSpec, loc *time.Location) *cronSchedule {
	return &cronSchedule{spec: spec, wildcard: spec.wildcard(), loc: loc}
}

// wallNext returns the first wall-clock time matching the schedule strictly
// after w, in the fake UTC wall-clock space, or the zero Time when there is
// none before 2100.
func (s *cronSchedule) wallNext(w time.Time) time.Time {
	start := w.Truncate(time.Minute).Add(time.Minute)
	if start.Year() < firstYear {
		start = time.Date(firstYear, time.January, 1, 0, 0, 0, 0, time.UTC)
	}
	y, m, d := start.Date()
	h, mi := start.Hour(), start.Minute()
	for ; y <= lastYear; d, h, mi = 1, 0, 0 {
		if s.spec.month&(1<<m) != 0 {
			n := daysIn(y, m)
			first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Weekday()
			days := s.spec.days[n-28][first] &^ (uint32(1)<<d - 1)
			for ; days != 0; days &= days - 1 {
				day := bits.TrailingZeros32(days)
				if day != d {
					h, mi = 0, 0
				}
				if hh, mm, ok := s.spec.timeFrom(h, mi); ok {
					return time.Date(y, m, day, hh, mm, 0, 0, time.UTC)
				}
			}
		}
		if m++; m > time.December {
			m, y = time.January, y+1
		}
	}
	return time.Time{}
}

// daysIn returns the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	if m == time.February && (y%4 != 0 || y%100 == 0 && y%400 != 0) {
		return 28
	}
	return daysInMonth[m]
}

// timeFrom returns the first time of day at or after h:m that the minute and
// hour fields match, or false when there is none that day.
func (s *cronSpec) timeFrom(h, m int) (hour, minute int, ok bool) {
	for hours := s.hour >> h << h; hours != 0; hours &= hours - 1 {
		hour = bits.TrailingZeros64(hours)
		minutes := s.minute
		if hour == h {
			minutes = minutes >> m << m
		}
		if minutes != 0 {
			return hour, bits.TrailingZeros64(minutes), true
		}
	}
	return 0, 0, false
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

// String describes the schedule in words (see Describe).
func (s *cronSchedule) String() string { return s.describe() }
