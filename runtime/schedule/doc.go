// Package schedule parses gocrontab's schedule expressions and computes
// their fire times. It has no Redis dependency: tools, tests and the
// generator use it without the scheduler. The runtime package
// (github.com/gocrontab/crontab/runtime, imported as crontab) re-exports
// Parse, Schedule, Describe and IsOnce under the same names.
//
// # Expressions
//
// An expression is a form prefix and its argument, with no spaces around the
// colon:
//
//	every:N, every:Ns   every N seconds (N a positive integer)
//	every:Nm, every:Nh  every N minutes / hours
//	daily:HH:MM         every day at HH:MM (H or HH 0-23, MM 00-59), same as cron:MM HH * * *
//	hourly:MM           every hour at minute MM (0-59), same as cron:MM * * * *
//	cron:EXPR           a crontab(5) schedule: 5 fields or an @macro (see below)
//	at:UNIX             once, at that Unix time in seconds (a positive integer)
//
// An every: interval is at most 366 days. It is aligned to the Unix epoch and
// independent of the zone: Next(t) is the smallest multiple of the interval
// since 1970-01-01T00:00:00Z that is strictly after t, so every process
// computes the same instants without shared state, and run N is exactly N
// intervals after run 0 however long each run takes.
//
// An at: schedule returns its instant from Next while the instant is strictly
// after t, then the zero Time; IsOnce reports such schedules. Its instant is
// at most 9999-12-31T23:59:59Z.
//
// cron: takes exactly five fields separated by spaces or tabs (minute 0-59,
// hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-7 or
// SUN-SAT, where 0 and 7 are Sunday; names are case-insensitive), or one of
// @hourly, @daily, @midnight, @weekly, @monthly, @yearly and @annually. Each
// field is a comma-separated list of *, */STEP, N, N-M and N-M/STEP; a
// day-of-week range may end in 7 or SUN (FRI-SUN). As in cronie, when the
// day-of-month or the day-of-week field starts with *, a day must match both
// fields; when both are restricted it must match either. Seconds and years
// fields, ?, ~ (random values), N/STEP without a range, reversed ranges,
// steps of 0 or longer than the field's span, and schedules that can never
// fire (such as 0 0 30 2 * or 0 0 */20 * 5#2) are errors. Cron schedules end
// in 2099: after that Next returns the zero Time.
//
// # Calendar rules
//
// Beyond crontab(5), the day fields take the calendar rules of Quartz, with
// the semantics of github.com/hashicorp/cronexpr (which the tests check them
// against). They are case-insensitive and may be list elements next to
// plain values (1,L or MON,5L), but never part of a range or step:
//
//	L     day-of-month: the last day of the month (31, 30, 29 or 28)
//	LW    day-of-month: the last Monday-Friday of the month
//	NW    day-of-month: the Monday-Friday nearest day N (1-31) in the same
//	      month: a Saturday moves to the Friday before, a Sunday to the
//	      Monday after, but never across the month's boundary (1W on a
//	      Saturday the 1st is Monday the 3rd, 31W on a Sunday the 31st is
//	      Friday the 29th); a month without day N has no fire (31W skips
//	      30-day months)
//	DL    day-of-week: the last weekday D (0-7 or SUN-SAT) of the month;
//	      5L is the last Friday
//	D#K   day-of-week: the Kth (1-5) weekday D of the month; 5#3 is the
//	      third Friday, and 5#5 skips months without a fifth Friday
//
// Each rule adds the days it picks to its field, and the two day fields
// combine by the same rule as plain values: 0 0 L * * fires on the last day
// of every month, 0 0 * * 5L on the last Friday, 0 0 L * 5 on the last day
// and on every Friday (both restricted: either), and 0 0 */2 * 5#1 on the
// first Friday only when it is an odd day (a field starts with *: both).
// L alone in the day-of-week field (Quartz's Saturday), L-N offsets, W in
// the day-of-week field and # in the day-of-month field are errors. A day a
// calendar rule picks is like any other day under the daylight-saving
// policy below.
//
// # Daylight-saving time
//
// daily:, hourly: and cron: schedules follow cronie's daylight-saving policy
// in the schedule's zone. A job whose minute or hour field starts with * (a
// "wildcard" job, hourly: included) follows real time: wall-clock times
// skipped by a spring-forward transition never fire, and wall-clock times
// repeated by a fall-back transition fire on both occurrences. Any other job
// (a "fixed-time" job, daily: included) fires once per wall-clock time: a
// time that falls in a spring-forward gap fires at the instant of the jump
// (once, however many times in the gap match), and a time in a repeated
// fall-back range fires on its first occurrence only.
//
// # Jitter
//
// A task with a jitter D (the directive key jitter, TaskConfig.Jitter,
// TaskSpec.Jitter; 0 to MaxJitter, whole milliseconds) fires at its
// expression's instants plus a stable offset in [0, D): JitterOffset, the
// FNV-64a hash of the task's key modulo D in milliseconds, the same in every
// process and release. Offset wraps a parsed schedule with it, so a parse
// (and Cache) stays per expression and zone while the offset is per task.
// The offset is added in absolute time to the instant the daylight-saving
// policy yields.
//
// # Limits
//
// Expressions longer than 256 bytes are rejected. Parse never panics, and
// Next never loops without bound. The schedules Parse returns are immutable
// and safe for concurrent use; each also implements fmt.Stringer with the
// description in words Describe returns ("at 09:00 on the third Friday of
// the month").
package schedule
