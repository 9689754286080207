package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocrontab/crontab/internal/redistest"
)

// buildCrontab builds this command, for the tests that look at what the
// real process writes to its stderr (go-redis's own logger writes there,
// not to run's stderr).
func buildCrontab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crontab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// closedURL is a redis:// URL of a loopback port where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "redis://" + addr
}

// errorCase is one command line that must fail.
type errorCase struct {
	args []string
	url  string // REDIS_URL
	code int    // the exit status
	want string // the whole of stderr; "" to check only its shape
}

// TestErrorLines runs every error path of the command line through the built
// binary: each fails with a non-zero status and exactly one line on stderr
// per failure, starting with "crontab: " once, with nothing on stdout and no
// line of go-redis's logger. Every command gets a bad flag, a wrong number of
// arguments and an unreachable Redis from the loops below, so a new command
// is covered without a new row (give it arguments in validArgs when NAME is
// not one).
func TestErrorLines(t *testing.T) {
	t.Parallel()
	bin := buildCrontab(t)
	srv := redistest.Start(t) // an empty namespace: every name is unknown
	live, down := srv.URL(), closedURL(t)
	downAddr := strings.TrimPrefix(down, "redis://")
	unreachable := "crontab: cannot reach Redis at " + downAddr + " (connection refused); set -redis or REDIS_URL\n"
	usage := func(msg string) string { return "crontab: " + msg + "; run 'crontab --help' for usage\n" }

	// validArgs are arguments a command accepts, for the rows that must
	// get as far as Redis.
	validArgs := map[string][]string{}
	var cases []errorCase
	for _, cmd := range commands {
		args := validArgs[cmd.name]
		if args == nil {
			for range max(cmd.nargs, 1) {
				if cmd.nargs != 0 {
					args = append(args, "nosuch")
				}
			}
		}
		cases = append(cases,
			errorCase{args: append([]string{cmd.name, "-bogus"}, args...), url: live, code: 2,
				want: usage(cmd.name + ": flag provided but not defined: -bogus")})
		if !cmd.offline { // an offline command never dials Redis
			cases = append(cases, errorCase{args: append([]string{cmd.name}, args...), url: down, code: 1, want: unreachable})
		}
		switch {
		case cmd.nargs == 0:
			cases = append(cases, errorCase{args: []string{cmd.name, "extra"}, url: live, code: 2,
				want: usage(cmd.name + " takes no arguments")})
		case cmd.nargs > 0:
			cases = append(cases, errorCase{args: []string{cmd.name}, url: live, code: 2, want: usage(cmd.name + ": want " + cmd.args)},
				errorCase{args: append([]string{cmd.name, "x"}, args...), url: live, code: 2, want: usage(cmd.name + ": want " + cmd.args)})
		default:
			cases = append(cases, errorCase{args: []string{cmd.name}, url: live, code: 2, want: usage(cmd.name + ": want " + cmd.args)})
		}
	}
	cases = append(cases, []errorCase{
		// Unknown names and ids.
		{[]string{"show", "nosuch"}, live, 1, "crontab: task \"nosuch\": not found\n"},
		{[]string{"pause", "nosuch"}, live, 1, "crontab: set status of \"nosuch\": not found\n"},
		{[]string{"resume", "nosuch"}, live, 1, "crontab: set status of \"nosuch\": not found\n"},
		{[]string{"disable", "nosuch"}, live, 1, "crontab: set status of \"nosuch\": not found\n"},
		{[]string{"enable", "nosuch"}, live, 1, "crontab: set status of \"nosuch\": not found\n"},
		{[]string{"pause", "a", "b"}, live, 1, "crontab: set status of \"a\": not found\ncrontab: set status of \"b\": not found\n"},
		{[]string{"trigger", "nosuch"}, live, 1, "crontab: trigger \"nosuch\": not found\n"},
		{[]string{"remove", "nosuch"}, live, 1, "crontab: remove task \"nosuch\": not found\n"},
		{[]string{"job", "nosuch"}, live, 1, "crontab: job \"nosuch\": not found\n"},
		{[]string{"cancel", "nosuch"}, live, 1, "crontab: cancel \"nosuch\": no pending job: not found\n"},
		{[]string{"retry", "nosuch"}, live, 1, "crontab: retry \"nosuch\": no dead job: not found\n"},
		{[]string{"explain", "nosuch"}, down, 2, usage(`explain: expression "nosuch" has no form prefix; want every:, daily:, hourly:, cron: or at:`)},
		{[]string{"explain", "cron:61 * * * *"}, down, 2, ""},
		{[]string{"explain", "every:1h", "-tz", "Mars/Base"}, down, 2, usage(`explain: -tz "Mars/Base": unknown time zone Mars/Base`)},
		{[]string{"next", "nosuch"}, live, 1, ""},
		{[]string{"set", "k", "-type", "nosuch", "-expression", "every:1h"}, live, 1, ""},
		{[]string{"retry", "a", "b"}, live, 1, "crontab: retry \"a\": no dead job: not found\ncrontab: retry \"b\": no dead job: not found\n"},
		// Unreachable Redis, in every spelling of its address.
		{[]string{"-redis", "redis://127.0.0.1:1", "list"}, live, 1, "crontab: cannot reach Redis at 127.0.0.1:1 (connection refused); set -redis or REDIS_URL\n"},
		{[]string{"list", "-redis", "unix:///nonexistent/redis.sock"}, live, 1, "crontab: cannot reach Redis at /nonexistent/redis.sock (no such file or directory); set -redis or REDIS_URL\n"},
		{[]string{"-o", "json", "list"}, down, 1, unreachable},
		{[]string{"serve", "-addr", "127.0.0.1:0"}, down, 1, unreachable},
		// Bad flags and values.
		{nil, live, 2, ""}, // no command: checked below
		{[]string{"frobnicate"}, live, 2, usage(`unknown command "frobnicate"`)},
		{[]string{"help", "nope"}, live, 2, usage(`unknown command "nope"`)},
		{[]string{"-bogus", "list"}, live, 2, usage("flag provided but not defined: -bogus")},
		{[]string{"-redis"}, live, 2, usage("flag needs an argument: -redis")},
		{[]string{"-o", "yaml", "list"}, live, 2, usage(`-o "yaml": want table or json`)},
		{[]string{"list", "-process-ttl", "soon"}, live, 2, usage(`list: invalid value "soon" for flag -process-ttl: parse error`)},
		{[]string{"-redis", "http://x", "list"}, live, 2, ""},
		{[]string{"history", "x", "-limit", "-1"}, live, 2, usage("history: -limit -1: want 0 or more")},
		{[]string{"history", "x", "-limit", "many"}, live, 2, usage(`history: invalid value "many" for flag -limit: parse error`)},
		{[]string{"jobs", "-state", "lost"}, live, 2, usage(`jobs: -state "lost": want pending, running or dead`)},
		{[]string{"jobs", "-limit", "-1"}, live, 2, usage("jobs: -limit -1: want 0 or more")},
		{[]string{"serve", "-addr", "nope"}, live, 2, usage(`serve: -addr "nope": address nope: missing port in address`)},
		{[]string{"serve", "-addr", "0.0.0.0:0"}, live, 2, ""},
		{[]string{"serve", "-basic-auth", "nopass"}, live, 2, usage("serve: -basic-auth: want USER:PASSWORD")},
	}...)

	for _, tc := range cases {
		t.Run(strings.Join(append([]string{"crontab"}, tc.args...), " "), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append(os.Environ(), "REDIS_URL="+tc.url, "CRONTAB_NAMESPACE=", "CRONTAB_TOKEN=", "CRONTAB_BASIC_AUTH=")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if err != nil && code < 0 {
				t.Fatal(err)
			}
			errs := stderr.String()
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errs)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
			if tc.args == nil { // the help, then one usage line
				if !strings.HasSuffix(errs, "\n"+usage("no command")) || !strings.HasPrefix(errs, "crontab: the operator's command line") {
					t.Errorf("no command: stderr\n%s", errs)
				}
				return
			}
			if tc.want != "" && errs != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", errs, tc.want)
			}
			for _, l := range strings.SplitAfter(errs, "\n") {
				if l == "" {
					continue
				}
				if !strings.HasPrefix(l, "crontab: ") || !strings.HasSuffix(l, "\n") || strings.Count(l, "crontab:") != 1 {
					t.Errorf("stderr line %q: want one line starting with the one \"crontab: \"", l)
				}
			}
			if n := strings.Count(errs, "\n"); n != max(1, strings.Count(tc.want, "\n")) {
				t.Errorf("%d lines on stderr, want %d:\n%s", n, max(1, strings.Count(tc.want, "\n")), errs)
			}
			for _, bad := range []string{"pool.go", "connection pool", "redis: 20"} {
				if strings.Contains(errs, bad) {
					t.Errorf("stderr holds a line of go-redis's logger (%q):\n%s", bad, errs)
				}
			}
		})
	}
}
