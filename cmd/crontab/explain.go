package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// The instants of a schedule, shared by explain and next: each in the
// schedule's zone and in the local zone, with daylight-saving transitions
// marked.

// maxInstants bounds -n of explain and next.
const maxInstants = 1000

// instantLayout is a time with its zone's abbreviation.
const instantLayout = "2006-01-02 15:04:05 MST"

// instant is one fire time of a schedule, as explain and next print it.
type instant struct {
	At    time.Time `json:"time"`  // in the schedule's zone
	Local time.Time `json:"local"` // in the local zone
	// DST, when not empty, says how a daylight-saving transition since
	// the previous instant shows in this one.
	DST string `json:"dst,omitempty"`
}

// checkCount validates the -n flag of a command.
func checkCount(cmd string, n int) error {
	if n < 1 || n > maxInstants {
		return usagef("%s: -n %d: want 1 to %d", cmd, n, maxInstants)
	}
	return nil
}

// localZone is the zone of the CLI process: $TZ when it names a zone
// (through getenv, so tests can set it), else time.Local.
func (c *cli) localZone() *time.Location {
	if tz := c.getenv("TZ"); tz != "" {
		if loc, err := time.LoadLocation(strings.TrimPrefix(tz, ":")); err == nil {
			return loc
		}
	}
	return time.Local
}

// instants returns up to n fire times of s after from, the first being
// first when it is not zero (a task's next_run), in loc and in local, each
// marked when the UTC offset changed since the one before it (from, for
// the first) or the daylight-saving policy moved or dropped a fire.
func instants(expr string, s crontab.Schedule, loc, local *time.Location, from, first time.Time, n int) []instant {
	var out []instant
	prev, t := from.In(loc), first
	for len(out) < n {
		if t.IsZero() {
			if t = s.Next(prev); t.IsZero() {
				break
			}
		}
		t = t.In(loc)
		out = append(out, instant{At: t, Local: t.In(local), DST: dstNote(expr, loc, prev, t)})
		prev, t = t, time.Time{}
	}
	return out
}

// printInstants writes the instants as aligned columns, or a line saying
// there are none.
func printInstants(w io.Writer, list []instant, n int) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, in := range list {
		line := in.At.Format(instantLayout) + "\t" + in.Local.Format(instantLayout)
		if in.DST != "" {
			line += "\t<- DST: " + in.DST
		}
		fmt.Fprintln(tw, line)
	}
	switch {
	case len(list) == 0:
		fmt.Fprintln(tw, "(no instants left: the schedule has ended)")
	case len(list) < n:
		fmt.Fprintf(tw, "(no more instants: the schedule ends after %d)\n", len(list))
	}
	return tw.Flush()
}

// fmtOffset formats a UTC offset in seconds as +01:00.
func fmtOffset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d:%02d", sign, sec/3600, sec%3600/60)
}

// dstNote describes a daylight-saving transition between the instants prev
// and cur of expr in loc: "" when both have the same zone, else the change,
// e.g. "CET -> CEST (+01:00 -> +02:00)", and what cronie's policy (see
// runtime/schedule) did to the fires at it.
func dstNote(expr string, loc *time.Location, prev, cur time.Time) string {
	pn, po := prev.Zone()
	cn, co := cur.Zone()
	if pn == cn && po == co {
		return ""
	}
	note := fmt.Sprintf("%s -> %s (%s -> %s)", pn, cn, fmtOffset(po), fmtOffset(co))
	if policy := dstPolicy(expr, loc, prev, cur); policy != "" {
		note += "; " + policy
	}
	return note
}

// dstPolicy says what the daylight-saving policy did at the one transition
// between prev and cur (none said when there were more): a fire whose wall
// time the clock skipped, moved to the jump (a fixed-time job) or dropped
// (a job that follows real time); a wall time the clock repeated, fired
// again (a job that follows real time) or not (a fixed-time job). It
// compares the schedule with the same expression in fixed zones of the
// offsets before and after the transition, which have none.
func dstPolicy(expr string, loc *time.Location, prev, cur time.Time) string {
	start, _ := cur.ZoneBounds()
	if start.IsZero() || !start.After(prev) {
		return ""
	}
	pn, po := prev.Zone()
	cn, co := cur.Zone()
	if _, before := start.Add(-time.Nanosecond).In(loc).Zone(); before != po {
		return "" // more than one transition since prev
	}
	shift := time.Duration(co-po) * time.Second
	const hm = "15:04 MST"
	switch {
	case shift > 0: // spring forward: the wall times [start-in-po, +shift) do not exist
		old, err := crontab.Parse(expr, time.FixedZone(pn, po))
		if err != nil {
			return ""
		}
		f := old.Next(prev)
		if f.IsZero() || f.Before(start) || f.Sub(start) >= shift {
			return "" // the fire the old offset wants is not in the gap
		}
		// At the jump, a fire whose own wall time is not on the schedule
		// is the gap's fire moved there (a fixed-time job); a fire that is
		// (or one later) follows real time and the gap's fire is skipped.
		if cur.Equal(start) {
			if now, err := crontab.Parse(expr, time.FixedZone(cn, co)); err == nil && !now.Next(cur.Add(-time.Nanosecond)).Equal(cur) {
				return fmt.Sprintf("%s is not on the clock: fired at the jump", f.Format(hm))
			}
		}
		return fmt.Sprintf("%s is not on the clock: skipped", f.Format(hm))
	case shift < 0: // fall back: the wall times [start-in-co, -shift) come twice
		if cur.Sub(start) < -shift {
			return fmt.Sprintf("%s again: the clock went back", cur.Format(hm))
		}
		again, err := crontab.Parse(expr, time.FixedZone(cn, co))
		if err != nil {
			return ""
		}
		if g := again.Next(start.Add(-time.Nanosecond)); !g.IsZero() && g.Before(cur) && g.Sub(start) < -shift {
			return fmt.Sprintf("%s not repeated: a fixed-time job fires once per wall time", g.Format(hm))
		}
	}
	return ""
}

// description is the schedule's words (crontab.Describe) and its zone, e.g.
// "at 08:00, Monday through Friday, Europe/Berlin".
func description(s crontab.Schedule, loc *time.Location) string {
	d := crontab.Describe(s)
	d = strings.TrimSuffix(d, " ("+loc.String()+")") // a description that names the zone already
	return d + ", " + loc.String()
}

// explainOpts are the flags of explain.
type explainOpts struct {
	tz   string
	from string
}

func cmdExplain(_ context.Context, c *cli, o *cmdOpts, args []string) error {
	expr := args[0]
	if err := checkCount("explain", o.n); err != nil {
		return err
	}
	loc, err := time.LoadLocation(o.explain.tz)
	if err != nil {
		return usagef("explain: -tz %q: %v", o.explain.tz, err)
	}
	from := time.Now()
	if o.explain.from != "" {
		if from, err = time.Parse(time.RFC3339, o.explain.from); err != nil {
			return usagef("explain: -from %q: want an RFC 3339 time such as 2026-03-28T00:00:00Z: %v", o.explain.from, err)
		}
	}
	s, err := crontab.Parse(expr, loc)
	if err != nil {
		msg := err.Error()
		if !strings.Contains(msg, strconv.Quote(expr)) {
			msg = fmt.Sprintf("expression %q: %s", expr, msg)
		}
		return usagef("explain: %s", msg)
	}
	list := instants(expr, s, loc, c.localZone(), from, time.Time{}, o.n)
	if c.output == "json" {
		return c.out(struct {
			Expression  string    `json:"expression"`
			TZ          string    `json:"tz"`
			Description string    `json:"description"`
			From        time.Time `json:"from"`
			Instants    []instant `json:"instants"`
		}{expr, loc.String(), description(s, loc), from, append([]instant{}, list...)}, nil)
	}
	fmt.Fprintln(c.stdout, description(s, loc))
	return printInstants(c.stdout, list, o.n)
}
