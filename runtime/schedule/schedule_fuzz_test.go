package schedule

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics or hangs, that it returns either
// a schedule or an error, and that a schedule's Next is strictly after its
// argument and monotonic, from starts around daylight-saving transitions.
// For cron, daily: and hourly: schedules (calendar rules included) it also
// compares Next with the minute-by-minute reference around one transition
// per zone.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"every:30s", "every:60", "every:5m", "every:1h", "every:0", "every:-1", "every:1.5", "every:8785h",
		"daily:03:00", "daily:3:00", "daily:24:00", "hourly:30", "hourly:60",
		"at:1719590400", "at:0", "at:1719590400000",
		"cron:*/5 * * * *", "cron:0 9 * * 1-5", "cron:0 0 */2 * 1", "cron:30 4 1,15 * 5",
		"cron:0 0 * * FRI-SUN", "cron:0 0 1 jan,jul *", "cron:23 0-23/2 * * *", "cron:@weekly",
		"cron:0 0 30 2 *", "cron:0 0 29 2 1", "cron:0 0 29 2 */7", "cron:5/10 * * * *", "cron:0 0 * * 5-1",
		"cron:0 0 ? * *", "cron:0 0 L * *", "cron:0 0 * * 5#3", "cron:0 0 1~5 * *", "cron:0 0 * * * *",
		"cron:1,,2 * * * *", "cron:1-2-3 * * * *", "cron:@reboot", "cron:\t0\t3 * * *",
		"cron:0 0 LW * *", "cron:0 0 15W * *", "cron:30 0 28W,1W * *", "cron:30 2 * * 0#2", "cron:*/20 1 * * 0#1",
		"cron:30 1 L * 0L", "cron:0 0 */2 * 5L", "cron:0 0 32W * *", "cron:0 0 * * 5#6", "cron:0 0 L-3 * *",
		"cron:0 0 1-L * *", "cron:0 0 * * 5W", "cron:0 0 * * L", "cron:0 0 */20 * 1L",
		"weekly:1", "", ":", "cron:" + strings.Repeat("1,", 120) + "1 * * * *",
	} {
		f.Add(seed)
	}
	zones := []*time.Location{time.UTC}
	for _, name := range []string{"America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo", "Africa/Cairo"} {
		zones = append(zones, loadLocation(f, name))
	}
	refTransition := map[string]time.Time{
		"America/New_York":    time.Date(2024, 11, 3, 6, 0, 0, 0, time.UTC),   // fall back
		"Australia/Lord_Howe": time.Date(2024, 10, 5, 15, 30, 0, 0, time.UTC), // spring forward
		"America/Sao_Paulo":   time.Date(2019, 2, 17, 2, 0, 0, 0, time.UTC),   // fall back at midnight
		"Africa/Cairo":        time.Date(2023, 4, 27, 22, 0, 0, 0, time.UTC),  // spring forward on the last Friday
	}
	// Ascending starts, around transitions of the zones above.
	var starts []time.Time
	for _, tr := range []time.Time{
		time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC),
		time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC),
		time.Date(2024, 4, 6, 15, 0, 0, 0, time.UTC),
		time.Date(2024, 10, 5, 15, 30, 0, 0, time.UTC),
		time.Date(2024, 11, 3, 6, 0, 0, 0, time.UTC),
	} {
		for d := -90 * time.Minute; d <= 90*time.Minute; d += 17 * time.Minute {
			starts = append(starts, tr.Add(d))
		}
	}
	f.Fuzz(func(t *testing.T, expr string) {
		for _, loc := range zones {
			s, err := Parse(expr, loc)
			if err != nil {
				if s != nil {
					t.Fatalf("Parse(%q) returned a schedule and error %v", expr, err)
				}
				if err.Error() == "" {
					t.Fatalf("Parse(%q) returned an empty error", expr)
				}
				continue
			}
			if s == nil {
				t.Fatalf("Parse(%q) returned neither a schedule nor an error", expr)
			}
			_ = Describe(s)
			if cs, ok := s.(*cronSchedule); ok && loc != time.UTC {
				// Around one transition of the zone, Next must agree with
				// the minute-by-minute reference.
				tr := refTransition[loc.String()]
				from, to := tr.Add(-3*time.Hour), tr.Add(3*time.Hour)
				horizon := to.Add(24 * time.Hour)
				fires := referenceFires(&cs.spec, loc, from.Add(-2*time.Hour), horizon)
				for at := from; at.Before(to); at = at.Add(13 * time.Minute) {
					checkAgainstReference(t, loc.String()+" "+expr, s, fires, horizon, at)
				}
			}
			var last time.Time
			for i, at := range starts {
				got := s.Next(at)
				if got.IsZero() {
					last = got
					continue
				}
				if !got.After(at) {
					t.Fatalf("%q in %s: Next(%s) = %s, not after it", expr, loc, at, got)
				}
				if i > 0 && (last.IsZero() || got.Before(last)) {
					t.Fatalf("%q in %s: Next(%s) = %s, but Next(%s) = %s", expr, loc, at, got, starts[i-1], last)
				}
				if again := s.Next(got); !again.IsZero() && !again.After(got) {
					t.Fatalf("%q in %s: Next(%s) = %s, not after it", expr, loc, got, again)
				}
				last = got
			}
		}
	})
}
