// Package bench is the scheduler benchmark behind cmd/crontabbench and
// `make bench`: it starts a private redis-server, runs the scenarios of
// issue 6 (burst, spread, periodic, scale, failover) against the runtime
// and, for burst and spread, against a naive poller shaped like the classic
// delay-queue demo, then prints a table and writes JSON. S1 can also run
// again with a limited job type (max_running, rate) and as a mixed-priority
// backlog (issue 15), on worker processes. S6 (issue 16) registers a
// hundred thousand run-time schedules and drains one instant of them on
// worker processes.
//
// Lag is always handler start minus the scheduled instant. Every process of
// a run (the bench, its worker processes and redis-server) is on one
// machine, so both ends are read from the same clock (CLOCK_REALTIME, which
// Redis TIME also reads).
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// Config is what the flags of cmd/crontabbench set. The zero value of a
// field means its default (see Defaults).
type Config struct {
	// Scenarios to run, among s1..s6; empty means all.
	Scenarios []string
	// Out is the JSON result file; "" writes none.
	Out string
	// Unix makes redis-server listen on a unix socket instead of loopback TCP.
	Unix bool
	// RedisArgs are extra redis-server arguments (e.g. "--hz", "100").
	RedisArgs []string
	// Baseline runs the naive poller for S1 and S2.
	Baseline bool

	BurstJobs      int           // S1: jobs due at one instant
	SpreadJobs     int           // S2: jobs due uniformly over SpreadOver
	SpreadOver     time.Duration // S2
	Procs          int           // S3, S5: scheduler processes
	PeriodicFor    time.Duration // S3: how long each run lasts
	PeriodicTasks  []int         // S3: every:1s tasks per run
	ScaleJobs      int           // S4: pending jobs
	ScaleChunk     int           // S4: jobs per EnqueueMany call
	ScaleProbe     time.Duration // S4: how long the probe task is watched
	FailoverRounds int           // S5, S5b: kills
	ProcessTTL     time.Duration // S5: WithProcessTTL of the workers (0: the runtime's default)
	RunLease       time.Duration // S5: WithRunLease of the workers (0: the runtime's default)
	// MaxRunning and Rate, when set, run S1 again with the job type's
	// TaskConfig.MaxRunning or Rate, on LimitProcs worker processes, after
	// the unlimited S1, and report the most runs at once against the cap
	// (from the handlers' start and end times in every process), the most
	// starts in any window against the rate (on Redis time at the claim,
	// read from the rate window), and the drain against the unlimited S1's.
	MaxRunning int
	Rate       crontab.Rate
	LimitProcs int
	// PriorityJobs, when set, runs after S1 a backlog of that many jobs of
	// each of three job types at priority 0, 5 and 10, all due at one
	// instant, on LimitProcs worker processes: the drain, and per priority
	// the lag and the order in which they finished.
	PriorityJobs int
	// Schedules is S6's count of run-time recurring tasks, drained at one
	// instant by SchedProcs worker processes.
	Schedules  int
	SchedProcs int
	// ScheduleZones makes S6's tasks daily:09:00 spread over every IANA
	// zone (instead of every:1h in UTC), and checks each one's next_run
	// after the fire.
	ScheduleZones bool
	// ScheduleJitter gives S6's tasks that jitter (TaskSpec.Jitter): each
	// is due at the shared instant plus its key's offset in [0, jitter),
	// as the top of the hour would have them, and its lag is measured
	// from that. 0: none, all at the one instant.
	ScheduleJitter time.Duration
	// ScheduleParams gives S6's task i the params {"tenant":i}; without
	// it the tasks have no params, and S6's memory figure is the bytes
	// per task beyond its params (the figure issue 16's target is for).
	ScheduleParams bool
	// ScheduleNoHistory runs S6's workers with WithHistory(0, ...): no run
	// record per fire (a tenant deployment that keeps only each task's
	// last result and counters). False: the default history.
	ScheduleNoHistory bool
	// ScheduleReference runs, after S6's drain, as many delayed jobs due
	// at one instant on as many worker processes: the job speed S6's
	// drain rate and lag are compared with (their baseline column).
	ScheduleReference bool
	// WithTasks runs S1's and S2's scheduler with WithTasks(its job type):
	// the job claim of a process with roles (rdb.ClaimJobsOf).
	WithTasks bool

	// Workers and Batch are the scheduler's WithWorkers and WithBatch (0:
	// the runtime's defaults).
	Workers, Batch int
	// FiresOut, when set, is where S3 writes every run its workers
	// reported, as CSV, one file per task count (FiresOut.<tasks>).
	FiresOut string
	// CPUProfile writes a CPU profile of S1 (our scheduler, in process) here.
	CPUProfile string
	// Self is the executable re-run in worker mode (S3, S5); "" means
	// os.Executable().
	Self string
	// Log receives progress lines; nil means os.Stderr.
	Log io.Writer `json:"-"`
	// Verbose adds the Redis command profile of each scenario to the log.
	Verbose bool
}

// Defaults returns the default configuration: a run under 5 minutes on a
// 2-core machine.
func Defaults() Config {
	return Config{
		Out:               filepath.Join(".bench", "results.json"),
		Baseline:          true,
		BurstJobs:         20000,
		SpreadJobs:        10000,
		SpreadOver:        10 * time.Second,
		Procs:             3,
		PeriodicFor:       30 * time.Second,
		PeriodicTasks:     []int{1, 100},
		ScaleJobs:         200000,
		ScaleChunk:        10000,
		ScaleProbe:        15 * time.Second,
		FailoverRounds:    3,
		Schedules:         100000,
		SchedProcs:        2,
		ScheduleReference: true,
	}
}

// Row is one figure of the result table.
type Row struct {
	Scenario string   `json:"scenario"`
	Metric   string   `json:"metric"`
	Unit     string   `json:"unit"`
	Ours     float64  `json:"ours"`
	Baseline *float64 `json:"baseline,omitempty"`
	// Ratio is how many times better ours is than the baseline (higher is
	// better for both kinds of figure).
	Ratio  *float64 `json:"ratio,omitempty"`
	Target string   `json:"target,omitempty"`
	// Pass is nil when the row has no target.
	Pass *bool `json:"pass,omitempty"`
	// LowerIsBetter orients Ratio and the target check.
	LowerIsBetter bool `json:"lower_is_better"`
}

// Report is the JSON document a run writes.
type Report struct {
	Started  time.Time         `json:"started"`
	Duration string            `json:"duration"`
	Command  string            `json:"command"`
	Machine  Machine           `json:"machine"`
	Config   Config            `json:"config"`
	Rows     []Row             `json:"rows"`
	Details  map[string]any    `json:"details"`
	Load     map[string]string `json:"load"` // /proc/loadavg before each scenario
	// Calibration is measured before the scenarios and after them.
	Calibration []Calibration `json:"calibration"`
	Notes       []string      `json:"notes,omitempty"`
}

// target is a figure's goal: ours must be <= (lower is better) or >= it.
type target struct {
	value float64
	text  string
}

// env is what every scenario shares.
type env struct {
	cfg    Config
	srv    *redistest.Server
	admin  *redis.Client // for INFO, FLUSHALL, the baseline
	log    *slog.Logger
	report *Report
}

func (e *env) logf(format string, args ...any) { e.log.Info(fmt.Sprintf(format, args...)) }

// add appends a row; base and tgt may be nil.
func (e *env) add(scenario, metric, unit string, ours float64, base *float64, lowerBetter bool, tgt *target) {
	r := Row{Scenario: scenario, Metric: metric, Unit: unit, Ours: ours, Baseline: base, LowerIsBetter: lowerBetter}
	if base != nil {
		var ratio float64
		switch {
		case lowerBetter && ours > 0:
			ratio = *base / ours
		case !lowerBetter && *base > 0:
			ratio = ours / *base
		}
		if ratio > 0 {
			r.Ratio = &ratio
		}
	}
	if tgt != nil {
		pass := ours >= tgt.value
		if lowerBetter {
			pass = ours <= tgt.value
		}
		r.Target, r.Pass = tgt.text, &pass
	}
	e.report.Rows = append(e.report.Rows, r)
}

// calibrate measures the machine and adds the figures to the report.
func (e *env) calibrate(ctx context.Context) {
	c := calibrate(ctx, e.admin)
	e.report.Calibration = append(e.report.Calibration, c)
	e.logf("calibration (load %s): timer wake-up late %s; redis PING rtt %s, after 100 ms idle %s, idle but warmed 1 ms before %s; %.0f PING/s over 50 connections",
		c.Load, c.TimerLate, c.PingRTT, c.IdleRTT, c.WarmedRTT, c.PingRate)
}

// scenario is one of S1..S6.
type scenario struct {
	id, name string
	run      func(ctx context.Context, e *env) error
}

var scenarios = []scenario{
	{"s1", "S1 burst", runBurst},
	{"s2", "S2 spread", runSpread},
	{"s3", "S3 periodic", runPeriodic},
	{"s4", "S4 scale", runScale},
	{"s5", "S5 failover", runFailover},
	{"s6", "S6 schedules", runSchedules},
}

// Run runs the configured scenarios against a private redis-server it
// starts and stops, prints the table to w and writes the JSON report.
func Run(ctx context.Context, cfg Config, w io.Writer) (*Report, error) {
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	want := map[string]bool{}
	for _, s := range cfg.Scenarios {
		s = strings.ToLower(strings.TrimSpace(s))
		if !slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.id == s }) {
			return nil, fmt.Errorf("unknown scenario %q (want s1 to s6)", s)
		}
		want[s] = true
	}
	if cfg.Self == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find own executable for worker mode: %w", err)
		}
		cfg.Self = self
	}
	opts := []redistest.Option{redistest.WithArgs(cfg.RedisArgs...)}
	if cfg.Unix {
		opts = append(opts, redistest.WithUnixSocket())
	}
	srv, err := redistest.Launch(opts...)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	admin := redis.NewClient(srv.Options())
	defer admin.Close()

	e := &env{
		cfg:   cfg,
		srv:   srv,
		admin: admin,
		log:   slog.New(slog.NewTextHandler(cfg.Log, &slog.HandlerOptions{Level: slog.LevelInfo})),
		report: &Report{
			Started: time.Now().UTC(),
			Command: strings.Join(os.Args, " "),
			Config:  cfg,
			Details: map[string]any{},
			Load:    map[string]string{},
		},
	}
	e.report.Machine = machine(ctx, admin)
	e.logf("redis-server %s on %s (pid %d); %s", e.report.Machine.Redis, srv.Addr(), srv.PID(), e.report.Machine.Summary())
	e.calibrate(ctx)
	start := time.Now()
	for _, sc := range scenarios {
		if len(want) > 0 && !want[sc.id] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return e.report, err
		}
		if err := admin.FlushAll(ctx).Err(); err != nil {
			return e.report, err
		}
		_ = admin.ConfigResetStat(ctx).Err()
		e.report.Load[sc.id] = loadavg()
		e.logf("== %s (load %s)", sc.name, e.report.Load[sc.id])
		t0 := time.Now()
		if err := sc.run(ctx, e); err != nil {
			return e.report, fmt.Errorf("%s: %w", sc.name, err)
		}
		e.logf("== %s done in %v", sc.name, time.Since(t0).Round(time.Millisecond))
	}
	e.report.Load["end"] = loadavg()
	e.report.Duration = time.Since(start).Round(time.Second).String()
	e.calibrate(ctx)
	WriteTable(w, e.report)
	if cfg.Out != "" {
		if err := writeJSON(cfg.Out, e.report); err != nil {
			return e.report, err
		}
		fmt.Fprintf(w, "\nwrote %s\n", cfg.Out)
	}
	return e.report, nil
}

func writeJSON(path string, r *Report) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteTable prints the rows of r as an aligned text table (Markdown).
func WriteTable(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\n%s; load %s -> %s; %s\n", r.Machine.Summary(), firstLoad(r), r.Load["end"], r.Duration)
	for i, c := range r.Calibration {
		when := "before"
		if i > 0 {
			when = "after"
		}
		fmt.Fprintf(w, "machine %s (load %s): timer wake-up late p50 %.2f ms p99 %.2f ms; PING rtt p50 %.2f ms p99 %.2f ms, after 100 ms idle %.2f / %.2f ms, warmed 1 ms before %.2f / %.2f ms; %.0f PING/s (50 conns)\n",
			when, c.Load, c.TimerLate.P50, c.TimerLate.P99, c.PingRTT.P50, c.PingRTT.P99,
			c.IdleRTT.P50, c.IdleRTT.P99, c.WarmedRTT.P50, c.WarmedRTT.P99, c.PingRate)
	}
	fmt.Fprintln(w)
	head := []string{"scenario", "metric", "ours", "baseline", "ratio", "target", ""}
	rows := [][]string{head}
	for _, row := range r.Rows {
		base, ratio, pass := "", "", ""
		if row.Baseline != nil {
			base = formatValue(*row.Baseline, row.Unit)
		}
		if row.Ratio != nil {
			ratio = fmt.Sprintf("%.1fx", *row.Ratio)
			if *row.Ratio < 1 {
				ratio = fmt.Sprintf("%.2fx", *row.Ratio)
			}
		}
		if row.Pass != nil {
			pass = "ok"
			if !*row.Pass {
				pass = "SHORT"
			}
		}
		rows = append(rows, []string{row.Scenario, row.Metric, formatValue(row.Ours, row.Unit), base, ratio, row.Target, pass})
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			fmt.Fprintf(&b, " %-*s |", widths[i], c)
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", widths[i])
	}
	line(sep)
	for _, r := range rows[1:] {
		line(r)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\nnote: %s", n)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
}

func firstLoad(r *Report) string {
	for _, sc := range scenarios {
		if l, ok := r.Load[sc.id]; ok {
			return l
		}
	}
	return "?"
}

// formatValue prints v in its unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		if v < 10 {
			return fmt.Sprintf("%.2f ms", v)
		}
		return fmt.Sprintf("%.0f ms", v)
	case "jobs/s", "B", "B/job":
		return fmt.Sprintf("%.0f %s", v, unit)
	case "":
		if v != float64(int64(v)) && v < 10 {
			return fmt.Sprintf("%.3f", v)
		}
		return fmt.Sprintf("%.0f", v)
	default:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%.0f %s", v, unit)
		}
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

func ptr(v float64) *float64 { return &v }

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
