// Package metrics exposes gocrontab's Prometheus metrics, through
// github.com/prometheus/client_golang, so that the runtime package itself
// depends on no metrics library.
//
// It has two parts, used together or alone:
//
//   - [Metrics] instruments the schedulers of this process: fires, runs by
//     outcome, skipped fires, run duration, fire lag, runs in progress,
//     abandoned runs, job redeliveries and the invariant sweep's repairs. Pass [Metrics.Options] to the
//     scheduler.
//   - [Collector] reads the namespace's state from Redis at each scrape:
//     queue depth, due-but-unclaimed entries, jobs pending, running and
//     dead, why due jobs wait, live processes and each task's run totals. Any process can
//     serve it, one with no scheduler too: `crontab serve` does, at
//     /metrics.
//
// Register them on a registry and mount [Handler] where your scraper looks:
//
//	reg := prometheus.NewRegistry()
//	m := metrics.New()
//	reg.MustRegister(m, metrics.NewCollector(tasks.NewClient(rdb)))
//	s, err := tasks.NewScheduler(rdb, m.Options()...)
//	http.Handle("/metrics", metrics.Handler(reg))
//
// [Metrics.Options] sets the scheduler's Hooks. To keep hooks of your own,
// wrap them instead: crontab.WithHooks(m.Hooks(yours)), with
// crontab.WithMiddleware(m.Middleware()) and
// crontab.WithListener(m.Listener()).
//
// # Metric names
//
// From [Metrics], in each process (task is the task's name, or the job
// type's for a job):
//
//	crontab_fires_total{task}                   runs started (scheduled fires, triggered fires, job deliveries)
//	crontab_runs_total{task,outcome}            completed runs; outcome ok or failed
//	crontab_skipped_fires_total{task,reason}    fires that did not run; reason running (the lock was held), max_running (the type's cap was reached), paused or misfire
//	crontab_run_duration_seconds{task}          histogram of handler run time
//	crontab_fire_lag_seconds{task}              histogram of handler start minus when the attempt became due (RunInfo.Due)
//	crontab_runs_in_progress{task}              handlers running now
//	crontab_abandoned_runs_total{task}          runs whose process died (counted by the master process)
//	crontab_job_redeliveries_total              jobs whose lease expired and were delivered again (master)
//	crontab_repairs_total{kind}                 broken states the invariant sweep repaired (master); kind job, claim, lease, running, lock or queue
//
// Lock and lease events are skipped_fires_total{reason="running"} (a fire
// found the task's lock held), abandoned_runs_total (a run's lease expired
// with its process) and job_redeliveries_total (a job's lease expired).
//
// From [Collector], namespace-wide, read from Redis at each scrape:
//
//	crontab_queue_depth                         tasks in the queue
//	crontab_queue_due                           tasks due but not yet claimed
//	crontab_tasks_running                       task runs in progress
//	crontab_jobs_pending                        pending delayed jobs (retries waiting included)
//	crontab_jobs_due                            jobs due but not yet claimed
//	crontab_jobs_waiting{reason}                due jobs not yet claimed, by why they wait, among the first WaitingScan (1,000) due jobs: reason max_running (the type's cap is full), rate (its type's or its rate key's window is full), priority (jobs of higher priorities are due), "no process" (no live process runs its type) or due (waiting for a worker)
//	crontab_jobs_running                        jobs claimed by a process
//	crontab_jobs_dead                           dead-lettered jobs
//	crontab_processes_alive                     processes with a recent heartbeat
//	crontab_task_runs_total{task}               completed runs, from the task hash
//	crontab_task_failures_total{task}           failed and abandoned runs, from the task hash
//	crontab_task_skips_total{task}              skipped fires, from the task hash
//	crontab_task_status{task,status}            1 for the task's current status
//	crontab_task_next_fire_timestamp_seconds{task} when the task fires next (absent when not queued)
//
// The prefix "crontab" can be changed with [WithPrefix], and constant
// labels (a namespace label, say) added with [WithConstLabels].
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Option configures New and NewCollector.
type Option func(*config)

type config struct {
	prefix      string
	constLabels prometheus.Labels
	timeout     time.Duration
}

func buildConfig(opts []Option) config {
	c := config{prefix: "crontab", timeout: 5 * time.Second}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithPrefix sets the metric name prefix. The default is "crontab"; empty
// keeps the default.
func WithPrefix(p string) Option {
	return func(c *config) {
		if p != "" {
			c.prefix = p
		}
	}
}

// WithConstLabels adds labels with fixed values to every metric, such as
// {"namespace": "billing"} when one process serves several namespaces.
// None by default.
func WithConstLabels(l prometheus.Labels) Option {
	return func(c *config) { c.constLabels = l }
}

// WithTimeout bounds the Redis reads of one Collector scrape. The default
// is 5s; zero or less keeps the default. New ignores it.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Buckets of the run duration histogram, in seconds.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Buckets of the fire lag histogram, in seconds.
var lagBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics instruments the schedulers of one process. It is a
// prometheus.Collector: register it on a registry. It is safe for
// concurrent use and may serve several schedulers.
type Metrics struct {
	fires       *prometheus.CounterVec
	runs        *prometheus.CounterVec
	skipped     *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lag         *prometheus.HistogramVec
	inProgress  *prometheus.GaugeVec
	abandoned   *prometheus.CounterVec
	redelivered prometheus.Counter
	repairs     *prometheus.CounterVec
}

// New returns the metrics of a process's schedulers; register them, and
// pass Options to the schedulers.
func New(opts ...Option) *Metrics {
	c := buildConfig(opts)
	name := func(n string) string { return c.prefix + "_" + n }
	return &Metrics{
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name("fires_total"), ConstLabels: c.constLabels,
			Help: "Runs started: scheduled and triggered fires and job deliveries."}, []string{"task"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name("runs_total"), ConstLabels: c.constLabels,
			Help: "Completed runs by outcome (ok or failed)."}, []string{"task", "outcome"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name("skipped_fires_total"), ConstLabels: c.constLabels,
			Help: "Scheduled fires that did not run, by reason: running (lock held), max_running (type cap reached), paused or misfire."}, []string{"task", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name("run_duration_seconds"), ConstLabels: c.constLabels,
			Help: "How long handlers ran.", Buckets: durationBuckets}, []string{"task"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name("fire_lag_seconds"), ConstLabels: c.constLabels,
			Help: "Handler start minus when the attempt became due (the scheduled instant, or a job attempt's due time).", Buckets: lagBuckets}, []string{"task"}),
		inProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name("runs_in_progress"), ConstLabels: c.constLabels,
			Help: "Handlers running now in this process."}, []string{"task"}),
		abandoned: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name("abandoned_runs_total"), ConstLabels: c.constLabels,
			Help: "Runs whose process died before they finished (counted by the master process)."}, []string{"task"}),
		redelivered: prometheus.NewCounter(prometheus.CounterOpts{Name: name("job_redeliveries_total"), ConstLabels: c.constLabels,
			Help: "Jobs whose lease expired and that were delivered again (counted by the master process)."}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name("repairs_total"), ConstLabels: c.constLabels,
			Help: "Broken states the invariant sweep repaired, by kind (counted by the master process)."}, []string{"kind"}),
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.fires, m.runs, m.skipped, m.duration, m.lag, m.inProgress, m.abandoned, m.redelivered, m.repairs}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// Options returns the scheduler options that feed the metrics: a
// middleware, a listener and the hooks. Hooks set by a later WithHooks
// replace these; see Hooks to keep both.
func (m *Metrics) Options() []crontab.Option {
	return []crontab.Option{
		crontab.WithMiddleware(m.Middleware()),
		crontab.WithListener(m.Listener()),
		crontab.WithHooks(m.Hooks(crontab.Hooks{})),
	}
}

// Middleware counts fires and runs in progress.
func (m *Metrics) Middleware() crontab.Middleware {
	return func(ctx context.Context, run crontab.RunInfo, next func(context.Context) error) error {
		m.fires.WithLabelValues(run.Task).Inc()
		g := m.inProgress.WithLabelValues(run.Task)
		g.Inc()
		defer g.Dec()
		return next(ctx)
	}
}

// Listener records each completed run's outcome, duration and fire lag.
func (m *Metrics) Listener() crontab.Listener {
	return crontab.ListenerFunc(func(_ context.Context, r crontab.Result) {
		outcome := string(crontab.OutcomeOK)
		if !r.OK {
			outcome = string(crontab.OutcomeFailed)
		}
		m.runs.WithLabelValues(r.Task, outcome).Inc()
		m.duration.WithLabelValues(r.Task).Observe(r.Cost.Seconds())
		due := r.Due // when this attempt became due: a retry's backoff is no lag
		if due.IsZero() {
			due = r.Fire
		}
		if !due.IsZero() && !r.Start.IsZero() {
			m.lag.WithLabelValues(r.Task).Observe(max(r.Start.Sub(due), 0).Seconds())
		}
	})
}

// Hooks returns next with the Skipped, Abandoned, Redelivered and Repaired hooks
// wrapped to count their events; next's own functions are still called.
func (m *Metrics) Hooks(next crontab.Hooks) crontab.Hooks {
	h := next
	h.Skipped = func(ctx context.Context, run crontab.RunInfo, reason crontab.SkipReason) {
		m.skipped.WithLabelValues(run.Task, string(reason)).Inc()
		if next.Skipped != nil {
			next.Skipped(ctx, run, reason)
		}
	}
	h.Abandoned = func(ctx context.Context, run crontab.RunInfo) {
		m.abandoned.WithLabelValues(run.Task).Inc()
		if next.Abandoned != nil {
			next.Abandoned(ctx, run)
		}
	}
	h.Redelivered = func(ctx context.Context, id, process string) {
		m.redelivered.Inc()
		if next.Redelivered != nil {
			next.Redelivered(ctx, id, process)
		}
	}
	h.Repaired = func(ctx context.Context, kind string, n int) {
		m.repairs.WithLabelValues(kind).Add(float64(n))
		if next.Repaired != nil {
			next.Repaired(ctx, kind, n)
		}
	}
	return h
}

// Handler serves the metrics of g in the Prometheus exposition format.
// A nil g serves prometheus.DefaultGatherer.
func Handler(g prometheus.Gatherer) http.Handler {
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
