package main

import (
	"context"
	"fmt"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// statusNote says what a task's status does to the instants next lists.
func statusNote(st crontab.Status) string {
	switch st {
	case crontab.StatusPaused:
		return "paused: these fires are skipped (each skip is counted) until it is resumed"
	case crontab.StatusDisabled:
		return "disabled: it does not fire; enabled now, it would fire at these instants"
	case crontab.StatusActive, "":
		return "active"
	}
	return fmt.Sprintf("%q (not a status the schedulers know: they treat it as active)", string(st))
}

func cmdNext(ctx context.Context, c *cli, o *cmdOpts, args []string) error {
	if err := checkCount("next", o.n); err != nil {
		return err
	}
	ts, err := c.inspector.TaskSchedule(ctx, args[0])
	if err != nil {
		return err
	}
	// From the instant the schedulers will claim (next_run), or from Redis
	// time when it holds none or the task is disabled (enabling it queues
	// it at its next instant after now).
	first := ts.NextRun
	if ts.Status == crontab.StatusDisabled {
		first = time.Time{}
	}
	list := instants(ts.Expression, ts.Schedule, ts.Location, c.localZone(), ts.Now, first, o.n)
	if c.output == "json" {
		return c.out(struct {
			Task        string    `json:"task"`
			Expression  string    `json:"expression"`
			TZ          string    `json:"tz"`
			Description string    `json:"description"`
			Status      string    `json:"status"`
			Now         time.Time `json:"now"`
			Instants    []instant `json:"instants"`
		}{ts.Name, ts.Expression, ts.Location.String(), description(ts.Schedule, ts.Location), string(ts.Status), ts.Now,
			append([]instant{}, list...)}, nil)
	}
	fmt.Fprintf(c.stdout, "task %q: %s: %s\n", ts.Name, ts.Expression, description(ts.Schedule, ts.Location))
	fmt.Fprintf(c.stdout, "status: %s\n", statusNote(ts.Status))
	if len(list) > 0 && list[0].At.Before(ts.Now) {
		fmt.Fprintf(c.stdout, "(the first is due: a scheduler is about to claim it)\n")
	}
	return printInstants(c.stdout, list, o.n)
}
