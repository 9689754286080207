package schedule

import (
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
)

// benchExpressions are typical schedules; cron is the same schedule as
// cronexpr text ("" when cronexpr has no equivalent).
var benchExpressions = []struct{ name, expr, zone, cron string }{
	{"every:30s", "every:30s", "UTC", ""},
	{"daily:03:00/London", "daily:03:00", "Europe/London", "0 3 * * *"},
	{"cron:*/5", "cron:*/5 * * * *", "UTC", "*/5 * * * *"},
	{"cron:0_9_*_*_1-5", "cron:0 9 * * 1-5", "UTC", "0 9 * * 1-5"},
	{"cron:0_0_L_*_*", "cron:0 0 L * *", "UTC", "0 0 L * *"},
	{"cron:0_9_*_*_5#3", "cron:0 9 * * 5#3", "UTC", "0 9 * * 5#3"},
}

// BenchmarkParse measures Parse, and cronexpr.Parse on the same cron text.
func BenchmarkParse(b *testing.B) {
	for _, bb := range benchExpressions {
		loc := loadLocation(b, bb.zone)
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bb.expr, loc); err != nil {
					b.Fatal(err)
				}
			}
		})
		if bb.cron == "" {
			continue
		}
		b.Run("cronexpr/"+bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cronexpr.Parse(bb.cron); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNext measures Next from a run of successive fires, and
// cronexpr's Next on the same cron text in the same zone.
func BenchmarkNext(b *testing.B) {
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, bb := range benchExpressions {
		loc := loadLocation(b, bb.zone)
		s, err := Parse(bb.expr, loc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			t := start
			for b.Loop() {
				if t = s.Next(t); t.IsZero() {
					t = start
				}
			}
		})
		if bb.cron == "" {
			continue
		}
		e := cronexpr.MustParse(bb.cron)
		b.Run("cronexpr/"+bb.name, func(b *testing.B) {
			b.ReportAllocs()
			t := start.In(loc)
			for b.Loop() {
				if t = e.Next(t); t.IsZero() {
					t = start.In(loc)
				}
			}
		})
	}
}
