// Crontabgen writes the file that registers a program's scheduled tasks and
// job types: every Go type whose doc comment holds a //crontab: directive.
//
// Usage:
//
//	crontabgen [-o FILE] [-check] [-tags LIST] [-v] [DIR|PATTERN ...]
//
// The flags are:
//
//	-o FILE
//		Write the generated file to FILE. The default is crontab_gen.go in
//		the first DIR (for a pattern such as ./tasks/..., its directory).
//		FILE must end in .go and not in _test.go, and its directory must
//		exist.
//	-check
//		Write nothing. Exit 0 if FILE holds exactly what would be
//		generated, else exit 1 with "FILE is stale: run go generate" (or
//		"FILE is missing: ..."). Meant for CI.
//	-tags LIST
//		Comma-separated build tags to load the packages with, as for
//		go build -tags. The generated file is then meant for builds with
//		the same tags.
//	-v
//		Print each task and job type found, one a line in the order of the
//		generated file: its name, its expression and the schedule in words
//		(the runtime's Describe) with its zone, or "(job type)", e.g.
//
//			clean logs  daily:03:00  daily at 03:00, UTC
//			send sms    (job type)   runs when enqueued
//
//	-h
//		Print the usage and exit.
//
// # Running it
//
// Declare crontabgen as a tool of the module that holds the tasks, once:
//
//	go get -tool github.com/gocrontab/crontab/cmd/crontabgen
//
// which adds "tool github.com/gocrontab/crontab/cmd/crontabgen" to go.mod
// and requires the generator's own dependencies (golang.org/x/tools,
// jennifer), so that go mod tidy keeps them. Like any go get without a
// version, it also moves github.com/gocrontab/crontab to its latest release
// (append @VERSION to pick one). go tool builds crontabgen at the version
// go.mod requires, the one the program's runtime comes from, so the two
// never disagree. Then, in a file of the package that gets the generated
// file:
//
//	//go:generate go tool crontabgen -o crontab_gen.go .
//
// or run "go tool crontabgen" by hand. A module that pins its tools in a
// tools.go file instead (a file with the constraint //go:build tools and
// the blank import _ "github.com/gocrontab/crontab/cmd/crontabgen") uses
//
//	//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .
//
// Without either, go.sum holds the checksums of what the program imports
// (as after go mod tidy), not those of the generator's dependencies: go run
// then fails with
// "missing go.sum entry for module providing package
// golang.org/x/tools/go/packages (imported by
// github.com/gocrontab/crontab/internal/gen)", and go tool with
// "no such tool". (Inside github.com/gocrontab/crontab itself, as in its
// examples, go run works as is: the generator is part of the module.)
//
// Either way, go generate runs it in the directory of the file that holds
// the //go:generate line, and relative paths are relative to that
// directory.
//
// # What is scanned
//
// Each argument is a directory or a package pattern; there is none, "."
// is scanned. A directory is scanned recursively, like the pattern DIR/...:
// every package in it and below it, skipping directories named vendor or
// testdata, directories whose name starts with "." or "_", and nested
// modules. Any other argument is a package pattern as the go command takes
// it (./..., example.com/app/tasks). Only the Go files the build would use
// are read: test files are not, and build constraints apply (see -tags).
//
// All packages are loaded at once, with their types (dependencies from
// compiled export data, as cmd/stringer does). Errors in them (syntax, types,
// missing imports) are reported like the generator's own errors, and nothing
// is written. The old generated file is never part of the load: it starts
// with the build constraint //go:build !crontabgen and crontabgen loads with
// -tags crontabgen. So a stale or broken generated file never stands in the
// way of regenerating it, and code that calls the generated Register,
// NewScheduler or NewClient (main, in the same package or another) may exist
// before the file does.
//
// # Directives
//
// A task is a package-level, non-generic type declaration whose doc comment
// holds one line
//
//	//crontab:key=value key=value ...
//
// with no space after the //, anywhere in the doc comment (gofmt moves
// directives to its end). The doc comment may be the declaration's
// ("// doc\ntype T struct{}", or on a parenthesized declaration with one
// type) or, in a group, the type's own. A value is a Go-quoted string
// ("a b", `a b`) or a bare token without spaces (every:5m). The keys:
//
//	name        required; unique across everything scanned. The task's
//	            name in Redis, in logs and for producers in other languages.
//	expression  the schedule: every:N (seconds), every:30s, every:5m,
//	            every:1h, daily:HH:MM, hourly:MM, cron:EXPR (5 fields,
//	            crontab(5) and the calendar rules L, LW, 15W, 5L and 5#3,
//	            e.g. cron:0 9 * * 5#3 for 09:00 on the third Friday) or
//	            at:UNIX. A type without one is a job type: it never fires
//	            on its own and runs when enqueued with a Client; its value
//	            is the JSON payload.
//	status      active (default), paused or disabled: the status the task
//	            starts with. Operators change it in Redis at run time.
//	timeout     a Go duration, 1ms to 24h, default 300s: the deadline of
//	            the handler's context and the TTL of the task's lock.
//	concurrent  true or false (default): whether a fire may start while the
//	            previous run of the task still runs; when false it is
//	            skipped and recorded.
//	tz          the IANA zone the schedule is computed in, default UTC. It
//	            must load (time.LoadLocation) here and wherever the
//	            scheduler runs; import time/tzdata to embed the database.
//	misfire     once (default) or skip, for scheduled tasks: after
//	            downtime, fire one catch-up run, or skip missed instants.
//	retries     0 (default) to 100, for job types: extra attempts of a
//	            failed job, with exponential backoff.
//	max_running 0 (default, no cap) to 1048576: the cluster-wide cap of
//	            the type's runs in progress at once. Jobs over it wait;
//	            fires over it are skipped and recorded. Above 1 on a
//	            scheduled task it needs concurrent=true (an error names
//	            the line otherwise).
//	rate        "N/D", quoted or bare, default none: at most N starts in
//	            any window of length D (sliding, on Redis server time),
//	            such as 100/s, "5/1m" or 20/500ms; N 1 to 1048576, D 1ms
//	            to 24h. Jobs over it wait and are never dropped. Job
//	            types only: an error on a scheduled task.
//	priority    an integer, -1000 to 1000, default 0, for job types:
//	            when due jobs back up, higher priorities are claimed
//	            first, weighted, not strict: a priority's weight is its
//	            value minus the lowest due priority, plus one, and of
//	            every W jobs claimed (W the sum of the due priorities'
//	            weights) each gets its weight, so priorities 0 and 2 take
//	            1 and 3 jobs of every 4. An error on a scheduled task.
//	jitter      a Go duration, 0 (default, none) to 24h in whole
//	            milliseconds, for scheduled tasks: each instant of the
//	            expression moves later by a stable offset in [0, D) of
//	            the task's name (FNV-64a of the name modulo D in ms, the
//	            same in every process and release), so tasks with one
//	            expression do not all fire at once; the moved instant is
//	            the task's instant (once, never early). In a DST
//	            transition the offset is added, in absolute time, to the
//	            instant the policy yields. An error on a job type.
//
// The package github.com/gocrontab/crontab/annotate documents the grammar
// in full.
//
// # Checks
//
// Every problem is collected before anything is reported:
//
//   - the directive's syntax and keys: an unknown or repeated key, a bad
//     value, a missing name; misspelled keys get a suggestion;
//   - the expression, parsed by the runtime's own Parse (so the generator
//     and the runtime cannot disagree), and the zone, loaded with
//     time.LoadLocation; the error points at the value;
//   - the name is unique; a duplicate names the first declaration;
//   - T or *T implements crontab.TaskInterface, that is has the method
//     Handle(context.Context) error; the error names the missing method or
//     shows the method's signature against the one wanted;
//   - the type is neither generic, nor an alias, nor an interface, nor a
//     pointer type, nor declared inside a function;
//   - the generated file can refer to the type: a type in another package
//     than the generated file's is exported, not in package main, not in
//     an internal package the file's package may not import, and its
//     package does not import the file's package (an import cycle);
//   - a job type's value can round-trip through encoding/json: no channel,
//     func, complex or unsafe.Pointer, and no map with keys JSON cannot
//     use, reachable through the fields encoding/json uses (exported and
//     embedded fields, pointers, slices, arrays, maps; fields tagged
//     json:"-" and types with their own MarshalJSON, UnmarshalJSON,
//     MarshalText or UnmarshalText are trusted). The error names the
//     field's path, as Steps[].Run. A field that holds a dependency (a
//     DB handle, a client, a logger) is tagged json:"-" and its value
//     given to the scheduler with crontab.Provide;
//   - a //crontab: line anywhere else (on a func, method, var, const,
//     field, the package clause, a type group, a line comment, a type
//     inside a function, or in no doc comment at all) is an error, and so
//     is a second directive on one type;
//   - the generated file's package does not declare Register,
//     NewScheduler, NewClient, crontab, redis or time itself.
//
// Errors are printed to standard error, sorted, one per line, as
//
//	file:line:col: message
//
// with file relative to the current directory when it is below it and
// absolute otherwise, and col the 1-based byte column: of the offending key
// or value for directive errors, of the directive for misplaced ones, of the
// type's name for type errors. Problems without a place are printed as
// "crontabgen: message". For example:
//
//	tasks.go:11:18: unknown key "expresion"; did you mean "expression"?
//	tasks.go:20:6: type WrongParam does not implement crontab.TaskInterface (wrong type for method Handle: have Handle(int) error, want Handle(context.Context) error)
//	b/b.go:8:16: duplicate task name "report"; first declared at a/a.go:8:16
//
// # Output
//
// One gofmt'd Go file, in the package of -o's directory: the package its Go
// files declare (the build's files, tests aside), or the old generated
// file's package, or, in a directory without Go files, a name made of the
// directory's base name: lower case, with every character that cannot be in
// an identifier replaced by "_" (my-registry becomes my_registry), a "_"
// before a leading digit, and "pkg" instead of a keyword. It starts
//
//	// Code generated by crontabgen. DO NOT EDIT.
//
//	//go:build !crontabgen
//
// and holds no time, absolute path or version: the same input gives the
// same bytes, on any machine. Tasks are sorted by package path, then type
// name. It declares
//
//	// Register adds every annotated task to r.
//	func Register(r *crontab.Registry) error
//	// NewScheduler returns a scheduler for every annotated task, on client.
//	func NewScheduler(client redis.UniversalClient, opts ...crontab.Option) (*crontab.Scheduler, error)
//	// NewClient returns a client for enqueuing the annotated job types, on client.
//	func NewClient(client redis.UniversalClient, opts ...crontab.Option) *crontab.Client
//
// with crontab the package github.com/gocrontab/crontab/runtime and redis
// github.com/redis/go-redis/v9 (the module must require both). Register adds
// one crontab.TaskConfig per task, every field written out with its default
// resolved, and New returning new(T), which suits value and pointer
// receivers and gives job payloads a pointer to decode into. The file also
// asserts
//
//	var _ crontab.TaskInterface = (*T)(nil)
//
// for every task, so it stops compiling when a task changes in a way that
// makes it stale; regenerate then.
//
// The file is written atomically (a temporary file in the same directory,
// renamed over the old one, which keeps its mode; 0644 for a new file), and
// not at all when its content would not change. On any error nothing is
// written and an old file stays as it was.
//
// # Exit status
//
//	0  the file was written (or was already up to date); with -check, it is fresh
//	1  errors in the scanned code or directives (all printed), a failing go
//	   command, or, with -check, a stale or missing file
//	2  a wrong command line: an unknown flag, a bad -o
package main
