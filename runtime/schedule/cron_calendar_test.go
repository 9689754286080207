package schedule

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
)

// TestCalendarNextUTC checks successive fires of the calendar rules (L, LW,
// NW, DL, D#K) in UTC, strictly after from. The dates are from the
// calendar: 2024 is a leap year, 2024-06-01 and 2025-02-01 are Saturdays,
// 2024-09-01 and 2024-03-31 Sundays, 2024-08-31 a Saturday.
func TestCalendarNextUTC(t *testing.T) {
	tests := []struct {
		expr, from string
		want       []string // UTC, "2006-01-02 15:04"
	}{
		// L: month ends, February in leap and common years.
		{"0 0 L * *", "2024-01-01 00:00", []string{"2024-01-31 00:00", "2024-02-29 00:00", "2024-03-31 00:00", "2024-04-30 00:00", "2024-05-31 00:00"}},
		{"30 23 L 2 *", "2023-01-01 00:00", []string{"2023-02-28 23:30", "2024-02-29 23:30", "2025-02-28 23:30", "2026-02-28 23:30", "2027-02-28 23:30", "2028-02-29 23:30"}},
		{"0 0 L 2 *", "2099-03-01 00:00", []string{""}}, // after 2099: none
		{"0 12 1,L * *", "2024-04-01 12:00", []string{"2024-04-30 12:00", "2024-05-01 12:00", "2024-05-31 12:00"}},
		{"0 0 l * *", "2024-11-15 00:00", []string{"2024-11-30 00:00"}}, // case-insensitive
		// LW: the last Monday-Friday (2024-03-31 is a Sunday, 2024-08-31 a Saturday).
		{"0 0 LW * *", "2024-01-01 00:00", []string{"2024-01-31 00:00", "2024-02-29 00:00", "2024-03-29 00:00", "2024-04-30 00:00"}},
		{"0 0 LW 8 *", "2024-01-01 00:00", []string{"2024-08-30 00:00", "2025-08-29 00:00"}},
		// NW: the nearest weekday, never in another month.
		{"0 0 1W * *", "2024-05-15 00:00", []string{"2024-06-03 00:00", "2024-07-01 00:00", "2024-08-01 00:00", "2024-09-02 00:00"}},
		{"0 0 15W * *", "2024-06-01 00:00", []string{"2024-06-14 00:00", "2024-07-15 00:00", "2024-08-15 00:00", "2024-09-16 00:00"}},
		// 31W only in 31-day months: 2024-03-31 is a Sunday and the last day
		// (so the Friday before), 2024-08-31 a Saturday; April, June and
		// February are skipped.
		{"0 0 31W * *", "2024-01-01 00:00", []string{"2024-01-31 00:00", "2024-03-29 00:00", "2024-05-31 00:00", "2024-07-31 00:00", "2024-08-30 00:00", "2024-10-31 00:00"}},
		{"0 0 30W * *", "2024-01-01 00:00", []string{"2024-01-30 00:00", "2024-03-29 00:00", "2024-04-30 00:00"}},
		{"0 0 29W 2 *", "2023-01-01 00:00", []string{"2024-02-29 00:00", "2028-02-29 00:00"}},
		{"0 0 1W,15W * *", "2025-01-20 00:00", []string{"2025-02-03 00:00", "2025-02-14 00:00", "2025-03-03 00:00", "2025-03-14 00:00"}},
		// DL: the last Friday; 0L and 7L are the last Sunday.
		{"0 0 * * 5L", "2024-01-01 00:00", []string{"2024-01-26 00:00", "2024-02-23 00:00", "2024-03-29 00:00", "2024-04-26 00:00"}},
		{"0 0 * * friL", "2024-01-01 00:00", []string{"2024-01-26 00:00"}},
		{"0 0 * * 0L", "2024-03-01 00:00", []string{"2024-03-31 00:00", "2024-04-28 00:00"}},
		{"0 0 * * 7L", "2024-03-01 00:00", []string{"2024-03-31 00:00", "2024-04-28 00:00"}},
		// D#K: the third Friday; fifth Fridays only in months that have one.
		{"0 9 * * 5#3", "2024-01-01 00:00", []string{"2024-01-19 09:00", "2024-02-16 09:00", "2024-03-15 09:00"}},
		{"0 9 * * FRI#3", "2024-01-01 00:00", []string{"2024-01-19 09:00"}},
		{"0 0 * * 5#5", "2024-01-01 00:00", []string{"2024-03-29 00:00", "2024-05-31 00:00", "2024-08-30 00:00", "2024-11-29 00:00", "2025-01-31 00:00"}},
		{"0 0 * 2 1#5", "1970-01-01 00:00", []string{"1988-02-29 00:00", "2016-02-29 00:00", "2044-02-29 00:00", "2072-02-29 00:00", ""}},
		{"0 0 * * 1#1,5L", "2024-01-01 00:00", []string{"2024-01-26 00:00", "2024-02-05 00:00", "2024-02-23 00:00"}},
		// Mixed with plain values in the same field.
		{"0 0 * * 1,5L", "2024-01-20 00:00", []string{"2024-01-22 00:00", "2024-01-26 00:00", "2024-01-29 00:00", "2024-02-05 00:00"}},
		// crontab(5)'s rule: both day fields restricted, either matches (the
		// last day of the month or a Friday).
		{"0 0 L * 5", "2024-01-20 00:00", []string{"2024-01-26 00:00", "2024-01-31 00:00", "2024-02-02 00:00"}},
		{"0 0 15 * 5#1", "2024-01-01 00:00", []string{"2024-01-05 00:00", "2024-01-15 00:00", "2024-02-02 00:00", "2024-02-15 00:00"}},
		// cronie's rule: a field starting with * makes both count (odd days
		// that are the first Friday; the last day when it is a Friday).
		{"0 0 */2 * 5#1", "2024-01-01 00:00", []string{"2024-01-05 00:00", "2024-03-01 00:00", "2024-04-05 00:00", "2024-05-03 00:00"}},
		{"0 0 L * */5", "2024-01-01 00:00", []string{"2024-03-31 00:00", "2024-05-31 00:00", "2024-06-30 00:00"}},
		// Minutes and hours on a calendar day.
		{"*/20 22-23 L * *", "2024-01-31 22:30", []string{"2024-01-31 22:40", "2024-01-31 23:00", "2024-01-31 23:20", "2024-01-31 23:40", "2024-02-29 22:00"}},
	}
	for _, tt := range tests {
		s, err := Parse("cron:"+tt.expr, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		at, err := time.Parse("2006-01-02 15:04", tt.from)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tt.want {
			var want time.Time
			if w != "" {
				if want, err = time.Parse("2006-01-02 15:04", w); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Next(at)
			if !got.Equal(want) {
				t.Errorf("%q: fire %d after %s = %s, want %s", tt.expr, i+1, at.Format(time.RFC3339), got.Format(time.RFC3339), want.Format(time.RFC3339))
				break
			}
			at = got
		}
	}
}

// TestCalendarDST checks that a day chosen by a calendar rule follows
// cronie's daylight-saving policy like any other day: a fixed-time job in a
// spring-forward gap fires at the jump, once in a fall-back overlap; a
// wildcard job skips the gap and fires on both passes of the overlap.
// London's 2024-03-31 (spring forward) and 2021-10-31 (fall back) are the
// last days of their months and last Sundays; Cairo springs forward on
// Friday 2023-04-28 at 00:00 and falls back on Thursday 2023-10-26 at 24:00;
// New York springs forward on the second Sunday of March and falls back on
// the first Sunday of November; Tehran sprang forward on Tuesday 2022-03-22
// at 00:00.
func TestCalendarDST(t *testing.T) {
	tests := []struct {
		zone, expr, from string
		want             []string // RFC 3339 with offset
	}{
		// L.
		{"Europe/London", "cron:30 1 L * *", "2024-03-30T12:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-04-30T01:30:00+01:00"}},
		{"Europe/London", "cron:*/30 1 L * *", "2024-03-30T12:00:00Z", []string{"2024-04-30T01:00:00+01:00"}},
		{"Europe/London", "cron:30 1 L * *", "2021-10-30T12:00:00+01:00", []string{"2021-10-31T01:30:00+01:00", "2021-11-30T01:30:00Z"}},
		{"Europe/London", "cron:*/30 1 L * *", "2021-10-31T00:00:00+01:00", []string{"2021-10-31T01:00:00+01:00", "2021-10-31T01:30:00+01:00", "2021-10-31T01:00:00Z", "2021-10-31T01:30:00Z", "2021-11-30T01:00:00Z"}},
		// DL.
		{"Europe/London", "cron:30 1 * * 0L", "2024-03-30T12:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-04-28T01:30:00+01:00"}},
		{"Europe/London", "cron:30 1 * * 7L", "2021-10-30T12:00:00+01:00", []string{"2021-10-31T01:30:00+01:00", "2021-11-28T01:30:00Z"}},
		{"Africa/Cairo", "cron:30 0 * * 5L", "2023-04-20T00:00:00+02:00", []string{"2023-04-28T01:00:00+03:00", "2023-05-26T00:30:00+03:00"}},
		{"Africa/Cairo", "cron:30 23 * * 4L", "2023-10-20T00:00:00+03:00", []string{"2023-10-26T23:30:00+03:00", "2023-11-30T23:30:00+02:00"}},
		{"Africa/Cairo", "cron:*/30 23 * * 4L", "2023-10-26T22:00:00+03:00", []string{"2023-10-26T23:00:00+03:00", "2023-10-26T23:30:00+03:00", "2023-10-26T23:00:00+02:00", "2023-10-26T23:30:00+02:00", "2023-11-30T23:00:00+02:00"}},
		// D#K.
		{"Europe/London", "cron:30 1 * * 0#5", "2024-03-30T12:00:00Z", []string{"2024-03-31T02:00:00+01:00", "2024-06-30T01:30:00+01:00"}},
		{"Africa/Cairo", "cron:30 0 * * 5#4", "2023-04-20T00:00:00+02:00", []string{"2023-04-28T01:00:00+03:00", "2023-05-26T00:30:00+03:00"}},
		{"America/New_York", "cron:30 2 * * 0#2", "2024-03-01T00:00:00-05:00", []string{"2024-03-10T03:00:00-04:00", "2024-04-14T02:30:00-04:00"}},
		{"America/New_York", "cron:*/30 2 * * 0#2", "2024-03-10T00:00:00-05:00", []string{"2024-04-14T02:00:00-04:00"}},
		{"America/New_York", "cron:30 1 * * 0#1", "2024-11-01T00:00:00-04:00", []string{"2024-11-03T01:30:00-04:00", "2024-12-01T01:30:00-05:00"}},
		{"America/New_York", "cron:*/30 1 * * 0#1", "2024-11-03T00:45:00-04:00", []string{"2024-11-03T01:00:00-04:00", "2024-11-03T01:30:00-04:00", "2024-11-03T01:00:00-05:00", "2024-11-03T01:30:00-05:00", "2024-12-01T01:00:00-05:00"}},
		// NW and LW.
		{"Africa/Cairo", "cron:30 0 28W * *", "2023-04-27T12:00:00+02:00", []string{"2023-04-28T01:00:00+03:00", "2023-05-29T00:30:00+03:00"}},
		{"Africa/Cairo", "cron:*/30 0 28W * *", "2023-04-27T12:00:00+02:00", []string{"2023-05-29T00:00:00+03:00"}},
		{"Africa/Cairo", "cron:30 23 26W 10 *", "2023-10-01T00:00:00+03:00", []string{"2023-10-26T23:30:00+03:00", "2024-10-25T23:30:00+03:00"}},
		{"Africa/Cairo", "cron:*/30 23 26W * *", "2023-10-26T22:50:00+03:00", []string{"2023-10-26T23:00:00+03:00", "2023-10-26T23:30:00+03:00", "2023-10-26T23:00:00+02:00", "2023-10-26T23:30:00+02:00", "2023-11-27T23:00:00+02:00"}},
		{"Asia/Tehran", "cron:30 0 22W 3 *", "2022-03-01T00:00:00+03:30", []string{"2022-03-22T01:00:00+04:30", "2023-03-22T00:30:00+03:30"}},
		{"Europe/London", "cron:30 1 LW * *", "2024-03-28T12:00:00Z", []string{"2024-03-29T01:30:00Z", "2024-04-30T01:30:00+01:00"}},
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
	// The transitions named above are real in the installed zone database.
	for _, tr := range []struct {
		zone string
		at   time.Time
	}{
		{"Africa/Cairo", time.Date(2023, 4, 27, 22, 0, 0, 0, time.UTC)},
		{"Africa/Cairo", time.Date(2023, 10, 26, 21, 0, 0, 0, time.UTC)},
		{"Asia/Tehran", time.Date(2022, 3, 21, 20, 30, 0, 0, time.UTC)},
		{"Europe/London", time.Date(2021, 10, 31, 1, 0, 0, 0, time.UTC)},
		{"Europe/London", time.Date(2024, 3, 31, 1, 0, 0, 0, time.UTC)},
	} {
		start, _ := tr.at.In(loadLocation(t, tr.zone)).ZoneBounds()
		if !start.Equal(tr.at) {
			t.Errorf("%s: no transition at %s (period starts %s)", tr.zone, tr.at, start)
		}
	}
}

// TestCalendarErrors checks that malformed calendar rules are rejected with
// a message naming the field, the element and why.
func TestCalendarErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"cron:0 0 32W * *", `cron: day-of-month field "32W": "32W": day 32 out of range 1-31`},
		{"cron:0 0 0W * *", `cron: day-of-month field "0W": "0W": day 0 out of range 1-31`},
		{"cron:0 0 W * *", `cron: day-of-month field "W": "W": "W" needs a day`},
		{"cron:0 0 L5 * *", `cron: day-of-month field "L5": "L5": "L" takes no number after it`},
		{"cron:0 0 5L * *", `cron: day-of-month field "5L": "5L": in the day-of-month field "L" stands alone (the last day of the month); for the last weekday D of the month write DL in the day-of-week field`},
		{"cron:0 0 L-3 * *", `cron: day-of-month field "L-3": "L-3": offsets from the last day ("L-N", Quartz) are not supported`},
		{"cron:0 0 1-L * *", `cron: day-of-month field "1-L": "1-L": "L" and "W" take no range or step`},
		{"cron:0 0 1-15W * *", `cron: day-of-month field "1-15W": "1-15W": "L" and "W" take no range or step`},
		{"cron:0 0 L/2 * *", `cron: day-of-month field "L/2": "L/2": "L" and "W" take no range or step`},
		{"cron:0 0 1,15W-20 * *", `cron: day-of-month field "1,15W-20": element "15W-20": "15W-20": "L" and "W" take no range or step`},
		{"cron:0 0 WL * *", `cron: day-of-month field "WL": "WL" is not a day: want a number 1-31, L, LW or NW`},
		{"cron:0 0 15#3 * *", `cron: day-of-month field "15#3": "15#3": nth weekday ("#") belongs in the day-of-week field, e.g. 5#3`},
		{"cron:0 0 * * 5#6", `cron: day-of-week field "5#6": "5#6": week 6 out of range 1-5 (a month has at most five of each weekday)`},
		{"cron:0 0 * * 5#0", `cron: day-of-week field "5#0": "5#0": week 0 out of range 1-5`},
		{"cron:0 0 * * 5#", `cron: day-of-week field "5#": "5#": missing week number after "#"`},
		{"cron:0 0 * * #3", `cron: day-of-week field "#3": "#3": missing weekday before "#"`},
		{"cron:0 0 * * 5#x", `cron: day-of-week field "5#x": "5#x": week "x" after "#" is not a number 1-5`},
		{"cron:0 0 * * 8#1", `cron: day-of-week field "8#1": "8#1": value 8 out of range 0-7`},
		{"cron:0 0 * * 1-5#2", `cron: day-of-week field "1-5#2": "1-5#2": "#" takes a single weekday and week, not a range or step`},
		{"cron:0 0 * * 5#1-3", `cron: day-of-week field "5#1-3": "5#1-3": "#" takes a single weekday and week`},
		{"cron:0 0 * * 5W", `cron: day-of-week field "5W": "5W": nearest weekday ("W") belongs in the day-of-month field, e.g. 15W`},
		{"cron:0 0 * * LW", `cron: day-of-week field "LW": "LW": nearest weekday ("W") belongs in the day-of-month field`},
		{"cron:0 0 * * L", `cron: day-of-week field "L": "L": in the day-of-week field "L" needs a weekday before it (5L is the last Friday of the month)`},
		{"cron:0 0 * * 8L", `cron: day-of-week field "8L": "8L": value 8 out of range 0-7`},
		{"cron:0 0 * * 1-5L", `cron: day-of-week field "1-5L": "1-5L": "L" takes a single weekday, not a range or step`},
		{"cron:0 0 * * 5L-6", `cron: day-of-week field "5L-6": "5L-6": "L" takes a single weekday`},
		{"cron:0 0 * * XL", `cron: day-of-week field "XL": "XL": "X" is not a number or a day name (SUN-SAT)`},
		{"cron:L 0 * * *", `cron: minute field "L": "L": "L" and "W" are only allowed in the day-of-month field (L, LW, 15W) and "L" in the day-of-week field (5L)`},
		{"cron:0 0 * 2W *", `cron: month field "2W": "2W": "L" and "W" are only allowed in the day-of-month field`},
		{"cron:0 5#3 * * *", `cron: hour field "5#3": "5#3": nth weekday ("#") is only allowed in the day-of-week field`},
		// Random values stay rejected, with or without calendar letters.
		{"cron:0 0 L~ * *", `cron: day-of-month field "L~": "L~": random ranges ("~") are not supported by crontab(5)`},
		{"cron:0 0 * * 1~5L", `random ranges ("~") are not supported`},
		{"cron:0 0 ? * 5L", `"?" is not supported (Quartz syntax); use "*"`},
		// Schedules that can never fire.
		{"cron:0 0 31W 2 *", `cron: expression "0 0 31W 2 *" never fires: no month in month field "2" has a day in day-of-month field "31W"`},
		{"cron:0 0 31W 4,6,9,11 *", `never fires`},
		{"cron:0 0 */20 * 5#2", `cron: expression "0 0 */20 * 5#2" never fires: no day of a month in month field "*" matches both day-of-month field "*/20" and day-of-week field "5#2"`},
		{"cron:0 0 */10 2 1#5", `never fires`}, // days 1, 11, 21: never a fifth Monday
		{"cron:0 0 */20 * 1L", `never fires`},  // days 1 and 21: the last Monday is the 22nd or later
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr, nil)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", tt.expr, Describe(s), tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.expr, err, tt.want)
		}
	}
	// Near misses that are valid.
	for _, expr := range []string{
		"cron:0 0 L,LW,1W,31W * *", "cron:0 0 * * 0L,7L,SAT#5,sun#1", "cron:0 0 */10 * 5#2", // 11th
		"cron:0 0 29W 2 *", "cron:0 0 30 2 5#5", "cron:0 0 L 2 *", "cron:0 0 * * 1,3-4,5L",
	} {
		if _, err := Parse(expr, nil); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

// TestCalendarMatchesCronexpr cross-checks the calendar rules with
// hashicorp/cronexpr in UTC, where its daylight-saving code never runs:
// for random expressions with L, LW, NW, DL and D#K, Next must agree over
// 200 starts from 1970 to 2099. The day fields are drawn so that both
// libraries apply the same rule to them (cronexpr ORs two restricted day
// fields even when one starts with *, which cronie ANDs), and plain
// day-of-week values stay in 0-6 (cronexpr mishandles ranges ending in 7
// or 0).
// An expression Parse rejects as never firing must not fire in cronexpr
// either.
func TestCalendarMatchesCronexpr(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	list := func(elems func() string) string {
		parts := make([]string, 1+r.IntN(2))
		for i := range parts {
			parts[i] = elems()
		}
		return strings.Join(parts, ",")
	}
	plain := func(low, high int) func() string {
		return func() string {
			a, b := low+r.IntN(high-low+1), low+r.IntN(high-low+1)
			switch r.IntN(3) {
			case 0:
				return fmt.Sprint(a)
			case 1:
				return fmt.Sprintf("%d-%d", min(a, b), max(a, b))
			}
			return fmt.Sprintf("%d-%d/%d", min(a, b), max(a, b), 1+r.IntN(3))
		}
	}
	dom := func() string {
		if r.IntN(2) == 0 {
			return randomCalendarElement(r, fieldDom)
		}
		return plain(1, 31)()
	}
	dow := func() string {
		switch r.IntN(3) {
		case 0:
			return randomCalendarElement(r, fieldDow)
		case 1:
			return fmt.Sprint(r.IntN(7))
		}
		return plain(1, 6)() // cronexpr reads a range ending in 0 as ending in 6
	}
	n, compared, never := 300, 0, 0
	if testing.Short() {
		n = 60
	}
	for range n {
		minute := []string{"0", "*/15", "30", "7,59"}[r.IntN(4)]
		hour := []string{"0", "23", "*/6", "9-17"}[r.IntN(4)]
		month := []string{"*", "*", "2", "1-6", "2,4,6,9,11", "12"}[r.IntN(6)]
		var d, w string
		switch r.IntN(3) {
		case 0:
			d, w = list(dom), "*"
		case 1:
			d, w = "*", list(dow)
		default:
			d, w = list(dom), list(dow)
		}
		switch {
		case strings.ContainsAny(d+w, "LW#"):
		case d == "*":
			w = "5L," + w
		default:
			d = "L," + d
		}
		expr := strings.Join([]string{minute, hour, d, month, w}, " ")
		e, err := cronexpr.Parse(expr)
		if err != nil {
			t.Fatalf("cronexpr.Parse(%q): %v", expr, err)
		}
		s, err := Parse("cron:"+expr, nil)
		if err != nil {
			if !strings.Contains(err.Error(), "never fires") {
				t.Fatalf("Parse(%q): %v", expr, err)
			}
			if got := e.Next(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)); !got.IsZero() {
				t.Errorf("Parse(%q): %v, but cronexpr fires at %s", expr, err, got)
			}
			never++
			continue
		}
		compared++
		for range 200 {
			from := time.Unix(r.Int64N(4102444800), r.Int64N(2)*r.Int64N(1e9)).UTC() // 1970 to 2099
			got, want := s.Next(from), e.Next(from)
			if !got.Equal(want) {
				t.Fatalf("cron:%s: Next(%s) = %s, cronexpr says %s", expr, from.Format(time.RFC3339Nano), got, want)
			}
		}
	}
	if compared < n*3/4 {
		t.Errorf("only %d of %d random expressions compared (%d never fire)", compared, n, never)
	}
}

// TestParseCalendarRules checks the rules the field parser records, next to
// the plain bitsets and cronie's flags: L, LW and NW in the day-of-month
// field, DL and D#K (7 as Sunday, names, any case) in the day-of-week field;
// none of them starts a field with *.
func TestParseCalendarRules(t *testing.T) {
	tests := []struct {
		expr     string
		dom, dow uint64
		cal      calendarRules
		flags    cronFlags
	}{
		{"0 0 L * *", 0, bitsRange(0, 6, 1), calendarRules{last: true}, flagDowStar},
		{"0 0 lw * *", 0, bitsRange(0, 6, 1), calendarRules{lastWeekday: true}, flagDowStar},
		{"0 0 1,1W,15w,31W * *", bitsOf(1), bitsRange(0, 6, 1), calendarRules{nearest: bitsOf(1, 15, 31)}, flagDowStar},
		{"0 0 * * 5L,0l,7L", bitsRange(1, 31, 1), 0, calendarRules{lastDow: 1<<5 | 1}, flagDomStar},
		{"0 0 * * FRI#3,sun#1,7#5,mon", bitsRange(1, 31, 1), bitsOf(1), calendarRules{nthDow: bitsOf(2*7+5, 0, 4*7)}, flagDomStar},
		{"0 0 L * 5#1", 0, 0, calendarRules{last: true, nthDow: bitsOf(5)}, 0},
		{"0 0 */2 * 1L", bitsRange(1, 31, 2), 0, calendarRules{lastDow: 1 << 1}, flagDomStar},
	}
	for _, tt := range tests {
		spec, err := parseCronSpec(tt.expr)
		if err != nil {
			t.Errorf("parseCronSpec(%q): %v", tt.expr, err)
			continue
		}
		if spec.dom != tt.dom || spec.dow != tt.dow || spec.cal != tt.cal || spec.flags != tt.flags {
			t.Errorf("parseCronSpec(%q) = dom %#x dow %#x %+v flags %04b; want dom %#x dow %#x %+v flags %04b",
				tt.expr, spec.dom, spec.dow, spec.cal, spec.flags, tt.dom, tt.dow, tt.cal, tt.flags)
		}
	}
}
