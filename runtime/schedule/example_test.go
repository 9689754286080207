package schedule_test

import (
	"fmt"
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// Schedules are computed in their zone and follow cronie's daylight-saving
// policy. On 8 March 2026 New York's clocks jump from 02:00 to 03:00: a
// fixed-time job set for 02:30 fires at the jump, while a job with * in its
// hour field (hourly:) follows real time and has no 02:30 that day.
func ExampleParse_daylightSaving() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		fmt.Println(err)
		return
	}
	from := time.Date(2026, time.March, 8, 0, 0, 0, 0, ny)
	for _, expr := range []string{"daily:02:30", "hourly:30"} {
		s, err := schedule.Parse(expr, ny)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(expr, ":")
		t := from
		for range 3 {
			t = s.Next(t)
			fmt.Print(" ", t.Format("Jan 2 15:04 MST"))
		}
		fmt.Println()
	}

	// Output:
	// daily:02:30: Mar 8 03:00 EDT Mar 9 02:30 EDT Mar 10 02:30 EDT
	// hourly:30: Mar 8 00:30 EST Mar 8 01:30 EST Mar 8 03:30 EDT
}

// An at: schedule fires once; after its instant Next returns the zero
// Time, and the scheduler removes the task once it ran.
func ExampleIsOnce() {
	s, err := schedule.Parse("at:1719590400", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	before := time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(schedule.IsOnce(s), schedule.Describe(s))
	fmt.Println(s.Next(before))
	fmt.Println(s.Next(s.Next(before)).IsZero())

	// Output:
	// true once at 2024-06-28T16:00:00Z
	// 2024-06-28 16:00:00 +0000 UTC
	// true
}

// Describe explains a schedule in words, as the crontab command and the
// dashboard show it next to the expression. The calendar rules L, W and #
// read like any other field.
func ExampleDescribe() {
	for _, expr := range []string{
		"every:90s", "daily:08:00", "cron:0 8 * * 1-5", "cron:*/15 9-17 * * *", "cron:* 0 * * *",
		"cron:0 0 L * *", "cron:0 9 * * 5#3", "cron:30 17 LW * *", "cron:0,7,13 1,5 * * *",
	} {
		s, err := schedule.Parse(expr, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-22s %s\n", expr, schedule.Describe(s))
	}

	// Output:
	// every:90s              every 1m30s
	// daily:08:00            at 08:00 every day
	// cron:0 8 * * 1-5       at 08:00, Monday through Friday
	// cron:*/15 9-17 * * *   every 15 minutes from 09:00 through 17:59
	// cron:* 0 * * *         every minute from 00:00 through 00:59
	// cron:0 0 L * *         at 00:00 on the last day of the month
	// cron:0 9 * * 5#3       at 09:00 on the third Friday of the month
	// cron:30 17 LW * *      at 17:30 on the last weekday of the month
	// cron:0,7,13 1,5 * * *  at minutes 0,7,13 past hours 1,5
}
