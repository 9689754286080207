package runtime

import (
	"log/slog"
	"time"
)

// Option configures a Scheduler or a Client. Options that make no sense for
// one of them are ignored by it.
type Option func(*options)

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
	localClock   func() time.Time
	deadLetters  int
	retryBackoff time.Duration
}

func defaultOptions() options {
	return options{
		namespace:    "crontab",
		logger:       slog.Default(),
		workers:      64,
		grace:        30 * time.Second,
		maxSleep:     time.Second,
		batch:        256,
		maxPayload:   1 << 20,
		historyLen:   100,
		historyAge:   7 * 24 * time.Hour,
		heartbeat:    time.Second,
		processTTL:   5 * time.Second,
		localClock:   time.Now,
		deadLetters:  10000,
		retryBackoff: time.Second,
	}
}

func buildOptions(opts []Option) options {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithNamespace sets the prefix of every Redis key. All keys of a namespace
// share one Redis Cluster hash slot ({namespace} is their hash tag). The
// default is "crontab"; empty keeps the default.
func WithNamespace(ns string) Option {
	return func(o *options) {
		if ns != "" {
			o.namespace = ns
		}
	}
}

// WithLogger sets the structured logger. The default is slog.Default(); nil
// silences the scheduler entirely.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		o.logger = l
	}
}

// WithWorkers bounds how many handlers run at once in this process. The
// default is 64; zero or less keeps the default.
func WithWorkers(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.workers = n
		}
	}
}

// WithGracePeriod is how long Run waits, after its ctx ends, for running
// handlers to finish before it cancels them. The default is 30s; zero means
// handlers are cancelled at once.
func WithGracePeriod(d time.Duration) Option {
	return func(o *options) {
		if d >= 0 {
			o.grace = d
		}
	}
}

// WithMaxSleep caps how long the dispatch loop sleeps when it was not woken
// by a change of the queue, so nothing depends on a message arriving. The
// default is 1s; zero or less keeps the default.
func WithMaxSleep(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.maxSleep = d
		}
	}
}

// WithBatch is how many due entries one claim takes. The default is 256;
// zero or less keeps the default. It also bounds the jobs a process claims
// ahead of its free workers, as many as it has finished since its previous
// claim: a job claimed ahead that no worker takes within a second, or that
// has not started when the scheduler stops, is given back to the queue.
func WithBatch(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.batch = n
		}
	}
}

// WithProcessID names this process in locks, history and heartbeats. The
// default is "host:pid:random"; empty keeps the default.
func WithProcessID(id string) Option {
	return func(o *options) {
		if id != "" {
			o.processID = id
		}
	}
}

// WithVersion is the application version shown in this process's
// heartbeat. The default is empty.
func WithVersion(v string) Option {
	return func(o *options) { o.version = v }
}

// WithHooks sets the functions called around every run. The zero Hooks
// calls nothing.
func WithHooks(h Hooks) Option {
	return func(o *options) { o.hooks = h }
}

// WithListener adds a listener told of every completed run. None by default.
func WithListener(l Listener) Option {
	return func(o *options) {
		if l != nil {
			o.listeners = append(o.listeners, l)
		}
	}
}

// WithMiddleware adds a middleware around every handler call; the first
// added is the outermost. None by default.
func WithMiddleware(m Middleware) Option {
	return func(o *options) {
		if m != nil {
			o.middleware = append(o.middleware, m)
		}
	}
}

// WithMaxPayload bounds the JSON size of a job's payload that a Client
// enqueues. The default is 1 MiB; zero or less keeps the default. It guards
// Redis against producers: a scheduler runs a job already stored in Redis
// (by a producer in another language) whatever its size.
func WithMaxPayload(bytes int) Option {
	return func(o *options) {
		if bytes > 0 {
			o.maxPayload = bytes
		}
	}
}

// WithHistory bounds each task's run history by count and age. The defaults
// are 100 records and 7 days; zero or less keeps a default.
func WithHistory(records int, age time.Duration) Option {
	return func(o *options) {
		if records > 0 {
			o.historyLen = records
		}
		if age > 0 {
			o.historyAge = age
		}
	}
}

// WithProcessTTL is how long after its last heartbeat a process counts as
// dead: its runs are then abandoned and its locks released. Heartbeats are
// sent every TTL/5. The default is 5s; values under 500ms keep the default.
func WithProcessTTL(d time.Duration) Option {
	return func(o *options) {
		if d >= 500*time.Millisecond {
			o.processTTL = d
			o.heartbeat = d / 5
		}
	}
}

// WithRetryBackoff is the delay before a failed job's first retry; each
// further retry waits twice as long (capped at an hour), with ±20% jitter.
// The default is 1s; zero or less keeps the default.
func WithRetryBackoff(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.retryBackoff = d
		}
	}
}

// WithDeadLetters bounds the dead-letter set: past it the oldest dead jobs
// are dropped. The default is 10000; zero or less keeps the default.
func WithDeadLetters(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.deadLetters = n
		}
	}
}

// WithLocalClock replaces the process's local clock. It exists for tests of
// clock skew: the scheduler measures the offset of this clock from Redis
// server time and schedules by the server. Nil keeps time.Now.
func WithLocalClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.localClock = now
		}
	}
}
