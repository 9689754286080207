package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runEnv runs the command line in-process with the environment env (no
// Redis unless env has REDIS_URL).
func runEnv(env map[string]string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	return out.String(), errb.String(), code
}

// TestExplainGolden compares explain's output with testdata/explain/*.golden
// (go test -run TestExplainGolden -update rewrites them): the words and the
// zone, then the instants in the zone and in the local zone ($TZ), with
// the daylight-saving transitions and what cronie's policy did at them.
func TestExplainGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		tz   string // the local zone
		args []string
	}{
		{"weekdays_berlin", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-24T12:00:00Z", "-n", "6", "cron:0 8 * * 1-5"}},
		{"spring_fixed_moved", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-26T00:00:00Z", "-n", "4", "cron:30 2 * * *"}},
		{"spring_fixed_at_gap_start", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-27T12:00:00Z", "-n", "2", "daily:02:00"}},
		{"spring_wildcard_at_gap_end", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-28T00:30:00Z", "-n", "2", "cron:0 * * * *"}},
		{"spring_fixed_late_in_gap", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-27T01:58:00Z", "-n", "3", "cron:59 2 * * *"}},
		{"spring_wildcard_hour_gone", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-27T01:00:00Z", "-n", "3", "cron:*/20 2 * * *"}},
		{"spring_wildcard_skipped", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-03-28T00:00:00Z", "-n", "4", "hourly:30"}},
		{"spring_every", "America/New_York", []string{"-tz", "Europe/Berlin", "-from", "2027-03-28T00:30:00Z", "-n", "3", "every:1h"}},
		{"fall_wildcard_again", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-10-30T23:00:00Z", "-n", "4", "hourly:30"}},
		{"fall_fixed_once", "UTC", []string{"-tz", "Europe/Berlin", "-from", "2027-10-30T00:00:00Z", "-n", "3", "cron:30 2 * * *"}},
		{"first_across_transition", "UTC", []string{"-tz", "America/New_York", "-from", "2027-03-13T20:00:00Z", "-n", "2", "daily:09:00"}},
		{"once_ends", "Asia/Tokyo", []string{"-n", "3", "-from", "2026-01-01T00:00:00Z", "at:1800000000"}},
		{"ended", "UTC", []string{"-from", "2030-01-01T00:00:00Z", "at:1800000000"}},
		{"json", "Europe/Berlin", []string{"-o", "json", "-n", "2", "-tz", "Europe/London", "-from", "2027-03-27T00:00:00Z", "daily:01:30"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runEnv(map[string]string{"TZ": tc.tz}, append([]string{"explain"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			path := filepath.Join("testdata", "explain", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestExplainGolden -update writes it)", err)
			}
			if out != string(want) {
				t.Errorf("explain %q:\n%s\nwant (%s):\n%s", tc.args, out, path, want)
			}
		})
	}
}

// TestExplainInstants checks explain against the schedule itself: the
// words are crontab.Describe's, and each line is the next instant after
// the one before, in the zone and in the local zone.
func TestExplainInstants(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	const expr = "cron:*/20 9-10 * * 1-5"
	from := time.Date(2027, 3, 25, 0, 0, 0, 0, time.UTC)
	out, errs, code := runEnv(map[string]string{"TZ": "Asia/Tokyo"}, "explain", "-tz", "Europe/Berlin", "-n", "25", "-from", from.Format(time.RFC3339), expr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	s, err := crontab.Parse(expr, berlin)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(crontab.Describe(s), " (Europe/Berlin)") + ", Europe/Berlin"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if len(lines) != 26 {
		t.Fatalf("%d lines, want the words and 25 instants:\n%s", len(lines), out)
	}
	at := from
	marked := 0
	for _, l := range lines[1:] {
		at = s.Next(at)
		f := strings.Fields(l)
		if got := strings.Join(f[:3], " "); got != at.In(berlin).Format(instantLayout) {
			t.Errorf("line %q: want %s in Berlin", l, at.In(berlin).Format(instantLayout))
		}
		if got := strings.Join(f[3:6], " "); got != at.In(tokyo).Format(instantLayout) {
			t.Errorf("line %q: want %s in Tokyo", l, at.In(tokyo).Format(instantLayout))
		}
		if strings.Contains(l, "<- DST: CET -> CEST (+01:00 -> +02:00)") {
			marked++
			if _, off := at.In(berlin).Zone(); off != 7200 {
				t.Errorf("line %q marked, but not the first in CEST", l)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d lines marked, want the first after 2027-03-28 02:00 CET:\n%s", marked, out)
	}
}

// TestExplainOffline: explain builds no Redis client, so a Redis URL that
// does not even parse does not stop it.
func TestExplainOffline(t *testing.T) {
	out, errs, code := runEnv(map[string]string{"REDIS_URL": "bogus://%%"}, "explain", "-n", "1", "-from", "2026-01-01T00:00:00Z", "every:1h")
	if code != 0 || !strings.Contains(out, "2026-01-01 01:00:00 UTC") {
		t.Errorf("explain with a bad REDIS_URL: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code := runEnv(map[string]string{"REDIS_URL": "bogus://%%"}, "list"); code != exitUsage || !strings.Contains(errs, "-redis") {
		t.Errorf("list with a bad REDIS_URL: exit %d, stderr %q; want the URL refused", code, errs)
	}
}

// TestExplainErrors: a bad expression, zone, -n or -from is a usage error
// (exit 2) that names it, and prints nothing on stdout.
func TestExplainErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cron:61 * * * *"}, `explain: expression "cron:61 * * * *": cron: minute field "61"`},
		{[]string{"weekly:monday"}, `explain: expression "weekly:monday": unknown expression form "weekly:"`},
		{[]string{"-tz", "Mars/Base", "every:1h"}, `explain: -tz "Mars/Base": unknown time zone Mars/Base`},
		{[]string{"-n", "0", "every:1h"}, `explain: -n 0: want 1 to 1000`},
		{[]string{"-n", "1001", "every:1h"}, `explain: -n 1001: want 1 to 1000`},
		{[]string{"-from", "yesterday", "every:1h"}, `explain: -from "yesterday": want an RFC 3339 time`},
		{[]string{}, `explain: want EXPRESSION`},
	} {
		out, errs, code := runEnv(nil, append([]string{"explain"}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("explain %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
		if strings.Contains(errs, "crontab: crontab:") {
			t.Errorf("explain %q: doubled prefix: %q", tc.args, errs)
		}
	}
}
