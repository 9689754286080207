package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// This file explains schedules in English words (Describe). A description
// must never paraphrase a schedule wrongly: each phrase is chosen only when
// it says exactly what the fields match, and irregular fields are listed as
// numbers.

const (
	allHours  = uint64(1)<<24 - 1
	allDom    = uint64(1)<<32 - 2
	allMonths = uint64(1)<<13 - 2
	allDow    = uint64(1)<<7 - 1
)

// maxListedTimes is how many times of day a description lists as HH:MM
// ("at 08:00, 12:00 and 17:00") before it describes the fields instead.
const maxListedTimes = 4

var (
	monthNames   = [13]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	weekdayNames = [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	weekOrdinals = [5]string{"first", "second", "third", "fourth", "fifth"}
	// isoWeek is the order weekdays are listed in: Monday first.
	isoWeek = [7]int{1, 2, 3, 4, 5, 6, 0}
)

// describe is the description of a cron:, daily: or hourly: schedule: its
// fields in words, and its zone in parentheses unless it is UTC.
func (s *cronSchedule) describe() string {
	text := s.spec.describe()
	if zone := s.loc.String(); zone != "UTC" {
		text += " (" + zone + ")"
	}
	return text
}

// describe explains the five fields: the times of day, then the days, then
// the months.
func (s *cronSpec) describe() string {
	text, explicit := s.describeTimes()
	days, scope := s.describeDays()
	switch {
	case days != "":
		text += days
	case explicit:
		text += " every day"
	}
	if s.month != allMonths {
		months := joinWords(runPhrases(s.month, 1, 12, func(v int) string { return monthNames[v] }, " through ", nil))
		switch {
		case scope == daysOfTheMonth:
			text = strings.TrimSuffix(text, " the month") + " " + months
		case strings.Contains(text, ","):
			text += ", only in " + months
		default:
			text += " in " + months
		}
	}
	return text
}

// dayScope tells how the months may join a day phrase.
type dayScope int

const (
	// daysAny: the months follow the phrase ("on Mondays in March").
	daysAny dayScope = iota
	// daysOfTheMonth: the phrase names only days of a month and ends in
	// " of the month", which the months replace ("on the last day of
	// February").
	daysOfTheMonth
)

// describeTimes explains the minute and hour fields. explicit reports that
// the phrase lists times of day ("at 08:00"), so that a schedule firing
// every day says so.
func (s *cronSpec) describeTimes() (text string, explicit bool) {
	nm, nh := bits.OnesCount64(s.minute), bits.OnesCount64(s.hour)
	if nm*nh <= maxListedTimes {
		var times []string
		for hours := s.hour; hours != 0; hours &= hours - 1 {
			h := bits.TrailingZeros64(hours)
			for minutes := s.minute; minutes != 0; minutes &= minutes - 1 {
				times = append(times, fmt.Sprintf("%02d:%02d", h, bits.TrailingZeros64(minutes)))
			}
		}
		return "at " + joinWords(times), true
	}
	if step := evenStep(s.minute, 60); step > 0 {
		text = "every minute"
		if step > 1 {
			text = fmt.Sprintf("every %d minutes", step)
		}
		if s.hour == allHours {
			return text, false
		}
		if windows := hourWindows(s.hour); len(windows) <= 3 {
			return text + " " + joinWords(windows), false
		}
		return text + " during hours " + numberRuns(s.hour, 0, 23), false
	}
	text = "at minute " + numberRuns(s.minute, 0, 59)
	if nm > 1 {
		text = "at minutes " + numberRuns(s.minute, 0, 59)
	}
	switch {
	case s.hour == allHours:
		return text + " past every hour", false
	case nh == 1:
		return text + " past hour " + numberRuns(s.hour, 0, 23), false
	}
	return text + " past hours " + numberRuns(s.hour, 0, 23), false
}

// evenStep returns k when set is {0, k, 2k, ...} below span and k divides
// span (so the gaps stay k across the wrap), else 0. A full set has step 1.
func evenStep(set uint64, span int) int {
	if set&1 == 0 {
		return 0
	}
	rest := set &^ 1
	if rest == 0 {
		return 0
	}
	k := bits.TrailingZeros64(rest)
	if span%k != 0 {
		return 0
	}
	var want uint64
	for v := 0; v < span; v += k {
		want |= 1 << v
	}
	if set != want {
		return 0
	}
	return k
}

// hourWindows turns an hour set into phrases "from 09:00 through 17:59",
// one per run of consecutive hours.
func hourWindows(hours uint64) []string {
	var out []string
	for h := 0; h < 24; h++ {
		if hours&(1<<h) == 0 {
			continue
		}
		end := h
		for end+1 < 24 && hours&(1<<(end+1)) != 0 {
			end++
		}
		out = append(out, fmt.Sprintf("from %02d:00 through %02d:59", h, end))
		h = end
	}
	return out
}

// describeDays explains the day-of-month and day-of-week fields with
// cronie's rule: "" when every day matches, else a phrase that starts with
// ", " or " on ", and how months join it.
func (s *cronSpec) describeDays() (string, dayScope) {
	// A full plain set matches every day whatever the calendar rules add.
	domAll, dowAll := s.dom == allDom, s.dow == allDow
	if !s.andDays() {
		if domAll || dowAll {
			return "", daysAny // either field matching is enough, and one matches every day
		}
		dow := s.describeDow()
		if strings.HasPrefix(dow, ", ") {
			dow = " on " + dow[2:]
		}
		return s.describeDom() + ", and" + dow, daysAny
	}
	switch {
	case domAll && dowAll:
		return "", daysAny
	case domAll:
		if s.dow == 0 {
			return s.describeDow(), daysOfTheMonth // only "the third Friday of the month" and the like
		}
		return s.describeDow(), daysAny
	case dowAll:
		return s.describeDom(), daysOfTheMonth
	}
	return s.describeDom() + ", if that day is " + s.describeDowAlternatives(), daysAny
}

// describeDom explains the day-of-month field: " on the 1st and the 15th of
// the month", " on the last day of the month".
func (s *cronSpec) describeDom() string {
	var items []string
	plain := runPhrases(s.dom, 1, 31, func(v int) string { return "the " + ordinal(v) }, " through ", nil)
	if len(plain) > 4 {
		items = append(items, "days "+numberRuns(s.dom, 1, 31))
	} else {
		items = append(items, plain...)
	}
	for d := 1; d <= 31; d++ {
		if s.cal.nearest&(1<<d) != 0 {
			items = append(items, "the weekday nearest the "+ordinal(d))
		}
	}
	if s.cal.lastWeekday {
		items = append(items, "the last weekday")
	}
	if s.cal.last {
		items = append(items, "the last day")
	}
	return " on " + joinWords(items) + " of the month"
}

// describeDow explains the day-of-week field: ", Monday through Friday",
// " on Mondays and Fridays", " on the third Friday of the month".
func (s *cronSpec) describeDow() string {
	plain := runPhrases(s.dow, 0, 6, func(v int) string { return weekdayNames[v] }, " through ", func(v int) string { return weekdayNames[v] + "s" })
	special := s.specialDow()
	if len(special) == 0 && len(plain) == 1 && strings.Contains(plain[0], " through ") {
		return ", " + plain[0]
	}
	text := " on " + joinWords(append(plain, special...))
	if len(special) > 0 {
		text += " of the month"
	}
	return text
}

// specialDow lists the calendar rules of the day-of-week field: "the third
// Friday", "the last Friday".
func (s *cronSpec) specialDow() []string {
	var items []string
	for _, w := range isoWeek {
		for k := range 5 {
			if s.cal.nthDow&(1<<(k*7+w)) != 0 {
				items = append(items, "the "+weekOrdinals[k]+" "+weekdayNames[w])
			}
		}
		if s.cal.lastDow&(1<<w) != 0 {
			items = append(items, "the last "+weekdayNames[w])
		}
	}
	return items
}

// describeDowAlternatives lists what a day must also be when both day
// fields must match: "a Monday or a Friday", "the third Friday".
func (s *cronSpec) describeDowAlternatives() string {
	var items []string
	for _, w := range isoWeek {
		if s.dow&(1<<w) != 0 {
			items = append(items, "a "+weekdayNames[w])
		}
	}
	items = append(items, s.specialDow()...)
	return joinAlternatives(items)
}

// runPhrases lists the values of set in low..high, runs of three or more
// as "first<through>last", other values alone; isoWeek order for the
// day-of-week field. single, when not nil, names a value standing alone.
func runPhrases(set uint64, low, high int, name func(int) string, through string, single func(int) string) []string {
	order := make([]int, 0, high-low+1)
	if low == 0 && high == 6 {
		order = append(order, isoWeek[:]...)
	} else {
		for v := low; v <= high; v++ {
			order = append(order, v)
		}
	}
	if single == nil {
		single = name
	}
	var out []string
	for i := 0; i < len(order); i++ {
		if set&(1<<order[i]) == 0 {
			continue
		}
		j := i
		for j+1 < len(order) && set&(1<<order[j+1]) != 0 {
			j++
		}
		switch {
		case j-i >= 2:
			out = append(out, name(order[i])+through+name(order[j]))
		default:
			for k := i; k <= j; k++ {
				out = append(out, single(order[k]))
			}
		}
		i = j
	}
	return out
}

// numberRuns formats a set as a comma list, runs of three or more as
// "a-b": "0,7,13", "9-17", "1,3,5".
func numberRuns(set uint64, low, high int) string {
	return strings.Join(runPhrases(set, low, high, strconv.Itoa, "-", nil), ",")
}

// joinWords joins phrases as English does: "a", "a and b", "a, b and c".
func joinWords(items []string) string {
	return joinWith(items, " and ")
}

// joinAlternatives joins phrases with "or": "a, b or c".
func joinAlternatives(items []string) string {
	return joinWith(items, " or ")
}

func joinWith(items []string, last string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// ordinal returns 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st, ...
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100/10 == 1 {
		suffix = "th"
	}
	return strconv.Itoa(n) + suffix
}

// durationWords formats a whole number of seconds as hours, minutes and
// seconds, leaving out zero parts: "30s", "1m30s", "2h", "1h0m5s".
func durationWords(seconds int64) string {
	h, m, sec := seconds/3600, seconds/60%60, seconds%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 || h > 0 && sec > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}
