package metrics

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Collector reads the state of one namespace from Redis at each scrape:
// queue and job depths, why due jobs wait (among the first WaitingScan),
// live processes and the run totals kept in each task's hash. It is a prometheus.Collector; a failed read is reported to
// the scraper as an invalid metric, never a panic.
type Collector struct {
	c       *crontab.Inspector
	cfg     config
	gauges  map[string]*prometheus.Desc
	runs    *prometheus.Desc
	fails   *prometheus.Desc
	skips   *prometheus.Desc
	status  *prometheus.Desc
	next    *prometheus.Desc
	waiting *prometheus.Desc
	errDesc *prometheus.Desc
}

// WaitingScan is how many due jobs, first due first, a scrape looks at
// for crontab_jobs_waiting: each is classified (crontab.Inspector's
// ExplainWaiting), so the figures are among the first WaitingScan due jobs
// only, and a scrape reads at most that many jobs.
const WaitingScan = 1000

// The namespace-wide gauges, by name, with their help.
var collectorGauges = []struct{ name, help string }{
	{"queue_depth", "Tasks in the queue."},
	{"queue_due", "Tasks whose instant has come but that no process has claimed yet."},
	{"tasks_running", "Task runs in progress, across all processes."},
	{"jobs_pending", "Pending delayed jobs (jobs waiting for a retry included)."},
	{"jobs_due", "Jobs due but not yet claimed."},
	{"jobs_running", "Jobs claimed by a process."},
	{"jobs_dead", "Dead-lettered jobs."},
	{"processes_alive", "Scheduler processes with a recent heartbeat."},
}

// NewCollector returns a collector of the namespace of c (its
// WithNamespace; its WithProcessTTL decides which processes are alive).
// The inspector is crontab.NewInspector(rdb, ...) of the namespace.
func NewCollector(c *crontab.Inspector, opts ...Option) *Collector {
	cfg := buildConfig(opts)
	name := func(n string) string { return cfg.prefix + "_" + n }
	col := &Collector{c: c, cfg: cfg, gauges: map[string]*prometheus.Desc{}}
	for _, g := range collectorGauges {
		col.gauges[g.name] = prometheus.NewDesc(name(g.name), g.help, nil, cfg.constLabels)
	}
	col.runs = prometheus.NewDesc(name("task_runs_total"), "Completed runs of the task, from its hash.", []string{"task"}, cfg.constLabels)
	col.fails = prometheus.NewDesc(name("task_failures_total"), "Failed and abandoned runs of the task, from its hash.", []string{"task"}, cfg.constLabels)
	col.skips = prometheus.NewDesc(name("task_skips_total"), "Skipped fires of the task, from its hash.", []string{"task"}, cfg.constLabels)
	col.status = prometheus.NewDesc(name("task_status"), "1 for the task's current status (active, paused or disabled).", []string{"task", "status"}, cfg.constLabels)
	col.next = prometheus.NewDesc(name("task_next_fire_timestamp_seconds"), "When the task fires next, unix seconds.", []string{"task"}, cfg.constLabels)
	col.waiting = prometheus.NewDesc(name("jobs_waiting"),
		fmt.Sprintf("Due jobs not claimed yet, by why they wait (among the first %d due jobs).", WaitingScan), []string{"reason"}, cfg.constLabels)
	col.errDesc = prometheus.NewDesc(name("scrape_error"), "Reading the namespace from Redis failed.", nil, cfg.constLabels)
	return col
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.gauges {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{c.runs, c.fails, c.skips, c.status, c.next, c.waiting} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.timeout)
	defer cancel()
	ov, err := c.c.Overview(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.errDesc, err)
		return
	}
	for name, v := range map[string]int64{
		"queue_depth": ov.Queued, "queue_due": ov.Due, "tasks_running": ov.Running,
		"jobs_pending": ov.JobsPending, "jobs_due": ov.JobsDue, "jobs_running": ov.JobsRunning,
		"jobs_dead": ov.JobsDead, "processes_alive": ov.Processes,
	} {
		ch <- prometheus.MustNewConstMetric(c.gauges[name], prometheus.GaugeValue, float64(v))
	}
	waiting, err := c.waitingByReason(ctx, ov.JobsDue)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.errDesc, err)
		return
	}
	for _, r := range crontab.WaitReasons() {
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(waiting[r]), string(r))
	}
	tasks, err := c.c.ListTasks(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.errDesc, err)
		return
	}
	for _, t := range tasks {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.CounterValue, float64(t.Runs), t.Name)
		ch <- prometheus.MustNewConstMetric(c.fails, prometheus.CounterValue, float64(t.Failures), t.Name)
		ch <- prometheus.MustNewConstMetric(c.skips, prometheus.CounterValue, float64(t.Skips), t.Name)
		if t.Status != "" {
			ch <- prometheus.MustNewConstMetric(c.status, prometheus.GaugeValue, 1, t.Name, string(t.Status))
		}
		if !t.Next.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, float64(t.Next.UnixMilli())/1000, t.Name)
		}
	}
}

// waitingByReason counts the first due jobs (at most WaitingScan of the
// due ones, due of them now) by why they wait.
func (c *Collector) waitingByReason(ctx context.Context, due int64) (map[crontab.WaitReason]int64, error) {
	out := map[crontab.WaitReason]int64{}
	if due <= 0 {
		return out, nil
	}
	jobs, err := c.c.Jobs(ctx, crontab.JobFilter{State: crontab.JobPending, Limit: int(min(due, WaitingScan))})
	if err != nil {
		return nil, err
	}
	if err := c.c.ExplainWaiting(ctx, jobs); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if j.Waiting.Reason != "" {
			out[j.Waiting.Reason]++
		}
	}
	return out, nil
}
