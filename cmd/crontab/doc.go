// Command crontab is the operator's command line for gocrontab: it lists,
// inspects and steers the tasks and jobs of a Redis namespace, and serves
// the web dashboard. It speaks to Redis directly and needs none of the
// application's task code.
//
// Usage:
//
//	crontab [flags] COMMAND [flags] [ARGS]
//
// Commands:
//
//	list                 list the tasks: status, schedule, next and last run, last outcome, counts
//	show NAME            one task in full, with its latest runs (and its
//	                     max running, with the runs holding it now, rate and
//	                     priority when set); or a job type's limits and their use
//	pause NAME...        skip the task's fires (each skip is counted) until it is resumed
//	resume NAME...       make a paused task active again, from its next future instant
//	disable NAME...      take the task out of the queue
//	enable NAME...       make a disabled task active again, queued at its next future instant
//	next NAME            the task's next instants, in its zone and the local zone, from
//	                     Redis time (its next_run) and with what its status does to them
//	explain EXPRESSION   a schedule expression in words (crontab.Describe) with its zone, and
//	                     its next instants, daylight-saving transitions marked; no Redis
//	set KEY              create or change a run-time task, checked by Client.SetTask
//	trigger NAME         run the task once now, on one process, without moving its schedule
//	remove NAME          remove a run-time task (one added with Client.SetTask or set)
//	history NAME         the task's (or job type's) latest runs, newest first
//	jobs                 list jobs: pending, running and dead; WAIT says why a due
//	                     pending job is not claimed yet: max_running USE/CAP, rate N/D,
//	                     rate key KEY N/D, no process (none alive runs its type) or due
//	job ID               one job in full
//	cancel ID...         cancel pending jobs
//	retry ID...          move dead jobs back to the queue, due now
//	processes            the scheduler processes, from their heartbeats
//	overview             the namespace's counts: queued, due, running, jobs, processes, repairs
//	serve                run the web dashboard (and /metrics)
//	help [COMMAND]       print this help, or a command's
//
// Flags, accepted before or after the command:
//
//	-redis URL           Redis to use: redis://[user:password@]host:port/db, rediss:// for TLS,
//	                     unix:///path.sock (default: $REDIS_URL, else redis://127.0.0.1:6379)
//	-namespace NS        the key namespace the schedulers use (default: $CRONTAB_NAMESPACE, else crontab)
//	-o FORMAT            table (default) or json
//	-process-ttl D       how long after its last heartbeat a process counts as dead; give the
//	                     schedulers' WithProcessTTL (default 5s)
//
// Flags of one command:
//
//	list -limit N -cursor C        one page of about N tasks (1 to 1000) from cursor C (the one the
//	                               previous page printed; none: the first), reading only that
//	                               page's hashes, then "(more: next cursor C2; ...)" or
//	                               "(last page)"; without any of these flags, every task, sorted
//	list -match GLOB -status S -type T
//	                               pages of the tasks whose name matches the Redis glob GLOB
//	                               (*, ?, [abc]), whose status is S, or that type T runs
//	history -limit N               runs to show (default 20; 0: all that are kept)
//	next -n N                      instants to show, 1 to 1000 (default 10)
//	explain -tz ZONE -n N -from T  the schedule's IANA zone (default UTC); instants to show, 1 to
//	                               1000 (default 10); list those after the RFC 3339 time T
//	                               (default now), for output that does not change
//	set -type T -expression E      the registered type (one a live process runs) and the
//	                               schedule; required to create, optional to change
//	set -tz Z -params JSON -timeout D -status S -concurrent -misfire P -max-running N
//	                               the other fields of crontab.TaskSpec; a change keeps what
//	                               no flag gives
//	jobs -state S -task NAME -limit N
//	                               S is pending, running or dead (default: all three); NAME a job
//	                               type; N caps each state (default 50; 0: no cap)
//	jobs -state S -cursor C -limit N
//	                               one page of N jobs of state S from cursor C ("0": the first),
//	                               and its next cursor
//	serve -addr HOST:PORT          where to listen (default 127.0.0.1:8080)
//	serve -token T                 require the token T (default: $CRONTAB_TOKEN)
//	serve -basic-auth USER:PASS    accept basic auth USER:PASS (default: $CRONTAB_BASIC_AUTH)
//	serve -read-only               change nothing: every POST answers 403, the page has no buttons
//
// Output is a table for people, or JSON (-o json) for scripts: an array of
// objects for list, history, jobs and processes, one object for show, job,
// overview and the commands that change something; a page (list -limit,
// jobs -cursor) is {"tasks" or "jobs": [...], "next_cursor": "..."}, "" on
// the last page. overview reads counters only (SCARD, ZCARD, ZCOUNT,
// HLEN): its cost does not grow with the number of tasks or jobs. The JSON fields are the
// dashboard API's (see package github.com/gocrontab/crontab/dashboard):
// times in RFC 3339, durations in milliseconds.
//
// Exit status: 0 on success; 1 on failure (Redis unreachable, no such task
// or job, a trigger refused because the task is paused, disabled or still
// running, a set refused by Client.SetTask); 2 on a usage error (unknown
// command or flag, missing argument, a flag value that does not parse, an
// expression or zone explain cannot parse).
//
// The local zone of next and explain is $TZ, else the system's. explain
// marks an instant whose UTC offset differs from the one before it with
// "<- DST: CET -> CEST (+01:00 -> +02:00)" and what the daylight-saving
// policy did there: "02:30 CET is not on the clock: fired at the jump"
// (a fixed-time job), "...: skipped" (a job that follows real time),
// "02:30 CET again: the clock went back", "02:30 CET not repeated".
//
// Errors go to stderr, one line per failure, each beginning with "crontab: "
// once (the runtime's own "crontab: " prefix is not repeated). A usage error
// ends with "; run 'crontab --help' for usage"; a Redis that cannot be
// reached is one line whatever the command, and go-redis's own log lines are
// not printed:
//
//	$ crontab -redis redis://127.0.0.1:1 list
//	crontab: cannot reach Redis at 127.0.0.1:1 (connection refused); set -redis or REDIS_URL
//	$ crontab pause nosuch
//	crontab: set status of "nosuch": not found
//
// # Examples
//
//	$ crontab list
//	TASK           STATUS          SCHEDULE                        NEXT RUN                       LAST RUN   OUTCOME    RUNS  FAILED  SKIPPED  SOURCE
//	clean logs     active          daily:03:00                     2026-11-30 03:00:00  in 6h28m  -          -          0     0       0        static
//	flaky          active          every:10s                       2026-11-29 20:31:10  in 9.3s   693ms ago  failed 0ms 2     1       0        static
//	heartbeat      active          every:5s                        2026-11-29 20:31:05  in 4.3s   693ms ago  ok 0ms     3     0       0        static
//	minute report  active,running  cron:* * * * * (Europe/Berlin)  2026-11-29 20:32:00  in 59.3s  693ms ago  -          0     0       0        static
//	$ crontab pause "clean logs"
//	paused "clean logs"
//	$ crontab trigger "clean logs"
//	crontab: trigger "clean logs": it is paused: task is not active
//	$ crontab resume "clean logs"; crontab trigger "clean logs"
//	resumed "clean logs"
//	triggered "clean logs": fires at 2026-11-29 20:31:00.940 on one process; its schedule is unchanged
//	$ crontab history -limit 5 flaky
//	$ TZ=America/New_York crontab explain -tz Europe/Berlin -from 2027-03-26T00:00:00Z -n 4 "cron:30 2 * * *"
//	cron 30 2 * * *, Europe/Berlin
//	2027-03-26 02:30:00 CET    2027-03-25 21:30:00 EDT
//	2027-03-27 02:30:00 CET    2027-03-26 21:30:00 EDT
//	2027-03-28 03:00:00 CEST   2027-03-27 21:00:00 EDT   <- DST: CET -> CEST (+01:00 -> +02:00); 02:30 CET is not on the clock: fired at the jump
//	2027-03-29 02:30:00 CEST   2027-03-28 20:30:00 EDT
//	$ crontab next -n 3 "clean logs"
//	$ crontab set "nightly sms" -type "send sms" -expression daily:21:00 -tz Europe/Berlin -params '{"to":"+4917012345"}'
//	created "nightly sms": daily:21:00 (Europe/Berlin), active, next run 2026-12-01 15:00:00
//	$ crontab jobs -state dead -task "send sms"
//	$ crontab retry 8f2c0a91d4e6b7a3c5d1e2f0
//	$ crontab -o json list | jq -r '.[] | select(.status != "active") | .name'
//	$ crontab list -limit 100 -match 'tenant-42:*'
//	$ crontab list -limit 100 -match 'tenant-42:*' -cursor 1232
//	$ CRONTAB_TOKEN=s3cret crontab serve -addr :8080
//	$ crontab serve -read-only
//
// # The dashboard
//
// `crontab serve` serves the dashboard of package
// github.com/gocrontab/crontab/dashboard on -addr, and the namespace's
// Prometheus metrics (package github.com/gocrontab/crontab/metrics,
// Collector) at /metrics. It listens on 127.0.0.1:8080 by default, where
// it may run without credentials. On any other address it refuses to
// start unless -token (or $CRONTAB_TOKEN) or -basic-auth (or
// $CRONTAB_BASIC_AUTH) is set. With a token, open
// http://HOST:PORT/?token=TOKEN once (a cookie keeps you in), or answer the
// browser's basic-auth prompt with the token as the password; scripts and
// scrapers send "Authorization: Bearer TOKEN". With -read-only, nothing
// can be changed through it. It stops on SIGINT or SIGTERM.
package main
