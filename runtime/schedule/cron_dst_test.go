package schedule

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func loadLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone database: %v", err)
	}
	return loc
}

// referenceMatches is cronie's find_jobs test for one wall-clock minute
// (minutes since 1970-01-01 00:00 of the fake UTC wall clock).
func referenceMatches(spec *cronSpec, wallMinute int64) bool {
	w := time.Unix(wallMinute*60, 0).UTC()
	if spec.minute&(1<<w.Minute()) == 0 || spec.hour&(1<<w.Hour()) == 0 || spec.month&(1<<int(w.Month())) == 0 {
		return false
	}
	dom := spec.dom&(1<<w.Day()) != 0 || referenceDomCalendar(&spec.cal, w)
	dow := spec.dow&(1<<int(w.Weekday())) != 0 || referenceDowCalendar(&spec.cal, w)
	if spec.flags&(flagDomStar|flagDowStar) != 0 {
		return dom && dow
	}
	return dom || dow
}

// referenceDomCalendar reports whether the day of w is picked by L, LW or
// NW, from the definitions: the last day is the one whose next day is a 1st;
// the weekday nearest day N is the Monday-Friday of N's month at the
// smallest distance from N.
func referenceDomCalendar(cal *calendarRules, w time.Time) bool {
	y, m, d := w.Date()
	if cal.last && w.AddDate(0, 0, 1).Day() == 1 {
		return true
	}
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if cal.lastWeekday && referenceNearestWeekday(y, m, last) == d {
		return true
	}
	for n := 1; n <= 31; n++ {
		if cal.nearest&(1<<n) != 0 && referenceNearestWeekday(y, m, n) == d {
			return true
		}
	}
	return false
}

// referenceNearestWeekday returns the Monday-Friday of month m nearest day
// n, or 0 when the month has no day n.
func referenceNearestWeekday(y int, m time.Month, n int) int {
	if time.Date(y, m, n, 0, 0, 0, 0, time.UTC).Month() != m {
		return 0
	}
	for dist := 0; dist <= 3; dist++ {
		for _, c := range []int{n - dist, n + dist} {
			day := time.Date(y, m, c, 0, 0, 0, 0, time.UTC)
			if day.Month() == m && day.Weekday() != time.Saturday && day.Weekday() != time.Sunday {
				return c
			}
		}
	}
	panic("no weekday within three days")
}

// referenceDowCalendar reports whether the day of w is picked by DL or D#K:
// the last weekday D is the one a week before another month; the Kth is the
// one with K-1 of its weekday before it in its month.
func referenceDowCalendar(cal *calendarRules, w time.Time) bool {
	wd := int(w.Weekday())
	if cal.lastDow&(1<<wd) != 0 && w.AddDate(0, 0, 7).Month() != w.Month() {
		return true
	}
	k := 1
	for x := w.AddDate(0, 0, -7); x.Month() == w.Month(); x = x.AddDate(0, 0, -7) {
		k++
	}
	return cal.nthDow&(1<<((k-1)*7+wd)) != 0
}

// referenceFires walks real time minute by minute from from to to, the way
// cronie's main loop does, and returns every fire. It knows nothing of zone
// periods: it only reads each minute's wall clock. Virtual time is the wall
// minute cron has dealt with. When the wall clock moves one minute, jobs
// matching it fire. When it jumps forward (spring forward), wildcard jobs
// matching the new minute fire, and fixed-time jobs fire if they match any
// minute jumped over or the new one. When it goes back (fall back), only
// wildcard jobs fire, and virtual time waits until the wall clock passes it.
func referenceFires(spec *cronSpec, loc *time.Location, from, to time.Time) []time.Time {
	wildcard := spec.flags&(flagMinStar|flagHourStar) != 0
	wall := func(r time.Time) int64 {
		_, off := r.In(loc).Zone()
		return (r.Unix() + int64(off)) / 60
	}
	var fires []time.Time
	r := from.Truncate(time.Minute)
	virtual := wall(r.Add(-time.Minute))
	for ; r.Before(to); r = r.Add(time.Minute) {
		now := wall(r)
		fire := false
		switch d := now - virtual; {
		case d == 1:
			fire = referenceMatches(spec, now)
			virtual = now
		case d > 1:
			if wildcard {
				fire = referenceMatches(spec, now)
			} else {
				for m := virtual + 1; m <= now; m++ {
					fire = fire || referenceMatches(spec, m)
				}
			}
			virtual = now
		default:
			fire = wildcard && referenceMatches(spec, now)
		}
		if fire {
			fires = append(fires, r)
		}
	}
	return fires
}

// checkAgainstReference checks that Next(from) is the first reference fire
// strictly after from, and returns it. fires are the reference fires from
// before from up to horizon; when none is after from, Next must be zero or
// not before horizon.
func checkAgainstReference(t *testing.T, name string, s Schedule, fires []time.Time, horizon, from time.Time) time.Time {
	t.Helper()
	got := s.Next(from)
	i := sort.Search(len(fires), func(i int) bool { return fires[i].After(from) })
	if i == len(fires) {
		if !got.IsZero() && got.Before(horizon) {
			t.Fatalf("%s: Next(%s) = %s, reference has no fire after it before %s", name, from.UTC(), got.UTC(), horizon.UTC())
		}
		return got
	}
	if !got.Equal(fires[i]) {
		loc := fires[i].Location()
		if !got.IsZero() {
			loc = got.Location()
		}
		t.Fatalf("%s: Next(%s = %s) = %s, reference says %s", name,
			from.UTC().Format(time.RFC3339), from.In(loc).Format(time.RFC3339),
			got.Format(time.RFC3339), fires[i].In(loc).Format(time.RFC3339))
	}
	return got
}

// transition is one daylight-saving change; at is its instant.
type transition struct {
	zone string
	at   time.Time
	name string
}

var transitions = []transition{
	{"America/New_York", time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC), "spring forward 02:00 EST -> 03:00 EDT"},
	{"America/New_York", time.Date(2024, 11, 3, 6, 0, 0, 0, time.UTC), "fall back 02:00 EDT -> 01:00 EST"},
	{"Europe/London", time.Date(2024, 3, 31, 1, 0, 0, 0, time.UTC), "spring forward 01:00 GMT -> 02:00 BST"},
	{"Europe/London", time.Date(2024, 10, 27, 1, 0, 0, 0, time.UTC), "fall back 02:00 BST -> 01:00 GMT"},
	{"Australia/Lord_Howe", time.Date(2024, 10, 5, 15, 30, 0, 0, time.UTC), "spring forward 02:00 -> 02:30"},
	{"Australia/Lord_Howe", time.Date(2024, 4, 6, 15, 0, 0, 0, time.UTC), "fall back 02:00 -> 01:30"},
	{"America/Sao_Paulo", time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC), "spring forward 2018-11-04 00:00 -> 01:00"},
	{"America/Sao_Paulo", time.Date(2019, 2, 17, 2, 0, 0, 0, time.UTC), "fall back 2019-02-17 00:00 -> 2019-02-16 23:00"},
	// Transitions on days the calendar rules pick: the last day of October
	// 2021 in London (a Sunday), and weekdays in Cairo.
	{"Europe/London", time.Date(2021, 10, 31, 1, 0, 0, 0, time.UTC), "fall back 2021-10-31 (last day of the month) 02:00 BST -> 01:00 GMT"},
	{"Africa/Cairo", time.Date(2023, 4, 27, 22, 0, 0, 0, time.UTC), "spring forward Friday 2023-04-28 00:00 EET -> 01:00 EEST"},
	{"Africa/Cairo", time.Date(2023, 10, 26, 21, 0, 0, 0, time.UTC), "fall back Thursday 2023-10-26 24:00 EEST -> 23:00 EET"},
}

// TestTransitionsAreReal makes sure the instants above are transitions in
// the installed zone database, so the other tests test what they claim.
func TestTransitionsAreReal(t *testing.T) {
	for _, tr := range transitions {
		loc := loadLocation(t, tr.zone)
		start, _ := tr.at.In(loc).ZoneBounds()
		_, before := tr.at.Add(-time.Second).In(loc).Zone()
		_, after := tr.at.In(loc).Zone()
		if !start.Equal(tr.at) || before == after {
			t.Errorf("%s %s: no transition at %s (period starts %s)", tr.zone, tr.name, tr.at, start)
		}
	}
}

// TestDST checks cronie's daylight-saving policy case by case: fixed-time
// jobs fire at the jump for a wall time in a spring-forward gap, and once
// for a wall time in a repeated fall-back range; wildcard jobs skip the gap
// and fire twice in the repeated range. daily: and hourly: go through the
// same engine.
func TestDST(t *testing.T) {
	tests := []struct {
		zone, expr, from string   // from: RFC 3339 with offset
		want             []string // successive fires, RFC 3339 with offset
	}{
		// New York, spring forward 2024-03-10: 02:00 EST becomes 03:00 EDT.
		{"America/New_York", "cron:30 2 * * *", "2024-03-10T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"}},
		{"America/New_York", "daily:02:30", "2024-03-10T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"}},
		{"America/New_York", "cron:0,30 2 * * *", "2024-03-10T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-03-11T02:00:00-04:00"}},
		{"America/New_York", "cron:0 2,3 * * *", "2024-03-10T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-03-11T02:00:00-04:00"}},
		{"America/New_York", "cron:59 1 * * *", "2024-03-10T00:00:00-05:00", []string{"2024-03-10T01:59:00-05:00", "2024-03-11T01:59:00-04:00"}},
		{"America/New_York", "cron:30 * * * *", "2024-03-10T01:00:00-05:00", []string{"2024-03-10T01:30:00-05:00", "2024-03-10T03:30:00-04:00"}},
		{"America/New_York", "hourly:30", "2024-03-10T01:00:00-05:00", []string{"2024-03-10T01:30:00-05:00", "2024-03-10T03:30:00-04:00"}},
		{"America/New_York", "cron:*/30 2 * * *", "2024-03-10T00:00:00-05:00", []string{"2024-03-11T02:00:00-04:00"}},
		{"America/New_York", "cron:0 2 * * 0", "2024-03-09T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-03-17T02:00:00-04:00"}},
		// New York, fall back 2024-11-03: 02:00 EDT becomes 01:00 EST.
		{"America/New_York", "cron:30 1 * * *", "2024-11-03T00:00:00-04:00", []string{"2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"}},
		{"America/New_York", "daily:1:30", "2024-11-03T00:00:00-04:00", []string{"2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"}},
		{"America/New_York", "cron:30 1 * * *", "2024-11-03T01:10:00-05:00", []string{"2024-11-04T01:30:00-05:00"}},
		{"America/New_York", "cron:0 2 * * *", "2024-11-03T01:30:00-05:00", []string{"2024-11-03T02:00:00-05:00"}},
		{"America/New_York", "cron:0 1,2 * * *", "2024-11-03T00:00:00-04:00", []string{"2024-11-03T01:00:00-04:00", "2024-11-03T02:00:00-05:00"}},
		{"America/New_York", "cron:*/30 * * * *", "2024-11-03T01:40:00-04:00", []string{"2024-11-03T01:00:00-05:00", "2024-11-03T01:30:00-05:00", "2024-11-03T02:00:00-05:00"}},
		{"America/New_York", "cron:30 * * * *", "2024-11-03T00:00:00-04:00", []string{"2024-11-03T00:30:00-04:00", "2024-11-03T01:30:00-04:00", "2024-11-03T01:30:00-05:00", "2024-11-03T02:30:00-05:00"}},
		{"America/New_York", "hourly:30", "2024-11-03T00:00:00-04:00", []string{"2024-11-03T00:30:00-04:00", "2024-11-03T01:30:00-04:00", "2024-11-03T01:30:00-05:00", "2024-11-03T02:30:00-05:00"}},
		{"America/New_York", "cron:*/20 1 * * *", "2024-11-03T00:50:00-04:00", []string{"2024-11-03T01:00:00-04:00", "2024-11-03T01:20:00-04:00", "2024-11-03T01:40:00-04:00", "2024-11-03T01:00:00-05:00", "2024-11-03T01:20:00-05:00", "2024-11-03T01:40:00-05:00", "2024-11-04T01:00:00-05:00"}},
		// London, spring forward 2024-03-31: 01:00 GMT becomes 02:00 BST.
		{"Europe/London", "cron:30 1 * * *", "2024-03-31T00:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-04-01T01:30:00+01:00"}},
		{"Europe/London", "daily:01:00", "2024-03-30T12:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-04-01T01:00:00+01:00"}},
		{"Europe/London", "cron:0 * * * *", "2024-03-31T00:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-03-31T03:00:00+01:00"}},
		// London, fall back 2024-10-27: 02:00 BST becomes 01:00 GMT.
		{"Europe/London", "cron:30 1 * * *", "2024-10-27T00:00:00+01:00", []string{"2024-10-27T01:30:00+01:00", "2024-10-28T01:30:00Z"}},
		{"Europe/London", "daily:01:30", "2024-10-27T00:00:00+01:00", []string{"2024-10-27T01:30:00+01:00", "2024-10-28T01:30:00Z"}},
		{"Europe/London", "cron:30 * * * *", "2024-10-27T00:45:00+01:00", []string{"2024-10-27T01:30:00+01:00", "2024-10-27T01:30:00Z", "2024-10-27T02:30:00Z"}},
		{"Europe/London", "hourly:30", "2024-10-27T00:45:00+01:00", []string{"2024-10-27T01:30:00+01:00", "2024-10-27T01:30:00Z", "2024-10-27T02:30:00Z"}},
		// Lord Howe, spring forward 2024-10-06: 02:00 +10:30 becomes 02:30 +11.
		{"Australia/Lord_Howe", "cron:15 2 * * *", "2024-10-06T00:00:00+10:30", []string{"2024-10-06T02:30:00+11:00", "2024-10-07T02:15:00+11:00"}},
		{"Australia/Lord_Howe", "cron:0,15 2 * * *", "2024-10-06T00:00:00+10:30", []string{"2024-10-06T02:30:00+11:00", "2024-10-07T02:00:00+11:00"}},
		{"Australia/Lord_Howe", "cron:30 2 * * *", "2024-10-06T00:00:00+10:30", []string{"2024-10-06T02:30:00+11:00", "2024-10-07T02:30:00+11:00"}},
		{"Australia/Lord_Howe", "cron:15 * * * *", "2024-10-06T01:00:00+10:30", []string{"2024-10-06T01:15:00+10:30", "2024-10-06T03:15:00+11:00"}},
		{"Australia/Lord_Howe", "cron:*/15 * * * *", "2024-10-06T01:50:00+10:30", []string{"2024-10-06T02:30:00+11:00", "2024-10-06T02:45:00+11:00"}},
		// Lord Howe, fall back 2024-04-07: 02:00 +11 becomes 01:30 +10:30.
		{"Australia/Lord_Howe", "cron:45 1 * * *", "2024-04-07T00:00:00+11:00", []string{"2024-04-07T01:45:00+11:00", "2024-04-08T01:45:00+10:30"}},
		{"Australia/Lord_Howe", "cron:15 1 * * *", "2024-04-07T00:00:00+11:00", []string{"2024-04-07T01:15:00+11:00", "2024-04-08T01:15:00+10:30"}},
		{"Australia/Lord_Howe", "cron:45 * * * *", "2024-04-07T01:00:00+11:00", []string{"2024-04-07T01:45:00+11:00", "2024-04-07T01:45:00+10:30", "2024-04-07T02:45:00+10:30"}},
		{"Australia/Lord_Howe", "cron:*/15 * * * *", "2024-04-07T01:50:00+11:00", []string{"2024-04-07T01:30:00+10:30", "2024-04-07T01:45:00+10:30", "2024-04-07T02:00:00+10:30"}},
		{"Australia/Lord_Howe", "cron:0 2 * * *", "2024-04-07T01:50:00+11:00", []string{"2024-04-07T02:00:00+10:30"}},
		// Sao Paulo, spring forward at midnight 2018-11-04: 00:00 -03 becomes 01:00 -02.
		{"America/Sao_Paulo", "cron:0 0 * * *", "2018-11-03T12:00:00-03:00", []string{"2018-11-04T01:00:00-02:00", "2018-11-05T00:00:00-02:00"}},
		{"America/Sao_Paulo", "daily:00:30", "2018-11-03T12:00:00-03:00", []string{"2018-11-04T01:00:00-02:00", "2018-11-05T00:30:00-02:00"}},
		{"America/Sao_Paulo", "cron:30 0 4 11 *", "2018-11-03T12:00:00-03:00", []string{"2018-11-04T01:00:00-02:00", "2019-11-04T00:30:00-03:00"}},
		{"America/Sao_Paulo", "cron:0 0 * * 0", "2018-11-03T12:00:00-03:00", []string{"2018-11-04T01:00:00-02:00", "2018-11-11T00:00:00-02:00"}},
		{"America/Sao_Paulo", "cron:30 * * * *", "2018-11-03T23:00:00-03:00", []string{"2018-11-03T23:30:00-03:00", "2018-11-04T01:30:00-02:00"}},
		{"America/Sao_Paulo", "hourly:30", "2018-11-03T23:00:00-03:00", []string{"2018-11-03T23:30:00-03:00", "2018-11-04T01:30:00-02:00"}},
		// Sao Paulo, fall back 2019-02-17 00:00 -02 to 2019-02-16 23:00 -03.
		{"America/Sao_Paulo", "cron:30 23 * * *", "2019-02-16T12:00:00-02:00", []string{"2019-02-16T23:30:00-02:00", "2019-02-17T23:30:00-03:00"}},
		{"America/Sao_Paulo", "cron:0 23 16 2 *", "2019-02-16T12:00:00-02:00", []string{"2019-02-16T23:00:00-02:00", "2020-02-16T23:00:00-03:00"}},
		{"America/Sao_Paulo", "cron:0 0 * * *", "2019-02-16T23:30:00-02:00", []string{"2019-02-17T00:00:00-03:00", "2019-02-18T00:00:00-03:00"}},
		{"America/Sao_Paulo", "cron:30 * * * *", "2019-02-16T23:00:00-02:00", []string{"2019-02-16T23:30:00-02:00", "2019-02-16T23:30:00-03:00", "2019-02-17T00:30:00-03:00"}},
		{"America/Sao_Paulo", "cron:*/30 23 * * *", "2019-02-16T22:00:00-02:00", []string{"2019-02-16T23:00:00-02:00", "2019-02-16T23:30:00-02:00", "2019-02-16T23:00:00-03:00", "2019-02-16T23:30:00-03:00", "2019-02-17T23:00:00-03:00"}},
	}
	for _, tt := range tests {
		loc := loadLocation(t, tt.zone)
		s, err := Parse(tt.expr, loc)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		at, err := time.Parse(time.RFC3339, tt.from)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tt.want {
			want, err := time.Parse(time.RFC3339, w)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Next(at)
			if !got.Equal(want) {
				t.Errorf("%s %q: fire %d after %s = %s, want %s", tt.zone, tt.expr, i+1,
					at.In(loc).Format(time.RFC3339), got.Format(time.RFC3339), want.In(loc).Format(time.RFC3339))
				break
			}
			at = got
		}
	}
}

// dstExpressions are the schedules of the property test: wildcard and
// fixed-time jobs at and around the transitions of the zones above, and the
// day rules. ref is the cron text the reference uses.
var dstExpressions = []struct{ expr, ref string }{
	{"cron:* * * * *", "* * * * *"},
	{"cron:*/30 * * * *", "*/30 * * * *"},
	{"cron:0 * * * *", "0 * * * *"},
	{"cron:15,45 * * * *", "15,45 * * * *"},
	{"cron:*/7 * * * *", "*/7 * * * *"},
	{"cron:* 2 * * *", "* 2 * * *"},
	{"cron:*/10 1-2 * * *", "*/10 1-2 * * *"},
	{"cron:0 */2 * * *", "0 */2 * * *"},
	{"cron:*/20 23,0 * * *", "*/20 23,0 * * *"},
	{"hourly:30", "30 * * * *"},
	{"cron:30 2 * * *", "30 2 * * *"},
	{"cron:0,30 2 * * *", "0,30 2 * * *"},
	{"cron:15 2 * * *", "15 2 * * *"},
	{"cron:0 3 * * *", "0 3 * * *"},
	{"cron:30 1 * * *", "30 1 * * *"},
	{"cron:45 1 * * *", "45 1 * * *"},
	{"cron:0 2 * * *", "0 2 * * *"},
	{"cron:0 1 * * *", "0 1 * * *"},
	{"cron:59 1 * * *", "59 1 * * *"},
	{"cron:20 0-3 * * *", "20 0-3 * * *"},
	{"cron:0 0 * * *", "0 0 * * *"},
	{"cron:30 0 * * *", "30 0 * * *"},
	{"cron:30 23 * * *", "30 23 * * *"},
	{"cron:0 23 * * *", "0 23 * * *"},
	{"cron:0 0,12 * * *", "0 0,12 * * *"},
	{"cron:0 2 * * 0", "0 2 * * 0"},
	{"cron:0 0 */2 * 1", "0 0 */2 * 1"},
	{"cron:30 1 1-7 * 0", "30 1 1-7 * 0"},
	{"daily:02:30", "30 2 * * *"},
	{"daily:1:45", "45 1 * * *"},
	{"daily:00:00", "0 0 * * *"},
	// Calendar rules, on the transition days above: London's 2024-03-31 and
	// 2021-10-31 are last days and last (and fifth) Sundays, Cairo's
	// 2023-04-28 is the fourth and last Friday and the weekday nearest the
	// 28th, 2023-10-26 the last Thursday; New York's transitions are the
	// second Sunday of March and the first of November.
	{"cron:30 1 L * *", "30 1 L * *"},
	{"cron:*/30 1 L * *", "*/30 1 L * *"},
	{"cron:30 1 * * 0L", "30 1 * * 0L"},
	{"cron:30 1 * * 7#5", "30 1 * * 7#5"},
	{"cron:0 2 * * 0#2", "0 2 * * 0#2"},
	{"cron:*/20 1 * * 0#1", "*/20 1 * * 0#1"},
	{"cron:30 0 28W * *", "30 0 28W * *"},
	{"cron:30 0 * * 5#4", "30 0 * * 5#4"},
	{"cron:*/15 0 * * 5L", "*/15 0 * * 5L"},
	{"cron:30 23 * * 4L", "30 23 * * 4L"},
	{"cron:*/20 23 26W * *", "*/20 23 26W * *"},
	{"cron:30 1 LW * 0L", "30 1 LW * 0L"},
	{"cron:30 0 */2 * 5L", "30 0 */2 * 5L"},
}

// TestDSTMatchesReference is the property test: around every transition
// above, for every start minute (and some half minutes) of the 48 hours around it
// and every expression, Next is strictly after the start, monotonic, and
// equal to the first fire of the minute-by-minute reference. (-short checks
// every seventh minute.)
func TestDSTMatchesReference(t *testing.T) {
	step := time.Minute
	if testing.Short() {
		step = 7 * time.Minute
	}
	for _, tr := range transitions {
		loc := loadLocation(t, tr.zone)
		for _, e := range dstExpressions {
			s, err := Parse(e.expr, loc)
			if err != nil {
				t.Fatalf("Parse(%q): %v", e.expr, err)
			}
			spec, err := parseCronSpec(e.ref)
			if err != nil {
				t.Fatal(err)
			}
			from, to := tr.at.Add(-24*time.Hour), tr.at.Add(24*time.Hour)
			horizon := to.Add(25 * 24 * time.Hour)
			fires := referenceFires(&spec, loc, from.Add(-24*time.Hour), horizon)
			name := tr.zone + " " + tr.name + " " + e.expr
			var last time.Time
			for at := from; at.Before(to); at = at.Add(step) {
				got := checkAgainstReference(t, name, s, fires, horizon, at)
				if !got.After(at) {
					t.Fatalf("%s: Next(%s) = %s, not after it", name, at, got)
				}
				if got.Before(last) {
					t.Fatalf("%s: Next(%s) = %s, before Next of an earlier time (%s)", name, at, got, last)
				}
				last = got
				// Starts between whole minutes, less often.
				if at.Minute()%7 == 0 {
					checkAgainstReference(t, name, s, fires, horizon, at.Add(30*time.Second+time.Nanosecond))
				}
			}
		}
	}
}

// randomCronExpression returns a random crontab(5) expression whose values
// lean towards the hours and minutes daylight-saving transitions touch,
// with calendar rules in the day fields when calendar is set.
func randomCronExpression(r *rand.Rand, calendar bool) string {
	field := func(f int, likely []int) string {
		info := cronFields[f]
		value := func() int {
			if r.IntN(3) > 0 {
				return likely[r.IntN(len(likely))]
			}
			return info.low + r.IntN(info.high-info.low+1)
		}
		var elems []string
		for range 1 + r.IntN(2) {
			if calendar && (f == fieldDom || f == fieldDow) && r.IntN(3) == 0 {
				elems = append(elems, randomCalendarElement(r, f))
				continue
			}
			switch r.IntN(6) {
			case 0:
				elems = append(elems, "*")
			case 1:
				elems = append(elems, fmt.Sprintf("*/%d", 1+r.IntN(min(info.high-info.low, 12))))
			case 2, 3:
				elems = append(elems, fmt.Sprint(value()))
			case 4:
				a, b := value(), value()
				elems = append(elems, fmt.Sprintf("%d-%d", min(a, b), max(a, b)))
			case 5:
				a, b := value(), value()
				elems = append(elems, fmt.Sprintf("%d-%d/%d", min(a, b), max(a, b), 1+r.IntN(4)))
			}
		}
		return strings.Join(elems, ",")
	}
	return strings.Join([]string{
		field(fieldMinute, []int{0, 15, 30, 45, 59}),
		field(fieldHour, []int{0, 1, 2, 3, 23}),
		field(fieldDom, []int{1, 4, 10, 16, 17, 31}),
		field(fieldMonth, []int{2, 3, 4, 10, 11}),
		field(fieldDow, []int{0, 6, 7}),
	}, " ")
}

// randomCalendarElement returns a random L, LW or NW element for the
// day-of-month field (f is fieldDom), or DL or D#K for the day-of-week field.
func randomCalendarElement(r *rand.Rand, f int) string {
	if f == fieldDom {
		switch r.IntN(4) {
		case 0:
			return "L"
		case 1:
			return "LW"
		}
		return fmt.Sprintf("%dW", []int{1, 2, 3, 15, 16, 26, 28, 29, 30, 31}[r.IntN(10)])
	}
	if r.IntN(2) == 0 {
		return fmt.Sprintf("%dL", r.IntN(8))
	}
	return fmt.Sprintf("%d#%d", r.IntN(8), 1+r.IntN(5))
}

// TestRandomCronMatchesReference compares random expressions, half of them
// with calendar rules, with the minute-by-minute reference around every
// transition above.
func TestRandomCronMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 200
	if testing.Short() {
		n = 20
	}
	for i := range n {
		expr := randomCronExpression(r, i%2 == 1)
		spec, err := parseCronSpec(expr)
		if err != nil {
			continue // never fires
		}
		for _, tr := range transitions {
			loc := loadLocation(t, tr.zone)
			s, err := Parse("cron:"+expr, loc)
			if err != nil {
				t.Fatalf("Parse(%q): %v", expr, err)
			}
			from, to := tr.at.Add(-6*time.Hour), tr.at.Add(6*time.Hour)
			horizon := to.Add(3 * 24 * time.Hour)
			fires := referenceFires(&spec, loc, from.Add(-24*time.Hour), horizon)
			for at := from; at.Before(to); at = at.Add(11 * time.Minute) {
				checkAgainstReference(t, tr.zone+" "+tr.name+" cron:"+expr, s, fires, horizon, at)
			}
		}
	}
}
