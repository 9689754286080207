package schedule

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestParseErrors checks the rejections of Parse and of the every:, daily:,
// hourly: and at: forms (cron: has its own table in cron_test.go).
func TestParseErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", "empty expression; want every:, daily:, hourly:, cron: or at:"},
		{"cron:" + strings.Repeat("*", 252), "expression is 257 bytes; the limit is 256"},
		{"every:" + strings.Repeat("9", 1000), "expression is 1006 bytes; the limit is 256"},
		{"weekly:MON", `unknown expression form "weekly:"; want every:, daily:, hourly:, cron: or at:`},
		{"Cron:* * * * *", `unknown expression form "Cron:"`},
		{" every:5s", `unknown expression form " every:"`},
		{"30s", `expression "30s" has no form prefix; want every:, daily:, hourly:, cron: or at:`},
		{"* * * * *", `expression "* * * * *" has no form prefix`},

		{"every:0", `every: interval "0" must be positive`},
		{"every:0s", `every: interval "0s" must be positive`},
		{"every:0h", `every: interval "0h" must be positive`},
		{"every:-5", `every: interval "-5" must be positive`},
		{"every:-5m", `every: interval "-5m" must be positive`},
		{"every:1.5", `every: interval "1.5" must be a whole number of seconds, minutes or hours`},
		{"every:1.5m", `every: interval "1.5m" must be a whole number`},
		{"every:1e3", `every: interval "1e3" must be a whole number`},
		{"every:5d", `every: interval "5d" has an unknown unit; want s, m or h`},
		{"every:5ms", `every: interval "5ms" has an unknown unit`},
		{"every:+5", `every: interval "+5" is not N, Ns, Nm or Nh`},
		{"every:1h30m", `every: interval "1h30m" is not N, Ns, Nm or Nh`},
		{"every: 5s", `every: interval " 5s" is not N, Ns, Nm or Nh`},
		{"every:s", `every: interval "s" is not N, Ns, Nm or Nh`},
		{"every:", "every: missing interval"},
		{"every:31622401", `every: interval "31622401" is longer than 366 days`},
		{"every:527041m", `every: interval "527041m" is longer than 366 days`},
		{"every:8785h", `every: interval "8785h" is longer than 366 days`},
		{"every:99999999999999999999h", `every: interval "99999999999999999999h" is longer than 366 days`},
		{"every:9223372036854775807h", `every: interval "9223372036854775807h" is longer than 366 days`},

		{"daily:24:00", `daily: time "24:00": hour 24 out of range 0-23`},
		{"daily:99:00", `daily: time "99:00": hour 99 out of range 0-23`},
		{"daily:12:60", `daily: time "12:60": minute 60 out of range 0-59`},
		{"daily:3:0", `daily: time "3:0" is not HH:MM`},
		{"daily:003:00", `daily: time "003:00" is not HH:MM`},
		{"daily:03:000", `daily: time "03:000" is not HH:MM`},
		{"daily:12", `daily: time "12" is not HH:MM`},
		{"daily:-1:00", `daily: time "-1:00" is not HH:MM`},
		{"daily:03:00:00", `daily: time "03:00:00" is not HH:MM`},
		{"daily:", `daily: time "" is not HH:MM`},

		{"hourly:60", `hourly: minute "60" out of range 0-59`},
		{"hourly:100", `hourly: minute "100" is not a number 0-59`},
		{"hourly:x", `hourly: minute "x" is not a number 0-59`},
		{"hourly:-1", `hourly: minute "-1" is not a number 0-59`},
		{"hourly:", `hourly: minute "" is not a number 0-59`},

		{"at:0", `at: time "0" must be positive`},
		{"at:-5", `at: time "-5" must be positive`},
		{"at:abc", `at: time "abc" is not a whole number of Unix seconds`},
		{"at:1.5", `at: time "1.5" is not a whole number of Unix seconds`},
		{"at:2024-06-28", `at: time "2024-06-28" is not a whole number of Unix seconds`},
		{"at:1719590400000", `at: time "1719590400000" is after the year 9999 (Unix seconds are expected, not milliseconds)`},
		{"at:99999999999999999999", `at: time "99999999999999999999" is after the year 9999`},
		{"at:", "at: missing time"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr, nil)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %q", tt.expr, Describe(s), tt.want)
			continue
		}
		if s != nil {
			t.Errorf("Parse(%q) returned a schedule and an error", tt.expr)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.expr, err, tt.want)
		}
	}
	// The limit is inclusive.
	if _, err := Parse("cron:"+strings.Repeat(" ", 242)+"* * * * *", nil); err != nil {
		t.Errorf("Parse of a 256-byte expression: %v", err)
	}
}

// TestDescribe checks the descriptions stored in a task's interval field,
// and IsOnce.
func TestDescribe(t *testing.T) {
	london := loadLocation(t, "Europe/London")
	tests := []struct {
		expr string
		loc  *time.Location
		want string
		once bool
	}{
		{"every:30s", nil, "every 30s", false},
		{"every:60", nil, "every 1m", false},
		{"every:90s", nil, "every 1m30s", false},
		{"every:5m", london, "every 5m", false},
		{"every:1h", nil, "every 1h", false},
		{"every:3601", nil, "every 1h0m1s", false},
		{"every:5400", nil, "every 1h30m", false},
		{"every:8784h", nil, "every 8784h", false},
		{"every:007m", nil, "every 7m", false},
		{"daily:08:00", nil, "at 08:00 every day", false},
		{"daily:03:00", london, "at 03:00 every day (Europe/London)", false},
		{"daily:3:05", nil, "at 03:05 every day", false},
		{"hourly:30", nil, "at minute 30 past every hour", false},
		{"hourly:5", london, "at minute 5 past every hour (Europe/London)", false},
		{"cron:0 3 * * 1-5", nil, "at 03:00, Monday through Friday", false},
		{"cron:  0\t3  * *   1-5 ", london, "at 03:00, Monday through Friday (Europe/London)", false},
		{"cron:@daily", nil, "at 00:00 every day", false},
		{"cron:0 0 L * *", london, "at 00:00 on the last day of the month (Europe/London)", false},
		{"cron:*/15 9-17 * * *", loadLocation(t, "UTC"), "every 15 minutes from 09:00 through 17:59", false},
		{"at:1719590400", nil, "once at 2024-06-28T16:00:00Z", true},
		{"at:1719590400", london, "once at 2024-06-28T16:00:00Z", true},
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr, tt.loc)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		if got := Describe(s); got != tt.want {
			t.Errorf("Describe(Parse(%q)) = %q, want %q", tt.expr, got, tt.want)
		}
		if got := fmt.Sprint(s); got != tt.want {
			t.Errorf("fmt.Sprint(Parse(%q)) = %q, want %q", tt.expr, got, tt.want)
		}
		if got := IsOnce(s); got != tt.once {
			t.Errorf("IsOnce(Parse(%q)) = %v, want %v", tt.expr, got, tt.once)
		}
	}
	if Describe(nil) != "" || IsOnce(nil) {
		t.Errorf("Describe(nil) = %q, IsOnce(nil) = %v; want \"\", false", Describe(nil), IsOnce(nil))
	}
}

// TestEvery checks that every: fires on the multiples of its interval since
// the Unix epoch, strictly after the given time, whatever the zone.
func TestEvery(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	tests := []struct {
		expr       string
		from, want time.Time
	}{
		{"every:30s", time.Date(2024, 1, 1, 0, 0, 10, 0, time.UTC), time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC)},
		{"every:30", time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC), time.Date(2024, 1, 1, 0, 1, 0, 0, time.UTC)},
		{"every:30s", time.Date(2024, 1, 1, 0, 0, 29, 999999999, time.UTC), time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC)},
		{"every:30s", time.Date(2024, 1, 1, 0, 0, 30, 1, time.UTC), time.Date(2024, 1, 1, 0, 1, 0, 0, time.UTC)},
		{"every:5m", time.Date(2024, 1, 1, 10, 7, 0, 0, time.UTC), time.Date(2024, 1, 1, 10, 10, 0, 0, time.UTC)},
		{"every:1h", time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 11, 0, 0, 0, time.UTC)},
		{"every:7", epoch, epoch.Add(7 * time.Second)},
		{"every:7", epoch.Add(-time.Nanosecond), epoch},
		{"every:1h", time.Date(1969, 12, 31, 22, 30, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)},
		{"every:7s", time.Date(1969, 12, 31, 23, 59, 50, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 53, 0, time.UTC)},
		// 1 day, 7 hours: multiples of 111600 s since the epoch.
		{"every:31h", time.Unix(111600*20000+5, 0), time.Unix(111600*20001, 0)},
		{"every:8784h", time.Unix(1, 0), time.Unix(366*86400, 0)},
		{"every:1s", time.Time{}, time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
	}
	for _, tt := range tests {
		for _, zone := range []string{"UTC", "Australia/Lord_Howe", "America/St_Johns"} {
			s, err := Parse(tt.expr, loadLocation(t, zone))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			if got := s.Next(tt.from); !got.Equal(tt.want) {
				t.Errorf("%s in %s: Next(%s) = %s, want %s", tt.expr, zone, tt.from.UTC(), got.UTC(), tt.want.UTC())
			}
		}
	}
}

// TestEveryNoDrift runs an every: schedule the way a scheduler does, with
// runs that take a random part of the interval and start late, and checks
// that run N is exactly N intervals after run 0, and that processes
// starting at different times agree on the instants.
func TestEveryNoDrift(t *testing.T) {
	for _, expr := range []string{"every:30s", "every:7", "every:13m", "every:5h"} {
		s, err := Parse(expr, nil)
		if err != nil {
			t.Fatal(err)
		}
		interval := s.Next(time.Unix(0, 0)).Sub(time.Unix(0, 0))
		first := s.Next(time.Date(2024, 5, 5, 12, 34, 56, 789, time.UTC))
		fire := first
		for n := 1; n <= 1000; n++ {
			// The run finishes somewhere within the interval, not on a
			// whole second.
			done := fire.Add(time.Duration(n*7919%999+1) * interval / 1001)
			fire = s.Next(done)
			if want := first.Add(time.Duration(n) * interval); !fire.Equal(want) {
				t.Fatalf("%s: run %d at %s, want %s", expr, n, fire, want)
			}
		}
		// Another process, started at an unrelated time, computes the same
		// instants.
		other := s.Next(first.Add(-interval / 3))
		if !other.Equal(first) {
			t.Errorf("%s: another process computes %s, want %s", expr, other, first)
		}
	}
}

// TestAt checks that at: fires once: its instant while it is after t, then
// the zero Time.
func TestAt(t *testing.T) {
	s, err := Parse("at:1719590400", loadLocation(t, "Europe/London"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 6, 28, 16, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ from, want time.Time }{
		{time.Time{}, at},
		{at.Add(-time.Hour), at},
		{at.Add(-time.Nanosecond), at},
		{at, time.Time{}},
		{at.Add(time.Nanosecond), time.Time{}},
		{at.Add(24 * time.Hour), time.Time{}},
	} {
		if got := s.Next(tt.from); !got.Equal(tt.want) {
			t.Errorf("Next(%s) = %s, want %s", tt.from, got, tt.want)
		}
	}
	if !IsOnce(s) {
		t.Error("IsOnce(at:...) = false")
	}
	// The largest accepted instant.
	if s, err := Parse("at:253402300799", nil); err != nil || !s.Next(time.Time{}).Equal(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)) {
		t.Errorf("Parse(at:253402300799) = %v, %v", s, err)
	}
}

// TestConcurrentNext shares one Schedule between goroutines and compares
// their answers with serial ones. Under -race it fails if Next writes
// shared state.
func TestConcurrentNext(t *testing.T) {
	ny := loadLocation(t, "America/New_York")
	for _, expr := range []string{"cron:*/5 * */2 * 1-5", "cron:0 0 */2 * 1", "cron:30 2 LW,15W * 0#2", "daily:02:30", "every:45s"} {
		s, err := Parse(expr, ny)
		if err != nil {
			t.Fatal(err)
		}
		const goroutines, calls = 8, 10000
		base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
		from := func(i int) time.Time { return base.Add(time.Duration(i) * 17 * time.Minute) }
		want := make([]time.Time, calls)
		for i := range want {
			want[i] = s.Next(from(i))
		}
		var wg sync.WaitGroup
		errs := make(chan string, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				for k := range calls {
					i := (k*7 + g*1237) % calls
					if got := s.Next(from(i)); !got.Equal(want[i]) {
						errs <- fmt.Sprintf("%s: goroutine %d: Next(%s) = %s, serially %s", expr, g, from(i), got, want[i])
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestDescribeWords is the golden table of cron descriptions: each must say
// exactly what the fields match, and irregular fields are listed.
func TestDescribeWords(t *testing.T) {
	tests := []struct{ expr, want string }{
		// Times of day.
		{"0 8 * * 1-5", "at 08:00, Monday through Friday"},
		{"30 17 * * *", "at 17:30 every day"},
		{"0 8,17 * * *", "at 08:00 and 17:00 every day"},
		{"0,30 2 * * *", "at 02:00 and 02:30 every day"},
		{"0 */6 * * *", "at 00:00, 06:00, 12:00 and 18:00 every day"},
		{"0 */4 * * *", "at minute 0 past hours 0,4,8,12,16,20"},
		{"23 0-23/2 * * *", "at minute 23 past hours 0,2,4,6,8,10,12,14,16,18,20,22"},
		{"0,7,13 1,5 * * *", "at minutes 0,7,13 past hours 1,5"},
		{"0-29 * * * *", "at minutes 0-29 past every hour"},
		{"*/7 * * * *", "at minutes 0,7,14,21,28,35,42,49,56 past every hour"},
		{"5 9-17 * * *", "at minute 5 past hours 9-17"},
		{"@hourly", "at minute 0 past every hour"},
		// Every N minutes, whole days or hour windows.
		{"* * * * *", "every minute"},
		{"*/15 * * * *", "every 15 minutes"},
		{"0-59/30 * * * *", "every 30 minutes"},
		{"*/15 9-17 * * *", "every 15 minutes from 09:00 through 17:59"},
		{"*/15 9-17 * * 1-5", "every 15 minutes from 09:00 through 17:59, Monday through Friday"},
		// asynq #306: a minute wildcard in one hour is not a daily job.
		{"* 0 * * *", "every minute from 00:00 through 00:59"},
		{"* 9-11,14-17 * * *", "every minute from 09:00 through 11:59 and from 14:00 through 17:59"},
		{"*/10 1,3,5,7 * * *", "every 10 minutes during hours 1,3,5,7"},
		// Days of the week.
		{"0 0 * * 0", "at 00:00 on Sundays"},
		{"@weekly", "at 00:00 on Sundays"},
		{"0 0 * * 1,5", "at 00:00 on Mondays and Fridays"},
		{"0 0 * * 6,7", "at 00:00 on Saturdays and Sundays"},
		{"0 0 * * FRI-SUN", "at 00:00, Friday through Sunday"},
		{"0 0 * * 0-3", "at 00:00 on Monday through Wednesday and Sundays"},
		{"0 0 * * 0-6", "at 00:00 every day"},
		// Days of the month.
		{"15 14 1 * *", "at 14:15 on the 1st of the month"},
		{"@monthly", "at 00:00 on the 1st of the month"},
		{"0 0 2,3,22,23 * *", "at 00:00 on the 2nd, the 3rd, the 22nd and the 23rd of the month"},
		{"0 0 11-13 * *", "at 00:00 on the 11th through the 13th of the month"},
		{"0 0 */2 * *", "at 00:00 on days 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 of the month"},
		// crontab(5): both fields restricted, either matches.
		{"30 4 1,15 * 5", "at 04:30 on the 1st and the 15th of the month, and on Fridays"},
		{"0 0 1 * 1-5", "at 00:00 on the 1st of the month, and on Monday through Friday"},
		{"0 0 1-31 * 1", "at 00:00 every day"},
		// cronie: a field starting with * makes both fields count.
		{"0 0 */2 * 1", "at 00:00 on days 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 of the month, if that day is a Monday"},
		{"0 12 13 * */2", "at 12:00 on the 13th of the month, if that day is a Tuesday, a Thursday, a Saturday or a Sunday"},
		// Months.
		{"@yearly", "at 00:00 on the 1st of January"},
		{"0 0 1 1,7 *", "at 00:00 on the 1st of January and July"},
		{"59 23 * FEB *", "at 23:59 every day in February"},
		{"0 9 * 3-5 1", "at 09:00 on Mondays in March through May"},
		{"*/5 * * 12 *", "every 5 minutes in December"},
		{"30 4 1,15 OCT 5", "at 04:30 on the 1st and the 15th of the month, and on Fridays, only in October"},
		// Calendar rules.
		{"0 0 L * *", "at 00:00 on the last day of the month"},
		{"0 0 LW * *", "at 00:00 on the last weekday of the month"},
		{"0 0 15W * *", "at 00:00 on the weekday nearest the 15th of the month"},
		{"0 0 1,L * *", "at 00:00 on the 1st and the last day of the month"},
		{"0 0 L 2 *", "at 00:00 on the last day of February"},
		{"0 9 * * 5#3", "at 09:00 on the third Friday of the month"},
		{"0 9 * * 1#1,5L", "at 09:00 on the first Monday and the last Friday of the month"},
		{"0 9 * * 1,5L", "at 09:00 on Mondays and the last Friday of the month"},
		{"0 9 * 1 5L", "at 09:00 on the last Friday of January"},
		{"0 9 * 1 1,5L", "at 09:00 on Mondays and the last Friday of the month in January"},
		{"0 9 L 1 5L", "at 09:00 on the last day of the month, and on the last Friday of the month, only in January"},
		{"0 9 */2 1 5L", "at 09:00 on days 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 of the month, if that day is the last Friday, only in January"},
		{"0 0 L * 5", "at 00:00 on the last day of the month, and on Fridays"},
		{"0 0 */2 * 5#3", "at 00:00 on days 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 of the month, if that day is the third Friday"},
	}
	for _, tt := range tests {
		s, err := Parse("cron:"+tt.expr, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		if got := Describe(s); got != tt.want {
			t.Errorf("Describe(cron:%s)\n got: %s\nwant: %s", tt.expr, got, tt.want)
		}
	}
}

// TestDescribeIsExact checks over random expressions, calendar rules
// included, that two schedules with the same description fire at the same
// wall-clock times: the same minutes, hours and months, and the same days
// in every kind of month. A description that fits two different schedules
// would be a wrong paraphrase of one of them.
func TestDescribeIsExact(t *testing.T) {
	type matches struct {
		minute, hour, month uint64
		days                [4][7]uint32
	}
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[string]matches{}
	exprs := map[string]string{}
	for i := range 20000 {
		expr := randomCronExpression(r, i%2 == 1)
		spec, err := parseCronSpec(expr)
		if err != nil {
			continue
		}
		m := matches{spec.minute, spec.hour, spec.month, spec.days}
		d := spec.describe()
		if prev, ok := seen[d]; ok && prev != m {
			t.Errorf("%q and %q are different schedules with the same description %q", exprs[d], expr, d)
		}
		seen[d], exprs[d] = m, expr
	}
	if len(seen) < 5000 {
		t.Errorf("only %d distinct descriptions", len(seen))
	}
}
