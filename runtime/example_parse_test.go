package runtime_test

import (
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Parse turns a schedule expression into a Schedule, whose Next gives the
// fire times. The scheduler computes them the same way.
func ExampleParse() {
	from := time.Date(2026, time.March, 27, 10, 20, 0, 0, time.UTC) // a Friday
	for _, expr := range []string{"every:15m", "hourly:05", "cron:0 9 * * MON-FRI"} {
		s, err := crontab.Parse(expr, nil) // nil: UTC
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s (%s):", expr, crontab.Describe(s))
		t := from
		for range 3 {
			t = s.Next(t)
			fmt.Print(" ", t.Format("Mon 15:04"))
		}
		fmt.Println()
	}

	_, err := crontab.Parse("every:0s", nil)
	fmt.Println(err)

	// Output:
	// every:15m (every 15m): Fri 10:30 Fri 10:45 Fri 11:00
	// hourly:05 (at minute 5 past every hour): Fri 11:05 Fri 12:05 Fri 13:05
	// cron:0 9 * * MON-FRI (at 09:00, Monday through Friday): Mon 09:00 Tue 09:00 Wed 09:00
	// every: interval "0s" must be positive
}
