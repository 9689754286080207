package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// TestVerbose: -v prints each task and job type, one a line in the order
// of the generated file (package path, then type name, whatever the
// order of the sources), with its schedule in the runtime's words and its
// zone; with -check too, which writes nothing.
func TestVerbose(t *testing.T) {
	t.Parallel()
	words := func(expr, tz string) string {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Fatal(err)
		}
		s, err := schedule.Parse(expr, loc)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(schedule.Describe(s), " ("+tz+")") + ", " + tz
	}
	type row struct{ name, expr, tz string }
	for _, tc := range []struct {
		name string
		args []string
		want []row
	}{
		{"multipkg", []string{"-v"}, []row{
			{"alpha", "every:30", "UTC"}, {"zeta", "every:1h", "UTC"}, // example.com/multipkg/alpha: Alpha, Zeta
			{"mail", "", ""}, // .../beta/tasks
			{"gamma-mail", "daily:23:59", "UTC"},
		}},
		{"grouped", []string{"-v", "-check"}, []row{
			{"digest", "every:5m", "UTC"}, {"once", "at:1893456000", "UTC"}, {"parenthesized", "hourly:30", "UTC"},
			{"report", "cron:0 8 * * 1-5", "Europe/Berlin"}, {"resize", "", ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyCase(t, tc.name)
			genDir, args := findGenerate(t, dir) // the case's go:generate line
			code, stdout, stderr := runIn(t, genDir, append(tc.args, args...)...)
			if len(tc.args) > 1 { // -check
				if code != 1 || !strings.Contains(stderr, "is missing") {
					t.Errorf("-check: exit %d, stderr %q; want the file missing", code, stderr)
				}
			} else if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("-v printed %d lines, want %d:\n%s", len(lines), len(tc.want), stdout)
			}
			for i, w := range tc.want {
				f := strings.Fields(lines[i])
				if len(f) == 0 || f[0] != w.name {
					t.Errorf("line %d %q: want task %q", i, lines[i], w.name)
					continue
				}
				rest := strings.Join(f[1:], " ")
				want := "(job type) runs when enqueued"
				if w.expr != "" {
					want = strings.Join(strings.Fields(w.expr+" "+words(w.expr, w.tz)), " ")
				}
				if rest != want {
					t.Errorf("line %d %q: want %q after the name", i, lines[i], want)
				}
			}
		})
	}
}
