// Package runtime is gocrontab's run time: the task interface, the
// registry that crontabgen fills, schedule expressions, the Scheduler that
// fires tasks on Redis, and the Client for delayed jobs and run-time tasks.
// Users import it as crontab:
//
//	import crontab "github.com/gocrontab/crontab/runtime"
//
// The task interface, TaskConfig and the Registry are defined in package
// registry (github.com/gocrontab/crontab/runtime/registry), and schedule
// expressions, with their grammar, in package schedule
// (github.com/gocrontab/crontab/runtime/schedule); neither needs Redis, so
// tools such as crontabgen use them without this package. This package
// re-exports their names (crontab.TaskConfig, crontab.Parse and the rest)
// as aliases and wrappers.
//
// # Errors
//
// An error from this package's functions and methods begins with
// "crontab: " once, followed by what was being done and to what
// ("crontab: set status of \"nightly\": not found"). The sentinel errors
// (ErrNotFound, ErrDuplicate, ErrNotActive, ErrRunning) carry no prefix:
// they are only returned wrapped in such an error, and are meant for
// errors.Is. A program that prints these errors under its own name (the
// crontab command does: "crontab: ...") strips the leading "crontab: "
// rather than doubling it.
//
// # Design: leaderless claims, one master for housekeeping
//
// Every process runs the same dispatch loop; none of them is a leader for
// firing. The loop sleeps until the head of the queue ZSET is due (woken
// early by a message on the wake channel when an earlier entry appears,
// and never sleeping longer than WithMaxSleep), reads the due task hashes,
// computes each task's next instant in Go (cron is not expressible in
// Lua), and calls one Lua script that, per task and atomically, compares
// the hash's next_run with the instant it read (compare-and-set), moves
// next_run on, and takes the task's lock, writes the run's lease (a field
// of the runs hash) and gives it a run lease. Exactly one
// process wins each instant; the others see the moved next_run and do
// nothing. A process that was stopped or partitioned while it prepared a
// claim cannot fire a stale instant: its compare-and-set fails (fencing).
// Because there is no leader to elect, losing a process costs no failover
// time: the survivors' next claim simply wins.
//
// The one process holding lock:master (SET NX PX, renewed each heartbeat,
// released by compare-and-delete) does the once-per-namespace housekeeping:
// it records runs whose process died as abandoned and frees their locks,
// delivers again jobs whose lease expired, puts enabled tasks back in the
// queue, prunes tasks that no live build declares, and sweeps the
// namespace a page at a time for broken invariants (a job record in no
// state, a lock of a gone process held for no run in progress, an older
// release's lease of a gone process with no running entry, a queue member
// with no task), repairing and counting them. If it dies, another
// process takes the lock within the process TTL; firing never waits for it.
//
// Processes may run different sets of tasks: a build's types, limited by
// WithTasks (process roles). Each publishes the names of the types it runs;
// a process claims only tasks and jobs of its types, and the fires of an
// instant are split among the live processes that can run them (share.go).
// Instants that follow each other closely (3 or more within coalesceSpan,
// 3 ms: jittered tasks) are claimed together at the last of them, split
// among the processes by task key; their fires start up to coalesceSpan
// after their instant, never before it (dispatch.go).
//
// Time is Redis server time: each process measures the offset of its clock
// from TIME and every script reads TIME itself, so processes with skewed
// clocks agree and nothing fires early.
//
// A task with a jitter (TaskConfig.Jitter, TaskSpec.Jitter, the directive
// key jitter) fires at its expression's instants moved later by a stable
// offset of its key (schedule.JitterOffset, schedule.Offset): the moved
// instant is the task's instant everywhere (next_run, the claim's
// compare-and-set, RunInfo.Fire), so once per instant and never early hold
// as without jitter. Every process computes the same offset from the key.
//
// # Redis layout
//
// All keys of a namespace (WithNamespace, default "crontab") carry the hash
// tag {namespace}, so they live in one Redis Cluster slot and every script,
// which declares each key it touches, runs on Cluster unchanged:
//
//	{ns}:queue          ZSET task key -> next run (unix ms)
//	{ns}:task:<key>     HASH of a declared task: class, name, expression, next_run,
//	                         last_run, status, interval, created_at, tz, timeout,
//	                         concurrent, misfire, retries, type, source, runs,
//	                         failures, skips, last_result, last_error,
//	                         last_duration; only when set: max_running, rate_n,
//	                         rate_per_ms, priority, and jitter (ms: its instants
//	                         are the expression's plus schedule.JitterOffset(key,
//	                         jitter), FNV-64a of the key mod the jitter; next_run
//	                         already has the offset)
//	                    HASH of a run-time task (SetTask, SetTasks): type,
//	                         expression, next_run, created_at; only when not
//	                         the default: status (active), tz (UTC), timeout
//	                         (the type's), concurrent (no), misfire (once),
//	                         params (none), max_running, jitter; from its first
//	                         fire: last_run, runs, failures, skips, last_result,
//	                         last_error, last_duration. Its name is <key>, its
//	                         class its type's in {ns}:classes, its interval is
//	                         computed from expression, tz and jitter when read
//	                         (Inspector, crontab show), and it has no source: a
//	                         hash without source is a run-time task (dynamic),
//	                         a declared task's always has source static. A hash
//	                         an older release wrote (status, source dynamic) is
//	                         read the same, and made compact when set again
//	{ns}:classes        HASH run-time task type -> class (the Go type), written by SetTasks
//	{ns}:lock:task:<key> STR "process|fire_ms" while a non-concurrent run runs
//	{ns}:lock:master    STR  the housekeeping process
//	{ns}:runs           HASH "<key>@<fire_ms>" (run id) -> lease (JSON: process, task, fire, start)
//	                         of each run in progress; the claim writes it, the finish (or the reap
//	                         of a dead process's run, or a takeover) deletes it; no TTL
//	{ns}:running        SET  an older release's run ids of its runs in progress, and
//	{ns}:run:<id>       STR  its lease of one run, expiring its timeout plus two heartbeats after
//	                         the claim or its last renewal: read, reaped and swept (never written)
//	                         for a namespace an older release shares during a rolling upgrade
//	{ns}:alive          ZSET run id -> deadline of its run lease, renewed every 250 ms
//	{ns}:pulse          HASH last, since: when run leases were last renewed, and since when steadily
//	{ns}:tasks          SET  the declared tasks' keys (a run-time task is in the queue or unqueued only)
//	{ns}:unqueued       SET  task keys not in the queue: disabled, or no instant left (the master's requeue reads it first)
//	{ns}:declared       ZSET task key -> when a live process last declared it
//	{ns}:history:<name> LIST run records (JSON), newest first, capped by count and age
//	{ns}:processes      ZSET process id -> last heartbeat; {ns}:process:<id> HASH
//	                         (host, pid, version, started, beat, running, tasks, types digest,
//	                         task_names JSON, limits JSON of its limited job types)
//	{ns}:jobs           ZSET job id -> due (unix ms)
//	{ns}:jobs:data      HASH job id -> envelope JSON
//	{ns}:jobs:owner     HASH job id -> "<claim id>|<due ms>": the claim ("<process>#<n>") running it, and the due it was claimed at
//	{ns}:jobs:first     HASH job id -> when a job put back in the queue (released, retried, redelivered) was first due
//	{ns}:jobs:lease     ZSET claim id -> lease deadline: one lease per claim, not per job
//	{ns}:jobs:failed    HASH job id -> 1: a unique job waiting for the retry of a failed attempt
//	{ns}:jobs:attempt, {ns}:dead, {ns}:dead:data, {ns}:stats, {ns}:sweep
//	{ns}:stats:min      HASH the last hour per minute (60 slots): task fires, failures, start lag,
//	                         job attempts, added by the finish and ack scripts (Inspector.MinuteStats)
//	{ns}:slots:<type>   HASH process id -> "n|deadline_ms": the running slots of a job type with
//	                         max_running that process holds, until the deadline (Redis time)
//	{ns}:fireslots:<group> ZSET run id -> run lease deadline: the fires of a capped type running
//	                         (or of a run-time task with a cap of its own, group "task:<key>")
//	{ns}:rate:<type>, {ns}:ratekey:<len>:<type>:<key>  ZSET starts in a job type's rate window
//	{ns}:unique:<identity> STR "<job id>|<expiry ms>": the job holding a unique identity (Unique)
//	{ns}:unique         ZSET identity -> when the master next looks at its key (deleted once free)
//	{ns}:jobs:prio:<p>  ZSET job id -> due (unix ms): the pending jobs of priority p, in a namespace
//	                         where some type has a priority; a hint the claims check against {ns}:jobs
//	{ns}:meta           HASH its loss tells the processes Redis lost its data
//	{ns}:wake           pub/sub channel
//	{ns}:quarantine:<name>:<ms>  a foreign value (wrong type) found in key <name>, moved aside
//
// An operator changes a task's status with a plain HSET; it takes effect at
// the task's next instant (paused: skipped and counted; disabled: taken out
// of the queue), and a task made active again is queued at its next future
// instant within a heartbeat (while fewer than 2,000 tasks are disabled;
// beyond that within disabled/2,000 heartbeats: the master reads a bounded
// page of the disabled tasks and of all tasks per heartbeat):
//
//	redis-cli HSET '{crontab}:task:clean logs' status paused
//
// # Enqueueing from other languages
//
// A producer without the Go types enqueues a job with two commands (and,
// so that sleeping schedulers look at once, a PUBLISH):
//
//	HSET    {ns}:jobs:data <id> '{"task":"send sms","payload":{"to":"+100","text":"hi"}}'
//	ZADD    {ns}:jobs <due unix ms> <id>
//	PUBLISH {ns}:wake job
//
// The HSET must come first (or both in MULTI). "task" is the registered
// name of the job type (the directive's name); "payload" is the JSON the
// type decodes; an optional "retries" overrides the type's retry count, and
// an optional "fire" (unix ms) the scheduled instant its runs report
// (RunInfo.Fire; by default the job's first due time). The
// id must be unique among pending, running and dead jobs. Cancel is
// ZREM {ns}:jobs <id> followed, if it removed one, by HDEL of the data.
//
// In a namespace where some job type has a priority (TaskConfig.Priority),
// the producer also adds the job to the index of its type's priority (0
// for a type without one), with the same score:
//
//	ZADD    {ns}:jobs:prio:<priority> <due unix ms> <id>
//
// A job left out of its index is still claimed, once it is among the 64
// oldest due jobs (a claim indexes those it finds in no index), but until
// then it waits behind the jobs that are in one.
//
// A unique job (Unique) takes its identity in the same atomic step as its
// enqueue, so the producer runs this script (EVAL, or EVALSHA after
// SCRIPT LOAD) instead of the HSET and ZADD:
//
//	-- BEGIN unique enqueue
//	local t = redis.call('TIME')
//	local now = t[1] * 1000 + math.floor(t[2] / 1000)
//	local v = redis.call('GET', KEYS[6])
//	if v then
//	  local id, exp = string.match(v, '^(.*)|(%d+)$')
//	  if id and (now < tonumber(exp) or redis.call('HEXISTS', KEYS[3], id) == 1 or
//	      (redis.call('ZSCORE', KEYS[1], id) and redis.call('HEXISTS', KEYS[4], id) == 0)) then
//	    return id
//	  end
//	end
//	redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
//	redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
//	redis.call('SET', KEYS[6], ARGV[1] .. '|' .. (now + tonumber(ARGV[3])))
//	redis.call('ZADD', KEYS[5], now + tonumber(ARGV[3]), ARGV[5])
//	return ARGV[1]
//	-- END unique enqueue
//
// with KEYS {ns}:jobs, {ns}:jobs:data, {ns}:jobs:owner, {ns}:jobs:failed,
// {ns}:unique, {ns}:unique:<identity> and ARGV the job's id, its envelope
// (with "unique":"<identity>" added, so that Cancel frees the identity),
// the ttl in ms, the delay in ms, and the identity. It returns the id of
// the job that holds the identity: the new job's, or, for a duplicate, the
// existing one's (nothing written). The identity is "<task>|" followed by
// the hex of the first 16 bytes of the SHA-256 of the payload bytes exactly
// as they stand in the envelope (Go's client encodes a struct with
// encoding/json: its fields in order, no spaces), or "<task>|key:<key>"
// for a key the producer chooses (UniqueKey); UniqueIdentity computes it.
// The key {ns}:unique:<identity> holds "<job id>|<expiry unix ms>"; the
// master deletes it once the expiry passed and the job no longer holds it
// (see Unique), and the ZSET {ns}:unique indexes those keys by expiry.
//
// # Guarantees
//
//   - Each scheduled instant of a task fires once across all processes,
//     while at least one runs. After downtime, the task's misfire policy
//     applies once: one catch-up run (once) or none (skip).
//   - A non-concurrent task never runs twice at once: its lock is held, and
//     renewed, for as long as the run lasts; a fire that finds it held is
//     skipped and recorded in the history.
//   - A task type's max_running (TaskConfig.MaxRunning) caps the runs in
//     progress at once of all its scheduled tasks (a registered task is its
//     own type; run-time tasks share their type's) across every process: a
//     fire over the cap is skipped and recorded, as for a held lock
//     (SkipMaxRunning), and the schedule moves on. The cap is the one in
//     the registry (the code) of the process that claims the fire. The
//     slots of a process that dies free when its runs' run leases run out
//     (WithRunLease, 1.5 s), not while Redis stalls. A type without a cap
//     pays nothing for it.
//   - A job type's max_running caps its jobs running at once across every
//     process: over it, its jobs wait in the queue. A process holds
//     running slots for the jobs of the type it has claimed and not yet
//     ended, and runs no more of them at once than it holds; it may hold up
//     to eight jobs per slot (the others wait in the process for a slot),
//     so a job's end starts the next at once, and claims more when half are
//     left. Its claim asks for slots from its
//     count of jobs in hand and gives back the rest, so a slot goes to
//     another process at the holder's next claim.
//     A dead or stalled process's slots free when its job lease (twice the
//     process TTL) runs out; a stopping one deletes them once its jobs end.
//   - A run whose process dies is recorded as abandoned and the task keeps
//     its schedule: a non-concurrent task's lock is taken over by the claim
//     of its next instant, which waits for the run's run lease to run out
//     (WithRunLease, 1.5 s), any other run is recorded within about the process TTL
//     (WithProcessTTL); a job whose process dies is delivered again (at
//     least once) with its attempt number increased.
//   - Every attempt of a job reports the same scheduled instant
//     (RunInfo.Fire, FireTime): when the job was first due, whatever
//     releases, retries and redeliveries moved it since; the retry of a
//     failed scheduled fire reports the fire's instant. When the attempt
//     itself became due is RunInfo.Due.
//   - A panic in a handler is a failed run; bad data in Redis is logged and
//     skipped (a key of the layout holding the wrong type is moved aside to
//     {ns}:quarantine:<name>:<ms>: the singleton keys and the flow-control
//     keys of a process's limited types at start and periodically; a RateKey
//     window or a run-time task's fire slot key, whose names come with the
//     jobs and tasks, by the process whose claim found it, its jobs waiting
//     meanwhile and its fire running uncapped).
//   - When Redis is down, restarting (empty or from its AOF), stalled or
//     failing over, firing resumes as soon as it answers, and no process is
//     judged dead until all had a process TTL to check in again. RELIABILITY.md
//     lists the faults, the tests that prove each guarantee, and the limits
//     (asynchronous replication, handlers of a stopped process).
//   - A process started while Redis is down or loading waits for it: Run
//     retries its start with backoff (WithStartTimeout bounds the wait) and
//     closes Ready once it registered. Scheduler.HealthHandler serves the
//     liveness and readiness probes of Kubernetes; liveness does not fail
//     because Redis is down.
package runtime
