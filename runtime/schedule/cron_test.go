package schedule

import (
	"strings"
	"testing"
	"time"
)

// bitsOf builds a bitset from values, for expected field sets.
func bitsOf(values ...int) uint64 {
	var set uint64
	for _, v := range values {
		set |= 1 << v
	}
	return set
}

// bitsRange builds the bitset lo..hi stepping by step.
func bitsRange(lo, hi, step int) uint64 {
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set
}

// TestParseCronSpecFields checks the bitsets and flags the field parser
// builds, case by case from crontab(5): "*" is first-last; ranges are
// inclusive; lists of numbers and ranges; steps after ranges and after *;
// three-letter names, case-insensitive; day-of-week 0 and 7 are Sunday; the
// flags record which fields start with * (cronie's MIN_STAR, HR_STAR,
// DOM_STAR, DOW_STAR).
func TestParseCronSpecFields(t *testing.T) {
	all := func(f int) uint64 { return bitsRange(cronFields[f].low, cronFields[f].high, 1) }
	allDow := bitsRange(0, 6, 1)
	tests := []struct {
		expr                          string
		minute, hour, dom, month, dow uint64
		flags                         cronFlags
	}{
		// crontab(5) EXAMPLE CRON FILE.
		{"5 0 * * *", bitsOf(5), bitsOf(0), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		{"15 14 1 * *", bitsOf(15), bitsOf(14), bitsOf(1), all(fieldMonth), allDow, flagDowStar},
		{"0 22 * * 1-5", bitsOf(0), bitsOf(22), all(fieldDom), all(fieldMonth), bitsRange(1, 5, 1), flagDomStar},
		{"23 0-23/2 * * *", bitsOf(23), bitsRange(0, 23, 2), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		{"5 4 * * sun", bitsOf(5), bitsOf(4), all(fieldDom), all(fieldMonth), bitsOf(0), flagDomStar},
		{"30 4 1,15 * 5", bitsOf(30), bitsOf(4), bitsOf(1, 15), all(fieldMonth), bitsOf(5), 0},
		// "8-11 for an 'hours' entry specifies execution at hours 8, 9, 10, and 11".
		{"0 8-11 * * *", bitsOf(0), bitsOf(8, 9, 10, 11), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		// Lists: "1,2,5,9", "0-4,8-12".
		{"1,2,5,9 0-4,8-12 * * *", bitsOf(1, 2, 5, 9), bitsOf(0, 1, 2, 3, 4, 8, 9, 10, 11, 12), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		// "*/2" in the hours field: every two hours. It starts with *.
		{"* */2 * * *", all(fieldMinute), bitsRange(0, 23, 2), all(fieldDom), all(fieldMonth), allDow, flagMinStar | flagHourStar | flagDomStar | flagDowStar},
		{"0-59/15 * */10 */5 */3", bitsRange(0, 59, 15), all(fieldHour), bitsOf(1, 11, 21, 31), bitsOf(1, 6, 11), bitsOf(0, 3, 6), flagHourStar | flagDomStar | flagDowStar},
		// A range with a step that does not divide it.
		{"10-25/7 * * * *", bitsOf(10, 17, 24), all(fieldHour), all(fieldDom), all(fieldMonth), allDow, flagHourStar | flagDomStar | flagDowStar},
		// A list that starts with * still sets the flag (cronie looks at the first character).
		{"0 0 *,5 * 1", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(1), flagDomStar},
		// Names, case-insensitive, in lists and ranges.
		{"0 0 1 jan,Jul,DEC *", bitsOf(0), bitsOf(0), bitsOf(1), bitsOf(1, 7, 12), allDow, flagDowStar},
		{"0 0 * Mar-may mon-FRI", bitsOf(0), bitsOf(0), all(fieldDom), bitsOf(3, 4, 5), bitsRange(1, 5, 1), flagDomStar},
		{"0 0 * JAN-DEC/3 *", bitsOf(0), bitsOf(0), all(fieldDom), bitsOf(1, 4, 7, 10), allDow, flagDomStar | flagDowStar},
		// Day-of-week 7 is Sunday, and ranges may end in 7 or SUN.
		{"0 0 * * 7", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0), flagDomStar},
		{"0 0 * * 5-7", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0, 5, 6), flagDomStar},
		{"0 0 * * FRI-SUN", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0, 5, 6), flagDomStar},
		{"0 0 * * SUN-SUN", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0), flagDomStar},
		{"0 0 * * 0-7", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), allDow, flagDomStar},
		{"0 0 * * */7", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0), flagDomStar | flagDowStar},
		// Leading zeros, and tabs and runs of blanks between fields.
		{" 05\t04  *\t* *\t", bitsOf(5), bitsOf(4), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		// Steps up to the field's span are allowed.
		{"*/59 */23 */30 */11 *", bitsOf(0, 59), bitsOf(0, 23), bitsOf(1, 31), bitsOf(1, 12), allDow, flagMinStar | flagHourStar | flagDomStar | flagDowStar},
		// The @macros, as cronie's entry.c expands them.
		{"@yearly", bitsOf(0), bitsOf(0), bitsOf(1), bitsOf(1), allDow, flagDowStar},
		{"@annually", bitsOf(0), bitsOf(0), bitsOf(1), bitsOf(1), allDow, flagDowStar},
		{"@monthly", bitsOf(0), bitsOf(0), bitsOf(1), all(fieldMonth), allDow, flagDowStar},
		{"@weekly", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), bitsOf(0), flagDomStar},
		{"@daily", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		{"@midnight", bitsOf(0), bitsOf(0), all(fieldDom), all(fieldMonth), allDow, flagDomStar | flagDowStar},
		{"@hourly", bitsOf(0), all(fieldHour), all(fieldDom), all(fieldMonth), allDow, flagHourStar | flagDomStar | flagDowStar},
	}
	for _, tt := range tests {
		spec, err := parseCronSpec(tt.expr)
		if err != nil {
			t.Errorf("parseCronSpec(%q): %v", tt.expr, err)
			continue
		}
		got := [...]uint64{spec.minute, spec.hour, spec.dom, spec.month, spec.dow}
		want := [...]uint64{tt.minute, tt.hour, tt.dom, tt.month, tt.dow}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parseCronSpec(%q) %s = %#x, want %#x", tt.expr, cronFields[i].name, got[i], want[i])
			}
		}
		if spec.flags != tt.flags {
			t.Errorf("parseCronSpec(%q) flags = %04b, want %04b", tt.expr, spec.flags, tt.flags)
		}
	}
}

// TestCronNextUTC checks successive fires of crontab(5) examples and rules
// in UTC, from Monday 2024-01-01 00:00 (strictly after it).
func TestCronNextUTC(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		expr string
		want []string // UTC, "2006-01-02 15:04"
	}{
		// crontab(5): "run five minutes after midnight, every day".
		{"5 0 * * *", []string{"2024-01-01 00:05", "2024-01-02 00:05", "2024-01-03 00:05"}},
		// "run at 2:15pm on the first of every month".
		{"15 14 1 * *", []string{"2024-01-01 14:15", "2024-02-01 14:15", "2024-03-01 14:15"}},
		// "run at 10 pm on weekdays" (2024-01-05 is a Friday).
		{"0 22 * * 1-5", []string{"2024-01-01 22:00", "2024-01-02 22:00", "2024-01-03 22:00", "2024-01-04 22:00", "2024-01-05 22:00", "2024-01-08 22:00"}},
		// "run 23 minutes after midn, 2am, 4am ..., everyday".
		{"23 0-23/2 * * *", []string{"2024-01-01 00:23", "2024-01-01 02:23", "2024-01-01 04:23"}},
		// "run at 5 after 4 every sunday".
		{"5 4 * * sun", []string{"2024-01-07 04:05", "2024-01-14 04:05"}},
		// "30 4 1,15 * 5": 4:30 am on the 1st and 15th of each month, plus every Friday.
		{"30 4 1,15 * 5", []string{"2024-01-01 04:30", "2024-01-05 04:30", "2024-01-12 04:30", "2024-01-15 04:30", "2024-01-19 04:30", "2024-01-26 04:30", "2024-02-01 04:30", "2024-02-02 04:30"}},
		// Ranges and lists.
		{"0 8-11 * * *", []string{"2024-01-01 08:00", "2024-01-01 09:00", "2024-01-01 10:00", "2024-01-01 11:00", "2024-01-02 08:00"}},
		{"0 0-4,8-12 * * *", []string{"2024-01-01 01:00", "2024-01-01 02:00", "2024-01-01 03:00", "2024-01-01 04:00", "2024-01-01 08:00"}},
		{"*/15 * * * *", []string{"2024-01-01 00:15", "2024-01-01 00:30", "2024-01-01 00:45", "2024-01-01 01:00"}},
		// Names.
		{"0 0 1 jan,Jul *", []string{"2024-07-01 00:00", "2025-01-01 00:00"}},
		{"0 12 * * MON-fri", []string{"2024-01-01 12:00", "2024-01-02 12:00"}},
		// Day-of-week 7 and ranges ending in it.
		{"0 0 * * 7", []string{"2024-01-07 00:00", "2024-01-14 00:00"}},
		{"0 0 * * 5-7", []string{"2024-01-05 00:00", "2024-01-06 00:00", "2024-01-07 00:00", "2024-01-12 00:00"}},
		{"0 0 * * FRI-SUN", []string{"2024-01-05 00:00", "2024-01-06 00:00", "2024-01-07 00:00", "2024-01-12 00:00"}},
		// Day rule: * in either day field means both must match (Mondays
		// that are odd days: Jan 1, 15, 29, Feb 5, 19).
		{"0 0 */2 * 1", []string{"2024-01-15 00:00", "2024-01-29 00:00", "2024-02-05 00:00", "2024-02-19 00:00"}},
		// The 13th when it is a Sunday, Tuesday, Thursday or Saturday.
		{"0 0 13 * */2", []string{"2024-01-13 00:00", "2024-02-13 00:00", "2024-04-13 00:00", "2024-06-13 00:00"}},
		{"0 0 * * 1", []string{"2024-01-08 00:00", "2024-01-15 00:00"}},
		// Both restricted: either matches, so 1-31 is every day.
		{"0 0 1-31 * 1", []string{"2024-01-02 00:00", "2024-01-03 00:00"}},
		// Both restricted, never a 30 February, but every Monday of February.
		{"0 0 30 2 1", []string{"2024-02-05 00:00", "2024-02-12 00:00", "2024-02-19 00:00", "2024-02-26 00:00", "2025-02-03 00:00"}},
		// Macros.
		{"@yearly", []string{"2025-01-01 00:00", "2026-01-01 00:00"}},
		{"@annually", []string{"2025-01-01 00:00"}},
		{"@monthly", []string{"2024-02-01 00:00", "2024-03-01 00:00"}},
		{"@weekly", []string{"2024-01-07 00:00", "2024-01-14 00:00"}},
		{"@daily", []string{"2024-01-02 00:00", "2024-01-03 00:00"}},
		{"@midnight", []string{"2024-01-02 00:00"}},
		{"@hourly", []string{"2024-01-01 01:00", "2024-01-01 02:00"}},
		// Leap days.
		{"0 0 29 2 *", []string{"2024-02-29 00:00", "2028-02-29 00:00"}},
		{"59 23 31 12 *", []string{"2024-12-31 23:59", "2025-12-31 23:59"}},
		// Day 31 only in long months.
		{"0 0 31 * *", []string{"2024-01-31 00:00", "2024-03-31 00:00", "2024-05-31 00:00", "2024-07-31 00:00"}},
	}
	for _, tt := range tests {
		s, err := Parse("cron:"+tt.expr, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		at := start
		for i, w := range tt.want {
			want, err := time.Parse("2006-01-02 15:04", w)
			if err != nil {
				t.Fatal(err)
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

// TestCronNextEdges checks sub-minute starts, the years schedules fire in (1970-2099),
// and instants before 1970.
func TestCronNextEdges(t *testing.T) {
	s, err := Parse("cron:*/5 * * * *", nil)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 10, 5, 0, 0, time.UTC)
	for _, tt := range []struct {
		from, want time.Time
	}{
		{base.Add(-time.Nanosecond), base},
		{base, base.Add(5 * time.Minute)},
		{base.Add(time.Nanosecond), base.Add(5 * time.Minute)},
		{base.Add(4*time.Minute + 59*time.Second + 999999999), base.Add(5 * time.Minute)},
		{time.Time{}, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(1900, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2099, 12, 31, 23, 55, 0, 0, time.UTC), time.Time{}},
		{time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
	} {
		if got := s.Next(tt.from); !got.Equal(tt.want) {
			t.Errorf("Next(%s) = %s, want %s", tt.from, got, tt.want)
		}
	}
	// The result is in the schedule's location, with no monotonic reading.
	ny := loadLocation(t, "America/New_York")
	s, err = Parse("cron:0 9 * * *", ny)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Next(time.Now())
	if got.Location() != ny || got.String() != got.Round(0).String() {
		t.Errorf("Next(now) = %s, want a time in %s without a monotonic reading", got, ny)
	}
}

// TestParseCronErrors checks every rejection of the cron: form, and that the
// message names the field and the value.
func TestParseCronErrors(t *testing.T) {
	tests := []struct {
		expr string
		want string // the message, or a part of it
	}{
		{"cron:61 * * * *", `cron: minute field "61": value 61 out of range 0-59`},
		{"cron:0 24 * * *", `cron: hour field "24": value 24 out of range 0-23`},
		{"cron:0 0 0 * *", `cron: day-of-month field "0": value 0 out of range 1-31`},
		{"cron:0 0 32 * *", `cron: day-of-month field "32": value 32 out of range 1-31`},
		{"cron:0 0 * 0 *", `cron: month field "0": value 0 out of range 1-12`},
		{"cron:0 0 * 13 *", `cron: month field "13": value 13 out of range 1-12`},
		{"cron:0 0 * * 8", `cron: day-of-week field "8": value 8 out of range 0-7`},
		{"cron:1,61 * * * *", `cron: minute field "1,61": element "61": value 61 out of range 0-59`},
		{"cron:0-60 * * * *", `cron: minute field "0-60": value 60 out of range 0-59`},
		{"cron:99999999999999999999 * * * *", `cron: minute field "99999999999999999999": value 99999999999999999999 out of range 0-59`},
		{"cron:0 0 * * 5-1", `cron: day-of-week field "5-1": reversed range`},
		{"cron:0 0 * NOV-MAR *", `cron: month field "NOV-MAR": reversed range`},
		{"cron:30-10 * * * *", `cron: minute field "30-10": reversed range`},
		{"cron:0 0 * * 7-1", `cron: day-of-week field "7-1": reversed range`},
		{"cron:5/10 * * * *", `cron: minute field "5/10": step without a range`},
		{"cron:0 0 * JAN/2 *", `cron: month field "JAN/2": step without a range`},
		{"cron:*/0 * * * *", `cron: minute field "*/0": step 0 must be at least 1`},
		{"cron:0 0 1-31/0 * *", `cron: day-of-month field "1-31/0": step 0 must be at least 1`},
		{"cron:*/60 * * * *", `cron: minute field "*/60": step 60 is larger than the field's span 0-59`},
		{"cron:0 */24 * * *", `cron: hour field "*/24": step 24 is larger than the field's span 0-23`},
		{"cron:0 0 */31 * *", `cron: day-of-month field "*/31": step 31 is larger than the field's span 1-31`},
		{"cron:0 0 * */12 *", `cron: month field "*/12": step 12 is larger than the field's span 1-12`},
		{"cron:0 0 * * */8", `cron: day-of-week field "*/8": step 8 is larger than the field's span 0-7`},
		{"cron:*/ * * * *", `cron: minute field "*/": missing step`},
		{"cron:*/x * * * *", `cron: minute field "*/x": step "x" is not a number`},
		{"cron:*/5/2 * * * *", `cron: minute field "*/5/2": step "5/2" is not a number`},
		{"cron:0 1-2-3 * * *", `cron: hour field "1-2-3": malformed range "1-2-3"`},
		{"cron:1,,2 * * * *", `cron: minute field "1,,2": element "": empty element`},
		{"cron:1, * * * *", `cron: minute field "1,": element "": empty element`},
		{"cron:,1 * * * *", `cron: minute field ",1": element "": empty element`},
		{"cron:-5 * * * *", `cron: minute field "-5": range "-5" has no start`},
		{"cron:1- * * * *", `cron: minute field "1-": range "1-" has no end`},
		{"cron:x * * * *", `cron: minute field "x": "x" is not a number`},
		{"cron:0 JAN * * *", `cron: hour field "JAN": "JAN" is not a number`},
		{"cron:0 0 * FOO *", `cron: month field "FOO": "FOO" is not a number or a month name (JAN-DEC)`},
		{"cron:0 0 * JANUARY *", `cron: month field "JANUARY": "JANUARY" is not a number or a month name`},
		{"cron:0 0 * * FOO", `cron: day-of-week field "FOO": "FOO" is not a number or a day name (SUN-SAT)`},
		{"cron:0 0 * * MONDAY", `cron: day-of-week field "MONDAY": "MONDAY" is not a number or a day name`},
		{"cron:*-5 * * * *", `cron: minute field "*-5": "*" cannot be part of a range`},
		{"cron:0 0 ? * *", `cron: day-of-month field "?": "?" is not supported (Quartz syntax)`},
		{"cron:0 0 * * ?", `cron: day-of-week field "?": "?" is not supported`},
		{"cron:0 0 1~15 * *", `cron: day-of-month field "1~15": "1~15": random ranges ("~")`},
		{"cron:0 0 * * * *", `cron: expression "0 0 * * * *" has 6 fields; want 5 (minute hour day-of-month month day-of-week) or an @macro; seconds and years fields are not supported`},
		{"cron:0 0 0 1 1 * 2030", `cron: expression "0 0 0 1 1 * 2030" has 7 fields`},
		{"cron:0 0 * *", `cron: expression "0 0 * *" has 4 fields`},
		{"cron:", `cron: empty expression`},
		{"cron: \t ", `cron: empty expression`},
		{"cron:@reboot", `cron: @reboot is not supported`},
		{"cron:@weekdays", `cron: unknown macro "@weekdays"`},
		{"cron:@DAILY", `cron: unknown macro "@DAILY"`},
		{"cron:@daily 5", `cron: @daily takes no fields, but "5" follows it`},
		{"cron:0 3\n* * *", `cron: expression "0 3\n* * *" contains '\n'`},
		// Schedules that can never fire.
		{"cron:0 0 30 2 *", `cron: expression "0 0 30 2 *" never fires: no month in month field "2" has a day in day-of-month field "30"`},
		{"cron:0 0 31 4,6,9,11 *", `never fires`},
		{"cron:0 0 30,31 FEB *", `never fires`},
		{"cron:0 0 30 2 */2", `never fires`}, // the day fields are ANDed
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr, nil)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", tt.expr, Describe(s), tt.want)
			continue
		}
		if s != nil {
			t.Errorf("Parse(%q) returned a schedule and an error", tt.expr)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.expr, err, tt.want)
		}
	}
	// Near misses that are valid.
	for _, expr := range []string{
		"cron:0 3 * * * ",   // trailing blanks
		"cron:0 0 */30 2 *", // */30 is 1,31 and 1 February exists
		"cron:0 0 30 2 1",   // both day fields restricted: Mondays of February
		"cron:0 0 29 2 *",   // leap days
		"cron:0 0 31 1-12/2 *",
	} {
		if _, err := Parse(expr, nil); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

// TestCronMatchesReferenceUTC compares Next with a minute-by-minute walk for
// many expressions over two months in UTC, where the day rules matter most.
func TestCronMatchesReferenceUTC(t *testing.T) {
	exprs := []string{
		"* * * * *", "*/7 */5 * * *", "0 0 */2 * 1", "0 0 13 * 5", "0 12 13 * */2", "0 0 1-7 * 1",
		"15 3 */10 */2 0-2", "0 0 29-31 * *", "0 0 * * 6,7", "59 23 * FEB *",
		"@weekly", "@monthly", "30 4 1,15 * 5",
	}
	from := time.Date(2024, 1, 25, 0, 0, 0, 0, time.UTC)
	to := from.Add(70 * 24 * time.Hour)
	for _, expr := range exprs {
		spec, err := parseCronSpec(expr)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse("cron:"+expr, nil)
		if err != nil {
			t.Fatal(err)
		}
		horizon := to.Add(40 * 24 * time.Hour)
		fires := referenceFires(&spec, time.UTC, from.Add(-time.Hour), horizon)
		for at := from; at.Before(to); at = at.Add(13 * time.Minute) {
			checkAgainstReference(t, "cron:"+expr, s, fires, horizon, at)
			checkAgainstReference(t, "cron:"+expr, s, fires, horizon, at.Add(29*time.Second))
		}
	}
}
