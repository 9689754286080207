package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redisnet"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// cli is one invocation: its output, environment and common flags.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string

	redisURL   string
	namespace  string
	output     string
	processTTL time.Duration

	rdb       redis.UniversalClient
	client    *crontab.Client    // run-time tasks
	inspector *crontab.Inspector // everything else
}

// command is one subcommand.
type command struct {
	name    string
	args    string // the arguments' synopsis
	summary string
	// nargs is the number of arguments: exact when >= 0; -1 means one or
	// more.
	nargs int
	// offline commands need no Redis: no client is built for them.
	offline bool
	flags   func(fs *flag.FlagSet, o *cmdOpts)
	run     func(ctx context.Context, c *cli, o *cmdOpts, args []string) error
}

// cmdOpts holds the flags of individual commands.
type cmdOpts struct {
	limit     int
	cursor    string
	match     string
	status    string
	state     string
	task      string
	addr      string
	token     string
	basicAuth string
	n         int         // next, explain: how many instants
	explain   explainOpts // explain.go
	set       setOpts     // set.go
	readOnly  bool
}

var commands []*command

func init() {
	commands = []*command{
		{name: "list", summary: "list the tasks: status, schedule, next and last run, last outcome, counts", nargs: 0, run: cmdList,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.IntVar(&o.limit, "limit", 0, "list one page of about this many tasks (1 to 1000), reading only that page, and its next cursor; 0 lists all, sorted")
				fs.StringVar(&o.cursor, "cursor", "", "start the page at this cursor (the one the previous page printed)")
				fs.StringVar(&o.match, "match", "", "only tasks whose name matches this glob `PATTERN` (Redis MATCH: *, ?, [abc]); pages")
				fs.StringVar(&o.status, "status", "", "only tasks with this status: active, paused or disabled; pages")
				fs.StringVar(&o.task, "type", "", "only tasks run by this registered type; pages")
			}},
		{name: "show", args: "NAME", summary: "one task in full, with its latest runs; or a job type's limits and their use", nargs: 1, run: cmdShow},
		{name: "pause", args: "NAME...", summary: "skip the task's fires (each skip is counted) until it is resumed", nargs: -1, run: statusCmd("pause")},
		{name: "resume", args: "NAME...", summary: "make a paused task active again, from its next future instant", nargs: -1, run: statusCmd("resume")},
		{name: "disable", args: "NAME...", summary: "take the task out of the queue", nargs: -1, run: statusCmd("disable")},
		{name: "enable", args: "NAME...", summary: "make a disabled task active again, queued at its next future instant", nargs: -1, run: statusCmd("enable")},
		{name: "next", args: "NAME", summary: "the task's next instants, in its zone and the local zone, from Redis time and its status", nargs: 1, run: cmdNext,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.IntVar(&o.n, "n", 10, "instants to show, 1 to 1000")
			}},
		{name: "explain", args: "EXPRESSION", summary: "a schedule expression in words and its next instants, daylight-saving changes marked (no Redis)", nargs: 1, run: cmdExplain, offline: true,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.IntVar(&o.n, "n", 10, "instants to show, 1 to 1000")
				fs.StringVar(&o.explain.tz, "tz", "UTC", "the IANA `ZONE` the schedule is computed in")
				fs.StringVar(&o.explain.from, "from", "", "list the instants after this RFC 3339 `TIME` (default now)")
			}},
		{name: "set", args: "KEY", summary: "create or change a run-time task, checked as Client.SetTask checks it", nargs: 1, run: cmdSet, flags: setFlags},
		{name: "trigger", args: "NAME", summary: "run the task once now, on one process, without moving its schedule", nargs: 1, run: cmdTrigger},
		{name: "remove", args: "NAME", summary: "remove a run-time task (one added with Client.SetTask or crontab set)", nargs: 1, run: cmdRemove},
		{name: "history", args: "NAME", summary: "the task's (or job type's) latest runs, newest first", nargs: 1, run: cmdHistory,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.IntVar(&o.limit, "limit", 20, "runs to show; 0 shows all that are kept")
			}},
		{name: "jobs", summary: "list jobs: pending, running and dead", nargs: 0, run: cmdJobs,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.StringVar(&o.state, "state", "", "only jobs in this state: pending, running or dead (default all three)")
				fs.StringVar(&o.task, "task", "", "only jobs of this job type")
				fs.IntVar(&o.limit, "limit", 50, "at most this many jobs of each state; 0 means no cap")
				fs.StringVar(&o.cursor, "cursor", "", "with -state, list one page of -limit jobs from this cursor (\"0\": the first page) and print the next")
			}},
		{name: "job", args: "ID", summary: "one job in full", nargs: 1, run: cmdJob},
		{name: "cancel", args: "ID...", summary: "cancel pending jobs", nargs: -1, run: jobCmd("cancel")},
		{name: "retry", args: "ID...", summary: "move dead jobs back to the queue, due now", nargs: -1, run: jobCmd("retry")},
		{name: "processes", summary: "the scheduler processes, from their heartbeats", nargs: 0, run: cmdProcesses},
		{name: "overview", summary: "the namespace's counts: queued, due, running, jobs, processes, repairs", nargs: 0, run: cmdOverview},
		{name: "serve", summary: "run the web dashboard (and /metrics)", nargs: 0, run: cmdServe,
			flags: func(fs *flag.FlagSet, o *cmdOpts) {
				fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`HOST:PORT` to listen on; any non-loopback address requires -token or -basic-auth")
				fs.StringVar(&o.token, "token", "", "require this token (default $CRONTAB_TOKEN): Bearer header, basic-auth password, or /?token= once")
				fs.StringVar(&o.basicAuth, "basic-auth", "", "accept basic auth `USER:PASSWORD` (default $CRONTAB_BASIC_AUTH)")
				fs.BoolVar(&o.readOnly, "read-only", false, "change nothing: every POST answers 403 and the page shows no action buttons")
			}},
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run is the whole program, for main and the tests: it returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	redisnet.RouteLogs(slog.Default()) // go-redis's lines at debug level, not on stderr
	c := &cli{stdout: stdout, stderr: stderr, getenv: getenv}
	err := c.run(ctx, args)
	if c.rdb != nil {
		c.rdb.Close()
	}
	return c.report(err) // errors.go
}

// commonFlags defines the flags every command accepts, with the current
// values as defaults, so they work before and after the command name.
func (c *cli) commonFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.redisURL, "redis", c.redisURL, "Redis `URL`: redis://[user:pass@]host:port/db, rediss://, unix:///path (default $REDIS_URL, else redis://127.0.0.1:6379)")
	fs.StringVar(&c.namespace, "namespace", c.namespace, "key namespace of the schedulers (default $CRONTAB_NAMESPACE, else crontab)")
	fs.StringVar(&c.output, "o", c.output, "output `format`: table or json")
	fs.DurationVar(&c.processTTL, "process-ttl", c.processTTL, "a process is dead this long after its last heartbeat: the schedulers' WithProcessTTL")
}

func (c *cli) run(ctx context.Context, args []string) error {
	c.redisURL = c.getenv("REDIS_URL")
	if c.redisURL == "" {
		c.redisURL = "redis://127.0.0.1:6379"
	}
	c.namespace = c.getenv("CRONTAB_NAMESPACE")
	if c.namespace == "" {
		c.namespace = "crontab"
	}
	c.output = "table"
	c.processTTL = 5 * time.Second

	global := flag.NewFlagSet("crontab", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	c.commonFlags(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(c.stdout)
			return err
		}
		return usagef("%v", err)
	}
	args = global.Args()
	if len(args) == 0 {
		c.help(c.stderr)
		return usagef("no command")
	}
	name := args[0]
	if name == "help" {
		if len(args) > 1 {
			cmd := lookup(args[1])
			if cmd == nil {
				return usagef("unknown command %q", args[1])
			}
			c.commandHelp(c.stdout, cmd)
			return nil
		}
		c.help(c.stdout)
		return nil
	}
	cmd := lookup(name)
	if cmd == nil {
		return usagef("unknown command %q", name)
	}
	var o cmdOpts
	fs := flag.NewFlagSet("crontab "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.commonFlags(fs)
	if cmd.flags != nil {
		cmd.flags(fs, &o)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.commandHelp(c.stdout, cmd)
			return err
		}
		return usagef("%s: %v", name, err)
	}
	rest := fs.Args()
	// Flags may also follow the arguments: crontab history NAME -limit 5.
	for i := 0; i < len(rest); i++ {
		if strings.HasPrefix(rest[i], "-") && len(rest[i]) > 1 {
			if err := fs.Parse(rest[i:]); err != nil {
				return usagef("%s: %v", name, err)
			}
			rest = append(rest[:i:i], fs.Args()...)
			i--
		}
	}
	switch {
	case cmd.nargs >= 0 && len(rest) != cmd.nargs:
		if cmd.nargs == 0 {
			return usagef("%s takes no arguments", name)
		}
		return usagef("%s: want %s", name, cmd.args)
	case cmd.nargs < 0 && len(rest) == 0:
		return usagef("%s: want %s", name, cmd.args)
	}
	if c.output != "table" && c.output != "json" {
		return usagef("-o %q: want table or json", c.output)
	}
	if !cmd.offline {
		if err := c.connect(); err != nil {
			return err
		}
	}
	return cmd.run(ctx, c, &o, rest)
}

// connect builds the Redis client, the crontab client and the inspector.
func (c *cli) connect() error {
	if strings.Contains(c.redisURL, "addr=") {
		opt, err := redis.ParseClusterURL(c.redisURL)
		if err != nil {
			return usagef("-redis %q: %v", c.redisURL, err)
		}
		c.rdb = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(c.redisURL)
		if err != nil {
			return usagef("-redis %q: %v", c.redisURL, err)
		}
		c.rdb = redis.NewClient(opt)
	}
	c.client = crontab.NewClient(c.rdb, nil, crontab.WithNamespace(c.namespace), crontab.WithProcessTTL(c.processTTL))
	c.inspector = crontab.NewInspector(c.rdb, crontab.WithNamespace(c.namespace), crontab.WithProcessTTL(c.processTTL))
	return nil
}

func (c *cli) help(w io.Writer) {
	fmt.Fprint(w, `crontab: the operator's command line for gocrontab. It speaks to Redis
directly and needs none of the application's task code.

Usage:
  crontab [flags] COMMAND [flags] [ARGS]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, cmd := range commands {
		fmt.Fprintf(tw, "  %s %s\t%s\n", cmd.name, cmd.args, cmd.summary)
	}
	fmt.Fprintf(tw, "  help [COMMAND]\tthis help, or a command's\n")
	tw.Flush()
	fmt.Fprint(w, `
Flags (before or after the command):
`)
	fs := flag.NewFlagSet("crontab", flag.ContinueOnError)
	fs.SetOutput(w)
	c.commonFlags(fs)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Run 'crontab help COMMAND' or 'crontab COMMAND -h' for a command's own flags.
Output: tables by default, JSON with -o json (times RFC 3339, durations in ms).
Exit status: 0 success, 1 failure (Redis error, no such task or job, refused
trigger), 2 usage error.

Examples:
  crontab list
  crontab pause "clean logs"
  crontab trigger heartbeat
  crontab next -n 5 "clean logs"
  crontab explain -tz Europe/Berlin "cron:0 8 * * 1-5"
  crontab set "nightly sms" -type "send sms" -expression daily:21:00 -tz Europe/Berlin -params '{"to":"+4917"}'
  crontab history -limit 5 flaky
  crontab jobs -state dead -task "send sms"
  crontab -o json list | jq '.[] | select(.status != "active") | .name'
  CRONTAB_TOKEN=s3cret crontab serve -addr :8080
`)
}

func (c *cli) commandHelp(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "Usage: crontab %s [flags] %s\n\n%s.\n\nFlags:\n", cmd.name, cmd.args, strings.ToUpper(cmd.summary[:1])+cmd.summary[1:])
	fs := flag.NewFlagSet("crontab "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(w)
	var o cmdOpts
	c.commonFlags(fs)
	if cmd.flags != nil {
		cmd.flags(fs, &o)
	}
	fs.PrintDefaults()
}

// out prints v as JSON, or calls table.
func (c *cli) out(v any, table func(w *tabwriter.Writer)) error {
	if c.output == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// --- formatting -----------------------------------------------------------

const timeLayout = "2006-01-02 15:04:05"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(timeLayout)
}

func fmtDur(d time.Duration) string {
	if d < time.Minute {
		if d == 0 {
			return "0ms"
		}
		if d < time.Second {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(100 * time.Millisecond).String()
	}
	d = d.Round(time.Second)
	parts := []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	var b strings.Builder
	shown := 0
	for _, p := range parts {
		if n := d / p.unit; n > 0 || (shown > 0 && shown < 2) {
			if n > 0 {
				fmt.Fprintf(&b, "%d%s", n, p.name)
			}
			d -= n * p.unit
			shown++
		}
		if shown == 2 {
			break
		}
	}
	return b.String()
}

// rel is t relative to now: "in 3s" or "2m5s ago".
func rel(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Until(t)
	if d >= 0 {
		return "in " + fmtDur(d)
	}
	return fmtDur(-d) + " ago"
}

func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func schedule(t crontab.TaskInfo) string {
	if t.TZ == "" || t.TZ == "UTC" {
		return t.Expression
	}
	return t.Expression + " (" + t.TZ + ")"
}

// --- commands ---------------------------------------------------------------

// taskPage is list's -o json output when it pages.
type taskPage struct {
	Tasks      []dashboard.Task `json:"tasks"`
	NextCursor string           `json:"next_cursor"`
}

func cmdList(ctx context.Context, c *cli, o *cmdOpts, _ []string) error {
	if o.limit < 0 || o.limit > crontab.MaxPageLimit {
		return usagef("list: -limit %d: want 1 to %d, or 0 for all", o.limit, crontab.MaxPageLimit)
	}
	if o.status != "" && !crontab.Status(o.status).Valid() {
		return usagef("list: -status %q: want active, paused or disabled", o.status)
	}
	paging := o.limit > 0 || o.cursor != "" || o.match != "" || o.status != "" || o.task != ""
	var tasks []crontab.TaskInfo
	var next string
	if paging {
		page, err := c.inspector.TaskPage(ctx, crontab.TaskQuery{Cursor: o.cursor, Limit: o.limit, Match: o.match,
			Status: crontab.Status(o.status), Type: o.task})
		if err != nil {
			return err
		}
		tasks, next = page.Tasks, page.NextCursor
	} else {
		var err error
		if tasks, err = c.inspector.ListTasks(ctx); err != nil {
			return err
		}
	}
	views := make([]dashboard.Task, len(tasks))
	for i, t := range tasks {
		views[i] = dashboard.TaskView(t)
	}
	var v any = views
	if paging {
		v = taskPage{Tasks: views, NextCursor: next}
	}
	return c.out(v, func(w *tabwriter.Writer) {
		defer func() {
			if next != "" {
				fmt.Fprintf(w, "(more: next cursor %s; crontab list -cursor %s ...)\n", next, next)
			} else if paging {
				fmt.Fprintln(w, "(last page)")
			}
		}()
		fmt.Fprintln(w, "TASK\tSTATUS\tSCHEDULE\tNEXT RUN\t\tLAST RUN\tOUTCOME\tRUNS\tFAILED\tSKIPPED\tSOURCE")
		for _, t := range tasks {
			status := string(t.Status)
			if t.Running > 0 {
				status += ",running"
			}
			outcome := "-"
			if t.LastOutcome != "" {
				outcome = string(t.LastOutcome) + " " + fmtDur(t.LastDuration)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", t.Name, status, schedule(t),
				fmtTime(t.Next), rel(t.Next), rel(t.Last), outcome, t.Runs, t.Failures, t.Skips, t.Source)
		}
		switch {
		case len(tasks) > 0:
		case o.cursor != "":
			fmt.Fprintln(w, "(no more tasks)") // the walk's last step found none
		case o.match != "" || o.status != "" || o.task != "":
			fmt.Fprintf(w, "(no task in namespace %q matches)\n", c.namespace)
		default:
			fmt.Fprintf(w, "(no tasks in namespace %q)\n", c.namespace)
		}
	})
}

func cmdShow(ctx context.Context, c *cli, _ *cmdOpts, args []string) error {
	t, err := c.inspector.Task(ctx, args[0])
	if errors.Is(err, crontab.ErrNotFound) {
		// Not a task: a job type whose limits live processes publish?
		f, ok, ferr := c.inspector.TypeFlow(ctx, args[0])
		if ferr != nil {
			return ferr
		}
		if ok {
			return showTypeFlow(c, f)
		}
	}
	if err != nil {
		return err
	}
	recs, err := c.inspector.History(ctx, t.Name, 10)
	if err != nil {
		return err
	}
	slots, err := c.inspector.FireSlotsRunning(ctx, t)
	if err != nil {
		return err
	}
	if c.output == "json" {
		type show struct {
			dashboard.Task
			// SlotsRunning counts the runs that hold its max_running
			// cap now (only for a task with one).
			SlotsRunning *int64          `json:"slots_running,omitempty"`
			History      []dashboard.Run `json:"history"`
		}
		v := show{Task: dashboard.TaskView(t), History: []dashboard.Run{}}
		if t.MaxRunning > 0 {
			v.SlotsRunning = &slots
		}
		for _, r := range recs {
			v.History = append(v.History, dashboard.RunView(r))
		}
		return c.out(v, nil)
	}
	yes := map[bool]string{true: "yes", false: "no"}
	last := "-"
	if t.LastOutcome != "" {
		last = fmt.Sprintf("%s in %s", t.LastOutcome, fmtDur(t.LastDuration))
		if t.LastError != "" {
			last += ": " + oneLine(t.LastError, 200)
		}
	}
	running := fmt.Sprint(t.Running)
	if t.LockedBy != "" {
		running += " (lock held by " + t.LockedBy + ")"
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"name", t.Name},
		{"type", t.Type + dashParen(t.Class)},
		{"source", string(t.Source)},
		{"status", string(t.Status)},
		{"schedule", t.Expression + " in " + dash(t.TZ) + dashParen(t.Interval)},
		{"next run", fmtTime(t.Next) + " (" + rel(t.Next) + ")"},
		{"last run", fmtTime(t.Last) + " (" + rel(t.Last) + ")"},
		{"last outcome", last},
		{"runs", fmt.Sprintf("%d (%d failed, %d skipped)", t.Runs, t.Failures, t.Skips)},
		{"running", running},
		{"timeout", t.Timeout.String()},
		{"concurrent", yes[t.Concurrent]},
		{"misfire", dash(string(t.Misfire))},
		{"params", dash(string(t.Params))},
		{"created", fmtTime(t.Created)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
		if kv[0] == "concurrent" {
			for _, f := range flowRows(t, slots) {
				fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(c.stdout, "\nlatest runs:")
	return c.out(nil, func(w *tabwriter.Writer) { historyTable(w, recs) })
}

// showTypeFlow prints a job type's limits and their use now (show NAME
// for a job type with limits).
func showTypeFlow(c *cli, f crontab.TypeFlow) error {
	if c.output == "json" {
		v := struct {
			Type       string `json:"type"`
			MaxRunning int    `json:"max_running,omitempty"`
			Rate       string `json:"rate,omitempty"`
			Priority   int    `json:"priority,omitempty"`
			Running    int64  `json:"running"`
			Starts     int64  `json:"starts_in_window"`
			Processes  int    `json:"processes"`
			Disagree   bool   `json:"disagree,omitempty"`
		}{f.Type, f.MaxRunning, f.Rate.String(), f.Priority, f.Running, f.Starts, f.Processes, f.Disagree}
		return c.out(v, nil)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "job type:\t%s\n", f.Type)
	if f.MaxRunning > 0 {
		fmt.Fprintf(tw, "max running:\t%d (running now: %d)\n", f.MaxRunning, f.Running)
	}
	if f.Priority != 0 {
		fmt.Fprintf(tw, "priority:\t%d\n", f.Priority)
	}
	if !f.Rate.IsZero() {
		fmt.Fprintf(tw, "rate:\t%s (starts in the window now: %d)\n", f.Rate, f.Starts)
	}
	agree := ""
	if f.Disagree {
		agree = "; they publish different limits (each enforces its own)"
	}
	fmt.Fprintf(tw, "processes:\t%d live processes run it with limits%s\n", f.Processes, agree)
	return tw.Flush()
}

// flowRows are the rows of show for the task's flow-control settings,
// each only when set: its cap of runs at once, its start rate, its jitter
// with the effective offset of its instants, and its priority. The current use of the cap (slots: the runs holding it now,
// Inspector.FireSlotsRunning) goes on its row.
func flowRows(t crontab.TaskInfo, slots int64) [][2]string {
	var rows [][2]string
	if t.MaxRunning > 0 {
		rows = append(rows, [2]string{"max running", fmt.Sprintf("%d (running now: %d/%d)", t.MaxRunning, slots, t.MaxRunning)})
	}
	if !t.Rate.IsZero() {
		rows = append(rows, [2]string{"rate", t.Rate.String() + " (starts per sliding window)"})
	}
	if t.Jitter > 0 {
		rows = append(rows, [2]string{"jitter", fmt.Sprintf("%v (offset %v)", t.Jitter, t.JitterOffset)})
	}
	if t.Priority != 0 {
		rows = append(rows, [2]string{"priority", fmt.Sprint(t.Priority)})
	}
	return rows
}

func dashParen(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func historyTable(w io.Writer, recs []crontab.Record) {
	fmt.Fprintln(w, "FIRE\tSTART\tDURATION\tOUTCOME\tATTEMPT\tPROCESS\tJOB\tERROR")
	for _, r := range recs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", fmtTime(r.Fire), fmtTime(r.Start), fmtDur(r.End.Sub(r.Start)),
			r.Outcome, r.Attempt, dash(r.Process), dash(r.JobID), dash(oneLine(r.Error, 80)))
	}
	if len(recs) == 0 {
		fmt.Fprintln(w, "(no runs recorded)")
	}
}

func statusCmd(action string) func(context.Context, *cli, *cmdOpts, []string) error {
	return func(ctx context.Context, c *cli, _ *cmdOpts, names []string) error {
		f := map[string]func(context.Context, string) error{
			"pause": c.inspector.Pause, "resume": c.inspector.Resume, "disable": c.inspector.Disable, "enable": c.inspector.Enable,
		}[action]
		done := map[string]string{"pause": "paused", "resume": "resumed", "disable": "disabled", "enable": "enabled"}[action]
		var failed []error
		type result struct {
			Task   string `json:"task"`
			Action string `json:"action"`
			Status string `json:"status,omitempty"`
			Error  string `json:"error,omitempty"`
		}
		var results []result
		for _, n := range names {
			r := result{Task: n, Action: action}
			if err := f(ctx, n); err != nil {
				failed = append(failed, err)
				r.Error = err.Error()
			} else if t, err := c.inspector.Task(ctx, n); err == nil {
				r.Status = string(t.Status)
			}
			results = append(results, r)
		}
		if c.output == "json" {
			if err := c.out(results, nil); err != nil {
				return err
			}
		} else {
			for _, r := range results {
				if r.Error == "" {
					fmt.Fprintf(c.stdout, "%s %q\n", done, r.Task)
				}
			}
		}
		return errors.Join(failed...)
	}
}

func cmdTrigger(ctx context.Context, c *cli, _ *cmdOpts, args []string) error {
	at, err := c.inspector.Trigger(ctx, args[0])
	if err != nil {
		return err
	}
	if c.output == "json" {
		return c.out(map[string]any{"task": args[0], "action": "trigger", "fire": at}, nil)
	}
	fmt.Fprintf(c.stdout, "triggered %q: fires at %s on one process; its schedule is unchanged\n", args[0], at.Local().Format(timeLayout+".000"))
	return nil
}

func cmdRemove(ctx context.Context, c *cli, _ *cmdOpts, args []string) error {
	if err := c.client.RemoveTask(ctx, args[0]); err != nil {
		return err
	}
	if c.output == "json" {
		return c.out(map[string]any{"task": args[0], "action": "remove"}, nil)
	}
	fmt.Fprintf(c.stdout, "removed %q\n", args[0])
	return nil
}

func cmdHistory(ctx context.Context, c *cli, o *cmdOpts, args []string) error {
	if o.limit < 0 {
		return usagef("history: -limit %d: want 0 or more", o.limit)
	}
	recs, err := c.inspector.History(ctx, args[0], o.limit)
	if err != nil {
		return err
	}
	views := make([]dashboard.Run, len(recs))
	for i, r := range recs {
		views[i] = dashboard.RunView(r)
	}
	return c.out(views, func(w *tabwriter.Writer) { historyTable(w, recs) })
}

func cmdJobs(ctx context.Context, c *cli, o *cmdOpts, _ []string) error {
	st := crontab.JobState(o.state)
	if st != "" && !slices.Contains([]crontab.JobState{crontab.JobPending, crontab.JobRunning, crontab.JobDead}, st) {
		return usagef("jobs: -state %q: want pending, running or dead", o.state)
	}
	if o.limit < 0 {
		return usagef("jobs: -limit %d: want 0 or more", o.limit)
	}
	var jobs []crontab.JobInfo
	var next string
	paging := o.cursor != ""
	if paging {
		if st == "" {
			return usagef("jobs: -cursor needs -state")
		}
		cursor := o.cursor
		if cursor == "0" {
			cursor = ""
		}
		page, err := c.inspector.JobPage(ctx, crontab.JobQuery{State: st, Cursor: cursor, Limit: o.limit, Type: o.task})
		if err != nil {
			return err
		}
		jobs, next = page.Jobs, page.NextCursor
	} else {
		var err error
		if jobs, err = c.inspector.Jobs(ctx, crontab.JobFilter{State: st, Task: o.task, Limit: o.limit}); err != nil {
			return err
		}
	}
	if err := c.inspector.ExplainWaiting(ctx, jobs); err != nil {
		return err
	}
	views := make([]dashboard.Job, len(jobs))
	for i, j := range jobs {
		views[i] = dashboard.JobView(j)
	}
	var v any = views
	if paging {
		v = struct {
			Jobs       []dashboard.Job `json:"jobs"`
			NextCursor string          `json:"next_cursor"`
		}{views, next}
	}
	return c.out(v, func(w *tabwriter.Writer) {
		defer func() {
			if next != "" {
				fmt.Fprintf(w, "(more: next cursor %s)\n", next)
			} else if paging {
				fmt.Fprintln(w, "(last page)")
			}
		}()
		fmt.Fprintln(w, "ID\tTYPE\tSTATE\tWHEN\t\tWAIT\tATTEMPTS\tPROCESS\tERROR\tPAYLOAD")
		for _, j := range jobs {
			when := j.Due
			switch j.State {
			case crontab.JobRunning:
				when = j.LeaseUntil
			case crontab.JobDead:
				when = j.Failed
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", j.ID, j.Task, j.State, fmtTime(when), rel(when),
				dash(j.Waiting.String()), j.Attempts, dash(j.Owner), dash(oneLine(j.Error, 60)), oneLine(string(j.Payload), 60))
		}
		if len(jobs) == 0 {
			fmt.Fprintln(w, "(no jobs)")
		}
	})
}

func cmdJob(ctx context.Context, c *cli, _ *cmdOpts, args []string) error {
	j, err := c.inspector.Job(ctx, args[0])
	if err != nil {
		return err
	}
	if c.output == "json" {
		return c.out(dashboard.JobView(j), nil)
	}
	retries := "the type's"
	if j.Retries >= 0 {
		retries = fmt.Sprint(j.Retries)
	}
	rows := [][2]string{{"id", j.ID}, {"type", j.Task}, {"state", string(j.State)}}
	switch j.State {
	case crontab.JobPending:
		rows = append(rows, [2]string{"due", fmtTime(j.Due) + " (" + rel(j.Due) + ")"})
	case crontab.JobRunning:
		rows = append(rows, [2]string{"process", j.Owner}, [2]string{"lease until", fmtTime(j.LeaseUntil)})
	case crontab.JobDead:
		rows = append(rows, [2]string{"failed", fmtTime(j.Failed) + " (" + rel(j.Failed) + ")"}, [2]string{"error", j.Error})
	}
	rows = append(rows, [2]string{"attempts", fmt.Sprint(j.Attempts)}, [2]string{"retries", retries},
		[2]string{"payload", string(j.Payload)})
	if j.Unique != "" {
		rows = append(rows, [2]string{"unique", j.Unique})
	}
	return c.out(nil, func(w *tabwriter.Writer) {
		for _, kv := range rows {
			fmt.Fprintf(w, "%s:\t%s\n", kv[0], kv[1])
		}
	})
}

func jobCmd(action string) func(context.Context, *cli, *cmdOpts, []string) error {
	return func(ctx context.Context, c *cli, _ *cmdOpts, ids []string) error {
		f := map[string]func(context.Context, string) error{"cancel": c.inspector.Cancel, "retry": c.inspector.RetryDead}[action]
		done := map[string]string{"cancel": "cancelled", "retry": "queued again"}[action]
		type result struct {
			Job    string `json:"job"`
			Action string `json:"action"`
			Error  string `json:"error,omitempty"`
		}
		var results []result
		var failed []error
		for _, id := range ids {
			r := result{Job: id, Action: action}
			if err := f(ctx, id); err != nil {
				failed = append(failed, err)
				r.Error = err.Error()
			} else if c.output != "json" {
				fmt.Fprintf(c.stdout, "%s %s\n", done, id)
			}
			results = append(results, r)
		}
		if c.output == "json" {
			if err := c.out(results, nil); err != nil {
				return err
			}
		}
		return errors.Join(failed...)
	}
}

func cmdProcesses(ctx context.Context, c *cli, _ *cmdOpts, _ []string) error {
	procs, err := c.inspector.Processes(ctx)
	if err != nil {
		return err
	}
	views := make([]dashboard.Process, len(procs))
	for i, p := range procs {
		views[i] = dashboard.ProcessView(p)
	}
	return c.out(views, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "PROCESS\tHOST\tPID\tVERSION\tSTARTED\tLAST BEAT\tRUNNING\tSTATE")
		for _, p := range procs {
			state := "alive"
			if !p.Alive {
				state = "silent"
			}
			if p.Master {
				state += ",master"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\n", p.ID, p.Host, p.PID, dash(p.Version), fmtTime(p.Started),
				rel(p.LastBeat), p.Running, state)
		}
		if len(procs) == 0 {
			fmt.Fprintln(w, "(no scheduler process has a heartbeat)")
		}
	})
}

// repairLabels names the invariant sweep's repair kinds in the overview.
var repairLabels = map[string]string{
	crontab.RepairJob: "job records", crontab.RepairClaim: "claim leases", crontab.RepairLease: "run leases",
	crontab.RepairRunning: "running entries", crontab.RepairLock: "locks", crontab.RepairQueue: "queue entries",
	crontab.RepairDue: "first-due entries", crontab.RepairIndex: "unindexed tasks",
}

func cmdOverview(ctx context.Context, c *cli, _ *cmdOpts, _ []string) error {
	ov, err := c.inspector.Overview(ctx)
	if err != nil {
		return err
	}
	return c.out(dashboard.CountsView(ov), func(w *tabwriter.Writer) {
		for _, kv := range []struct {
			k string
			v int64
		}{
			{"tasks", ov.Tasks}, {"queued", ov.Queued}, {"due", ov.Due}, {"running", ov.Running},
			{"jobs pending", ov.JobsPending}, {"jobs due", ov.JobsDue}, {"jobs running", ov.JobsRunning},
			{"jobs dead", ov.JobsDead}, {"processes alive", ov.Processes},
		} {
			fmt.Fprintf(w, "%s:\t%d\n", kv.k, kv.v)
		}
		for _, k := range crontab.RepairKinds() {
			fmt.Fprintf(w, "repaired %s:\t%d\n", repairLabels[k], ov.Repaired[k])
		}
	})
}
