package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Option configures a Scheduler, a Client or an Inspector. Each option
// documents its default, its range and who uses it ("Scheduler and Client"
// options are the Inspector's too). A value outside the range
// is an error from NewScheduler (and from every call of a Client built with
// it), naming the option; so is an option given to the one that cannot use
// it: nothing is silently clamped or ignored.
type Option func(*options)

// The defaults and bounds of the options.
const (
	// DefaultNamespace is the namespace of WithNamespace.
	DefaultNamespace = "crontab"
	// MaxNamespace is the longest namespace, in bytes.
	MaxNamespace = 100
	// DefaultWorkers is how many handlers a scheduler runs at once.
	DefaultWorkers = 64
	// MaxWorkers bounds WithWorkers: one goroutine and one worker token each.
	MaxWorkers = 1 << 16
	// DefaultBatch is how many due entries one claim takes.
	DefaultBatch = 256
	// MaxBatch bounds WithBatch. A job claim takes up to two batches (its
	// free workers and as many claimed ahead) in one script call that holds
	// Redis for about 5 µs a job: 4,096 keeps it near 40 ms.
	MaxBatch = 4096
	// DefaultGracePeriod is how long Run waits for running handlers.
	DefaultGracePeriod = 30 * time.Second
	// DefaultMaxSleep caps the dispatch loop's sleep.
	DefaultMaxSleep = time.Second
	// MinMaxSleep and MaxMaxSleep bound WithMaxSleep.
	MinMaxSleep, MaxMaxSleep = 10 * time.Millisecond, time.Minute
	// DefaultMaxPayload bounds the JSON payload a Client enqueues.
	DefaultMaxPayload = 1 << 20
	// MaxMaxPayload bounds WithMaxPayload (Redis bounds a string at 512 MiB).
	MaxMaxPayload = 256 << 20
	// DefaultHistoryRecords and DefaultHistoryAge bound each task's history.
	DefaultHistoryRecords, DefaultHistoryAge = 100, 7 * 24 * time.Hour
	// MaxHistoryRecords bounds WithHistory's records.
	MaxHistoryRecords = 100000
	// DefaultProcessTTL is how long after its last heartbeat a process
	// counts as dead.
	DefaultProcessTTL = 5 * time.Second
	// MinProcessTTL and MaxProcessTTL bound WithProcessTTL.
	MinProcessTTL, MaxProcessTTL = 500 * time.Millisecond, 10 * time.Minute
	// DefaultRunLease is how long a run stays its process's without a
	// renewal of its run lease (WithRunLease): a pause of the process of
	// up to 5/6 of it (1.25 s) is tolerated; a killed process's lock is
	// taken over when it runs out, by the claim of the task's next instant.
	DefaultRunLease = 1500 * time.Millisecond
	// MinRunLease and MaxRunLease bound WithRunLease.
	MinRunLease, MaxRunLease = 300 * time.Millisecond, 10 * time.Minute
	// DefaultRetryBackoff is the delay before a failed job's first retry.
	DefaultRetryBackoff = time.Second
	// MaxRetryBackoff bounds WithRetryBackoff.
	MaxRetryBackoff = time.Hour
	// DefaultDeadLetters bounds the dead-letter set.
	DefaultDeadLetters = 10000
	// MaxDeadLetters bounds WithDeadLetters.
	MaxDeadLetters = 10_000_000
	// MaxProcessID is the longest process id, in bytes.
	MaxProcessID = 200
	// DefaultStartTimeout is WithStartTimeout's default: zero, Run waits
	// for Redis until its ctx ends.
	DefaultStartTimeout = time.Duration(0)
	// MinStartTimeout and MaxStartTimeout bound a non-zero WithStartTimeout.
	MinStartTimeout, MaxStartTimeout = 100 * time.Millisecond, 24 * time.Hour
)

// optionScope says who can use an option.
type optionScope int

const (
	scopeBoth      optionScope = iota
	scopeScheduler             // a Scheduler only
	scopeClient                // a Client only
	scopeInspector             // NewInspector: only the options of both
)

// options holds every setting with its default applied.
type options struct {
	namespace    string
	logger       *slog.Logger
	workers      int
	grace        time.Duration
	maxSleep     time.Duration
	batch        int
	processID    string
	version      string
	hooks        Hooks
	listeners    []Listener
	middleware   []Middleware
	maxPayload   int
	historyLen   int
	historyAge   time.Duration
	heartbeat    time.Duration
	processTTL   time.Duration
	runLease     time.Duration
	localClock   func() time.Time
	deadLetters  int
	retryBackoff time.Duration
	provide      []TaskInterface // Provide's values, checked by NewScheduler
	startTimeout time.Duration
	tasks        []string // WithTasks; nil: every registered task (roles.go)
	tasksGiven   bool
	// afterBeat, a test's hook, runs in the maintenance loop right after
	// each successful heartbeat (nil: nothing).
	afterBeat func()

	// used lists the options given, by name and scope; errs their bad
	// values. build turns both into one error.
	used []usedOption
	errs []error
}

type usedOption struct {
	name  string
	scope optionScope
}

func defaultOptions() options {
	return options{
		namespace:    DefaultNamespace,
		logger:       slog.Default(),
		workers:      DefaultWorkers,
		grace:        DefaultGracePeriod,
		maxSleep:     DefaultMaxSleep,
		batch:        DefaultBatch,
		maxPayload:   DefaultMaxPayload,
		historyLen:   DefaultHistoryRecords,
		historyAge:   DefaultHistoryAge,
		heartbeat:    DefaultProcessTTL / 5,
		processTTL:   DefaultProcessTTL,
		runLease:     DefaultRunLease,
		localClock:   time.Now,
		deadLetters:  DefaultDeadLetters,
		retryBackoff: DefaultRetryBackoff,
	}
}

// use records that the option name was given, and a bad value when msg is
// not empty.
func (o *options) use(name string, scope optionScope, msg string, args ...any) {
	o.used = append(o.used, usedOption{name, scope})
	if msg != "" {
		o.errs = append(o.errs, fmt.Errorf("crontab: %s: %s", name, fmt.Sprintf(msg, args...)))
	}
}

// buildOptions applies opts for a user of the given scope (scopeScheduler
// or scopeClient) and returns the settings, or an error naming every option
// with a bad value or given to the wrong user.
func buildOptions(scope optionScope, opts []Option) (options, error) {
	o := defaultOptions()
	for i, opt := range opts {
		if opt == nil {
			o.errs = append(o.errs, fmt.Errorf("crontab: option %d is nil", i))
			continue
		}
		opt(&o)
	}
	users := map[optionScope]string{scopeScheduler: "Scheduler", scopeClient: "Client", scopeInspector: "Inspector"}
	using := map[optionScope]string{scopeScheduler: "a Scheduler", scopeClient: "a Client", scopeInspector: "an Inspector"}
	for _, u := range o.used {
		if u.scope != scopeBoth && u.scope != scope {
			o.errs = append(o.errs, fmt.Errorf("crontab: %s is a %s option: %s cannot use it", u.name, users[u.scope], using[scope]))
		}
	}
	return o, errors.Join(o.errs...)
}

// WithNamespace sets the prefix of every Redis key; Scheduler and Client.
// All keys of a namespace share one Redis Cluster hash slot ({namespace}
// is their hash tag). The default is DefaultNamespace; it must be 1 to
// MaxNamespace bytes without '{' or '}'.
func WithNamespace(ns string) Option {
	return func(o *options) {
		switch {
		case ns == "" || len(ns) > MaxNamespace:
			o.use("WithNamespace", scopeBoth, "namespace %q must be 1 to %d bytes", ns, MaxNamespace)
		case strings.ContainsAny(ns, "{}"):
			o.use("WithNamespace", scopeBoth, "namespace %q must not contain '{' or '}' (it is the keys' hash tag)", ns)
		default:
			o.use("WithNamespace", scopeBoth, "")
			o.namespace = ns
		}
	}
}

// WithLogger sets the structured logger; Scheduler and Client. The default
// is slog.Default(); nil silences it entirely.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		o.use("WithLogger", scopeBoth, "")
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		o.logger = l
	}
}

// WithWorkers bounds how many handlers run at once in this process;
// Scheduler. The default is DefaultWorkers; the range is 1 to MaxWorkers.
// It also bounds a claim of due tasks to the workers free at the time:
// with short handlers, a process that drains thousands of tasks due at one
// instant claims in bigger batches with more workers (with WithBatch at
// least as large), and each fire then costs less of Redis and of this
// process (BenchmarkDrainFires in BENCHMARKS.md: 512 workers and batch
// drained 26-40% more fires/s than the defaults).
func WithWorkers(n int) Option {
	return func(o *options) {
		if n < 1 || n > MaxWorkers {
			o.use("WithWorkers", scopeScheduler, "%d is outside [1, %d]", n, MaxWorkers)
			return
		}
		o.use("WithWorkers", scopeScheduler, "")
		o.workers = n
	}
}

// WithGracePeriod is how long Run waits, after its ctx ends, for running
// handlers to finish before it cancels them; Scheduler. The default is
// DefaultGracePeriod; zero means handlers are cancelled at once; it must
// not be negative.
func WithGracePeriod(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.use("WithGracePeriod", scopeScheduler, "%v is negative", d)
			return
		}
		o.use("WithGracePeriod", scopeScheduler, "")
		o.grace = d
	}
}

// WithMaxSleep caps how long the dispatch loop sleeps when it was not woken
// by a change of the queue, so nothing depends on a message arriving;
// Scheduler. The default is DefaultMaxSleep; the range is MinMaxSleep to
// MaxMaxSleep.
func WithMaxSleep(d time.Duration) Option {
	return func(o *options) {
		if d < MinMaxSleep || d > MaxMaxSleep {
			o.use("WithMaxSleep", scopeScheduler, "%v is outside [%v, %v]", d, MinMaxSleep, MaxMaxSleep)
			return
		}
		o.use("WithMaxSleep", scopeScheduler, "")
		o.maxSleep = d
	}
}

// WithBatch is how many due entries one claim takes; Scheduler. The
// default is DefaultBatch; the range is 1 to MaxBatch. It also bounds the
// jobs a process claims ahead of its free workers, as many as it has
// finished since its previous claim: a job claimed ahead that no worker
// takes within a second, or that has not started when the scheduler stops,
// is given back to the queue.
func WithBatch(n int) Option {
	return func(o *options) {
		if n < 1 || n > MaxBatch {
			o.use("WithBatch", scopeScheduler, "%d is outside [1, %d]", n, MaxBatch)
			return
		}
		o.use("WithBatch", scopeScheduler, "")
		o.batch = n
	}
}

// WithProcessID names this process in locks, history and heartbeats;
// Scheduler. The default is "host:pid:random"; an id is 1 to MaxProcessID
// bytes.
func WithProcessID(id string) Option {
	return func(o *options) {
		if id == "" || len(id) > MaxProcessID {
			o.use("WithProcessID", scopeScheduler, "id %q must be 1 to %d bytes", id, MaxProcessID)
			return
		}
		o.use("WithProcessID", scopeScheduler, "")
		o.processID = id
	}
}

// WithVersion is the application version shown in this process's
// heartbeat; Scheduler. The default is empty.
func WithVersion(v string) Option {
	return func(o *options) {
		o.use("WithVersion", scopeScheduler, "")
		o.version = v
	}
}

// WithHooks sets the functions called around every run; Scheduler. The
// zero Hooks calls nothing.
func WithHooks(h Hooks) Option {
	return func(o *options) {
		o.use("WithHooks", scopeScheduler, "")
		o.hooks = h
	}
}

// WithListener adds a listener told of every completed run; Scheduler.
// None by default; nil is an error.
func WithListener(l Listener) Option {
	return func(o *options) {
		if l == nil {
			o.use("WithListener", scopeScheduler, "the listener is nil")
			return
		}
		o.use("WithListener", scopeScheduler, "")
		o.listeners = append(o.listeners, l)
	}
}

// WithMiddleware adds a middleware around every handler call; the first
// added is the outermost; Scheduler. None by default; nil is an error.
func WithMiddleware(m Middleware) Option {
	return func(o *options) {
		if m == nil {
			o.use("WithMiddleware", scopeScheduler, "the middleware is nil")
			return
		}
		o.use("WithMiddleware", scopeScheduler, "")
		o.middleware = append(o.middleware, m)
	}
}

// WithMaxPayload bounds the JSON size of a job's payload that a Client
// enqueues; Client. The default is DefaultMaxPayload; the range is 1 to
// MaxMaxPayload bytes. It guards Redis against producers: a scheduler runs
// a job already stored in Redis (by a producer in another language)
// whatever its size.
func WithMaxPayload(bytes int) Option {
	return func(o *options) {
		if bytes < 1 || bytes > MaxMaxPayload {
			o.use("WithMaxPayload", scopeClient, "%d is outside [1, %d]", bytes, MaxMaxPayload)
			return
		}
		o.use("WithMaxPayload", scopeClient, "")
		o.maxPayload = bytes
	}
}

// WithHistory bounds each task's run history by count and age; Scheduler.
// The defaults are DefaultHistoryRecords and DefaultHistoryAge; records
// must be 0 to MaxHistoryRecords and age at least a second. Records 0
// keeps no history: the process writes no record of the runs it ends or
// skips (a task's hash still has its last result and counters; hooks,
// listeners and metrics still hear of every run), which at tenant scale
// saves the history list's ~400 B of Redis per task and its writes.
func WithHistory(records int, age time.Duration) Option {
	return func(o *options) {
		switch {
		case records < 0 || records > MaxHistoryRecords:
			o.use("WithHistory", scopeScheduler, "records %d is outside [0, %d]", records, MaxHistoryRecords)
		case age < time.Second:
			o.use("WithHistory", scopeScheduler, "age %v is under 1s", age)
		default:
			o.use("WithHistory", scopeScheduler, "")
			o.historyLen, o.historyAge = records, age
		}
	}
}

// WithProcessTTL is how long after its last heartbeat a process counts as
// dead: its runs are then abandoned and its locks released (a lock whose
// run lease expired is taken over sooner, see WithRunLease); Scheduler and
// Client (which reads liveness with it). Heartbeats are sent every TTL/5.
// The default is DefaultProcessTTL; the range is MinProcessTTL to
// MaxProcessTTL.
func WithProcessTTL(d time.Duration) Option {
	return func(o *options) {
		if d < MinProcessTTL || d > MaxProcessTTL {
			o.use("WithProcessTTL", scopeBoth, "%v is outside [%v, %v]", d, MinProcessTTL, MaxProcessTTL)
			return
		}
		o.use("WithProcessTTL", scopeBoth, "")
		o.processTTL = d
		o.heartbeat = d / 5
	}
}

// WithRunLease is how long a run of a task stays this process's without
// a renewal of its run lease; Scheduler. Each process renews the run
// leases of all its runs in progress with one call every TTL/6, whatever
// it runs (the call is also its pulse, which tells a Redis stall from a
// dead process). A claim that finds a non-concurrent task's lock held by
// a run whose run lease expired, while Redis served steadily (pulses at
// most TTL/2 apart) for a whole TTL, records that run abandoned and takes
// the lock (a claim that finds the lease running out within a TTL of its
// instant waits for it): a killed process's task fires its next instant
// about a TTL after its last renewal, instead of after the process TTL. So a
// process stopped (a GC or VM pause, SIGSTOP) or cut off from Redis for
// longer than 5/6 of the TTL loses its runs in progress: another process
// may start the task while the stopped handler, once continued, still
// runs. A Redis stall or outage of any length loses nothing. Processes
// that share a namespace should use the same value. The default is
// DefaultRunLease; the range is MinRunLease to MaxRunLease.
func WithRunLease(ttl time.Duration) Option {
	return func(o *options) {
		if ttl < MinRunLease || ttl > MaxRunLease {
			o.use("WithRunLease", scopeScheduler, "%v is outside [%v, %v]", ttl, MinRunLease, MaxRunLease)
			return
		}
		o.use("WithRunLease", scopeScheduler, "")
		o.runLease = ttl
	}
}

// WithRetryBackoff is the delay before a failed job's first retry; each
// further retry waits twice as long (capped at an hour), with ±20% jitter;
// Scheduler. The default is DefaultRetryBackoff; the range is 1ms to
// MaxRetryBackoff.
func WithRetryBackoff(d time.Duration) Option {
	return func(o *options) {
		if d < time.Millisecond || d > MaxRetryBackoff {
			o.use("WithRetryBackoff", scopeScheduler, "%v is outside [1ms, %v]", d, MaxRetryBackoff)
			return
		}
		o.use("WithRetryBackoff", scopeScheduler, "")
		o.retryBackoff = d
	}
}

// WithDeadLetters bounds the dead-letter set: past it the oldest dead jobs
// are dropped; Scheduler. The default is DefaultDeadLetters; the range is 1
// to MaxDeadLetters.
func WithDeadLetters(n int) Option {
	return func(o *options) {
		if n < 1 || n > MaxDeadLetters {
			o.use("WithDeadLetters", scopeScheduler, "%d is outside [1, %d]", n, MaxDeadLetters)
			return
		}
		o.use("WithDeadLetters", scopeScheduler, "")
		o.deadLetters = n
	}
}

// WithLocalClock replaces the process's local clock; Scheduler. It exists
// for tests of clock skew: the scheduler measures the offset of this clock
// from Redis server time and schedules by the server. The default is
// time.Now; nil is an error.
func WithLocalClock(now func() time.Time) Option {
	return func(o *options) {
		if now == nil {
			o.use("WithLocalClock", scopeScheduler, "the clock is nil")
			return
		}
		o.use("WithLocalClock", scopeScheduler, "")
		o.localClock = now
	}
}

// WithStartTimeout bounds how long Run waits for Redis at start;
// Scheduler. Run retries every step of its start that talks to Redis
// (clock sync, quarantine, heartbeat, registration) while the error is
// transient (Redis unreachable, timing out, loading its data, failing
// over), backing off from 100ms to 5s; with a timeout it gives up once d
// has passed since Run was called and returns the last error, wrapped with
// the address and the number of attempts. The default is
// DefaultStartTimeout: zero, Run waits until its ctx ends; a non-zero d
// must be MinStartTimeout to MaxStartTimeout.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) {
		if d != 0 && (d < MinStartTimeout || d > MaxStartTimeout) {
			o.use("WithStartTimeout", scopeScheduler, "%v is outside [%v, %v] (0 waits until Run's ctx ends)", d, MinStartTimeout, MaxStartTimeout)
			return
		}
		o.use("WithStartTimeout", scopeScheduler, "")
		o.startTimeout = d
	}
}
