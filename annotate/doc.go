// Package annotate parses and validates //crontab: directives, the
// annotations that turn a Go type into a scheduled task or a delayed job.
//
// This doc comment is the manual of the directive grammar; the generator
// (cmd/crontabgen) and the runtime rely on exactly what it says.
//
// # Where a directive goes
//
// A directive is a single line comment in the doc comment of a Go type
// declaration:
//
//	// CleanLogs removes log files older than a week.
//	//
//	//crontab:name="clean logs" expression="daily:03:00" timeout=10m
//	type CleanLogs struct{}
//
// Like every Go directive (//go:generate, //go:build) it has no space after
// the //, so gofmt keeps it verbatim and [go/ast.CommentGroup.Text] drops it:
// callers read the raw comment lines (ast.Comment.Text) and test them with
// [IsDirective]. A line that starts with "// crontab:" (with a space) is an
// ordinary comment, not a directive.
//
// # Syntax
//
// After the prefix "//crontab:" come zero or more key=value pairs separated by
// spaces or tabs:
//
//	directive = "//crontab:" { space } [ pair { space { space } pair } ] { space } .
//	pair      = key "=" value .
//	key       = ( letter | "_" ) { letter | digit | "_" | "-" } .
//	value     = interpreted | raw | bare .
//
// No spaces are allowed around "=". A value is one of:
//
//   - an interpreted string, as in Go: "clean logs", "tab\there", "\u00e9t\u00e9".
//     Every Go escape sequence is accepted; an invalid one is an error.
//   - a raw string, as in Go: `cron:*/5 * * * *`. Carriage returns are
//     dropped, as Go does; there are no escapes.
//   - a bare token: any run of printable characters up to the next space,
//     other than the quote characters " ' ` and "=". For example
//     timeout=30s, concurrent=true, expression=every:5m, tz=Europe/Berlin.
//     A value that contains a space, a quote, "=" or a non-printable
//     character must be quoted. Single quotes do not quote a value.
//
// Any key may take any form of value; name="x", name=`x` and name=x are the
// same directive. Keys are case-sensitive and each may appear at most once.
// Trailing spaces are ignored.
//
// # Keys
//
// name (required)
//
// The task's name, unique across the scanned set of types. It is how the
// task is known in Redis, in logs and to producers in other languages. It
// must be non-empty, at most 200 bytes ([MaxNameLen]) of valid UTF-8, contain
// only printable characters as [unicode.IsPrint] defines them (no control or
// format characters, no space other than U+0020), and neither start nor end
// with a space.
//
// expression (optional)
//
// The schedule: every:N, every:30s, daily:03:00, hourly:30, cron:EXPR or
// at:UNIX (see the runtime package). A type with an expression is a scheduled
// task; a type without one is a job type, which never fires on its own and
// runs only when it is enqueued. When present the value must be non-empty
// (omit the key to declare a job type). This package does not parse the
// expression: the generator validates it with the runtime's Parse and points
// its errors at [Directive.ValueOffsets]["expression"].
//
// status (default "active")
//
// One of active, paused or disabled: the initial status of the task. An
// active task fires; a paused one keeps its schedule but skips its fires; a
// disabled one is out of the queue. Operators change it at run time in Redis.
//
// timeout (default 300s)
//
// A Go duration ([time.ParseDuration]) such as 30s, 5m or 1h30m: how long a
// run may take. The handler's context carries this deadline and the task's
// lock expires after it. It must be at least 1ms (the lock is kept in
// milliseconds) and at most 24h ([MaxTimeout]).
//
// concurrent (default false)
//
// A boolean as [strconv.ParseBool] accepts it (true, false, 1, 0, t, f, ...).
// When false, a fire that finds the previous run of the same task still
// running anywhere is skipped and recorded; when true, runs may overlap.
//
// tz (default "UTC")
//
// The IANA time zone in which the expression is computed, such as
// Europe/Berlin or America/New_York. This package checks only its syntax: it
// must be non-empty and contain no spaces or control characters, and it must
// not be "Local", which would make the schedule depend on each machine's
// clock settings. The generator loads the zone and reports an unknown one.
//
// misfire (default "once"; scheduled tasks only)
//
// What the scheduler does when it finds that instants of the task were
// missed, because no scheduler process ran at the time: once fires a single
// catch-up run for all of them and continues with the schedule; skip drops
// them and waits for the next instant. Only a task with an expression has
// instants to miss, so the key is an error on a job type.
//
// retries (default 0)
//
// An integer from 0 to 100 ([MaxRetries]): how many more times a run is
// attempted after it fails (returns an error, panics or times out) or is
// abandoned (its process died), with exponential backoff. 0 means a failed
// run is recorded as failed and not run again. For a job type the retries
// are further attempts of the job; for a scheduled task they are one-off
// runs of the failed instant, which leave the schedule where it is.
//
// max_running (default 0, no cap)
//
// An integer from 0 to 1048576 ([MaxMaxRunning]): the cluster-wide cap of
// the runs of the type in progress at once, counted across every process
// sharing the namespace. Jobs over it wait in the queue (they never fail
// or drop); fires of a scheduled task over it are skipped and recorded, as
// for a held lock. 0 means no cap. A scheduled task that is not concurrent
// already runs at most once at a time, so max_running above 1 on such a
// task is an error: set concurrent=true with it. A job type's jobs may
// always overlap, so there it needs no concurrent=true.
//
// rate (default none)
//
// A start rate "N/D", quoted or bare (rate="100/s", rate=5/1m): at most N
// starts of the type in any window of length D, a sliding window (not
// fixed buckets, which allow 2N across a boundary), cluster-wide and
// computed on the Redis server's clock. Jobs over it wait in the queue and
// are never dropped. It applies to job types only: on a scheduled task
// (with an expression) it is an error, as the fires of a scheduled task
// are not rate-limited yet. N is an integer from 1 to 1048576; D is a Go duration
// (500ms, 1m, 1h30m) or one of the units ms, s, m, h alone meaning one of
// it, from 1ms to 24h in whole milliseconds (see registry.ParseRate, which
// reads it for the runtime too).
//
// priority (default 0)
//
// An integer from -1000 to 1000 ([MinPriority], [MaxPriority]), for job
// types: when due jobs back up, higher priorities are claimed first,
// weighted rather than strict, so lower ones are never starved (the
// runtime's TaskConfig.Priority documents the weights). On a scheduled
// task (an expression) it is an error: its fires run at their instant.
//
// jitter (default 0, none)
//
// A Go duration from 0 to 24h ([MaxJitter]) in whole milliseconds
// (jitter=10m, jitter=1h30m, jitter=500ms), for scheduled tasks: each
// instant of the expression is moved later by a stable offset in [0, D)
// derived from the task's name (schedule.JitterOffset: the FNV-64a hash of
// the name modulo D in milliseconds, the same in every process and every
// release), so many tasks with one expression do not all fire at once. The
// moved instant is the task's instant: it fires once there, never before.
// In a daylight-saving transition the offset is added, in absolute time,
// to the instant the policy yields. On a job type it is an error.
//
// # Errors
//
// [Parse] is strict. It reports an unknown key (suggesting the closest known
// key when there is one), a duplicate key, a key without "=" or without a
// value, an empty key, spaces around "=", a bad quoted string, a value of the
// wrong type or out of range, a missing name, a key that does not apply to
// the kind of type, and anything between pairs that is not a space. It
// collects every error of the line, not just the first, as an [ErrorList]
// sorted by offset. Each [Error] carries the byte offset, in the comment line,
// of the key or value at fault (of the line's start for a missing name), so a
// caller with the comment's position reports file:line:col:
//
//	for _, e := range list {
//		pos := fset.Position(comment.Slash + token.Pos(e.Offset))
//		fmt.Fprintf(os.Stderr, "%s: %s\n", pos, e.Msg)
//	}
//
// [Directive.Offsets] and [Directive.ValueOffsets] keep the offsets of a valid
// directive's keys and values for errors found later, such as a bad
// expression, an unknown zone or a duplicate name.
package annotate
