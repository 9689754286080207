// Command crontabbench measures the scheduler against a private
// redis-server it starts (never a server you run), prints a table and
// writes the figures as JSON. `make bench` runs it with its defaults, which
// finish in about 3 minutes on a 2-core machine.
//
// Usage:
//
//	crontabbench [flags]
//
// Scenarios (lag is handler start minus the scheduled instant, both read
// from the one clock of the machine, which Redis TIME reads too):
//
//	s1  burst: -burst jobs due at one instant, enqueued with EnqueueMany;
//	    drain rate (jobs/s from the first handler start to the last ack) and
//	    lag p50/p99/max; the scheduler runs in this process.
//	s2  spread: -spread jobs due uniformly over -spread-over; lag and how
//	    many started early (must be 0).
//	s3  periodic: -procs worker processes (this binary re-run in worker
//	    mode) for -periodic-for, once per count in -periodic-tasks of
//	    every:1s tasks; executions, duplicates, missed instants, lag, and
//	    how many instants had a run over 5 ms late.
//	s4  scale: -scale jobs pending (due in an hour), enqueued with
//	    EnqueueMany in calls of -scale-chunk; enqueue rate, Redis memory per
//	    job (INFO used_memory delta / N, and beyond the JSON payload), and the
//	    lag of an every:1s probe task while they wait (-scale-probe),
//	    against the same probe with no job pending.
//	s5  failover: -procs workers with one every:1s task; -failover-rounds
//	    times, SIGKILL the process that ran the latest instant (100ms after
//	    its run started) and time the next fire elsewhere; every instant
//	    must fire exactly once. Then (S5b) as many kills in the middle of
//	    300ms runs of the non-concurrent task, whose lock the run lease
//	    (-run-lease) frees: the next fire elsewhere within 2 s.
//	s6  schedules: -schedules run-time recurring tasks (every:1h, one type,
//	    no params; with -schedule-params task i has {"tenant":i}) registered
//	    with SetTasks (calls of 10,000): the rate and the Redis memory per
//	    task (INFO used_memory less the clients' buffers, delta / N after one warm-up task, and again once each fired; without
//	    -schedule-params the bytes beyond params, the <= 300 B target); then all made due at one instant and drained by
//	    -schedule-procs worker processes: drain rate, lag, missed and
//	    duplicate fires, and the lag of an every:1s probe task meanwhile.
//	    With -schedule-zones the tasks are daily:09:00 spread over every
//	    IANA zone, and each one's next_run after the fire is checked. With
//	    -schedule-jitter D each task has that jitter, so each is due at the
//	    instant plus its key's offset in [0, D) (the stampede spread out).
//	    With -schedule-no-history the workers keep no run history
//	    (WithHistory(0, ...)): what the history's writes cost per fire.
//	    Then (unless -schedule-reference=false) as many delayed jobs of
//	    S1's type, due at one instant, on as many worker processes (with
//	    the same history setting): job
//	    speed, measured side by side, the baseline of S6's drain rate and
//	    lag p99 (the ratio is the fires' rate over the jobs').
//
// With -baseline (the default) S1, S2 and S4 also run a naive poller shaped
// like the classic delay-queue demo (ZRANGE 0 0 / ZREM / HGET / HDEL per job,
// 1 s sleep when idle; HSET + ZADD to enqueue), and every such figure gets a
// ratio (how many times better ours is).
//
// Flags:
//
//	-only s1,s2,...      scenarios to run (default all)
//	-o PATH              JSON results (default .bench/results.json; "" for none)
//	-unix                redis-server on a unix socket instead of 127.0.0.1
//	-redis-args "..."    extra redis-server arguments, e.g. "--hz 100"
//	-baseline            run the naive poller too (default true)
//	-burst N             S1 jobs (default 20000)
//	-spread N            S2 jobs (default 10000)
//	-spread-over D       S2 window (default 10s)
//	-procs N             S3/S5 processes (default 3)
//	-periodic-for D      S3 duration of each run (default 30s)
//	-periodic-tasks L    S3 task counts, comma-separated (default 1,100; at most 1000)
//	-scale N             S4 pending jobs (default 200000; -scale 1000000 for the
//	                     issue's 1M, which adds about a minute and ~400 MB of Redis)
//	-scale-chunk N       S4 jobs per EnqueueMany call (default 10000)
//	-scale-probe D       S4 how long the probe task is watched, with no job pending
//	                     and then with -scale pending (default 15s each)
//	-failover-rounds N   S5 kills (default 3)
//	-process-ttl D       S5 workers' WithProcessTTL (default: the runtime's, 5s)
//	-run-lease D         S5 workers' WithRunLease (default: the runtime's, 1.5s)
//	-with-tasks          S1 and S2 schedulers run WithTasks(their job type): the roles claim
//	-max-running N       also run S1 with the job type's max_running N on
//	                     -limit-procs worker processes (default 3): most runs at
//	                     once (handler start and end times of every process), drain
//	-rate N/D            also run S1 with the job type's rate on -limit-procs
//	                     worker processes: most starts in a window on Redis time
//	                     at the claim (read from the rate window), drain
//	-priority            also run a backlog of -priority-jobs jobs (default 30000)
//	                     of each of three job types at priority 0, 5 and 10, due
//	                     at one instant, on -limit-procs worker processes: drain,
//	                     lag p50/p99 per priority, the order they finished in
//	-workers N           WithWorkers of the scheduler under test (default: the runtime's)
//	-batch N             WithBatch of the scheduler under test (default: the runtime's)
//	-cpuprofile PATH     CPU profile of this process during the S1 drain
//	-s3-runs PATH        write every S3 run (process, task, fire, start) as CSV
//	                     to PATH.<tasks>
//	-v                   log the Redis cost of each scenario (CPU and
//	                     round trips per job, top commands of INFO commandstats)
//
// Run as `crontabbench __worker ...`, the binary is a scheduler process of
// S3, S5 and the limited and priority S1 (see bench.WorkerMain); the bench starts those itself. With
// CRONTABBENCH_KEEP=1 in the environment their logs (warnings and errors of
// the runtime) are kept and their directory printed.
//
// Before and after the scenarios the bench calibrates the machine in the
// same run: how late a timer wakes a goroutine, the PING round trip, and the
// PING rate over 50 connections. On a shared machine read every lag against
// the timer figure and every rate against the PING rate.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gocrontab/crontab/internal/bench"
	crontab "github.com/gocrontab/crontab/runtime"
	"github.com/gocrontab/crontab/runtime/schedule"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == bench.WorkerArg {
		if err := bench.WorkerMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "crontabbench worker:", err)
			os.Exit(1)
		}
		return
	}
	cfg := bench.Defaults()
	only := flag.String("only", "", "scenarios to run, comma-separated (s1..s6; default all)")
	flag.StringVar(&cfg.Out, "o", cfg.Out, `JSON results path ("" for none)`)
	flag.BoolVar(&cfg.Unix, "unix", false, "redis-server on a unix socket")
	redisArgs := flag.String("redis-args", "", `extra redis-server arguments, e.g. "--hz 100"`)
	flag.BoolVar(&cfg.Baseline, "baseline", cfg.Baseline, "also run the naive poller (S1, S2, S4)")
	flag.IntVar(&cfg.BurstJobs, "burst", cfg.BurstJobs, "S1 jobs due at one instant")
	flag.IntVar(&cfg.SpreadJobs, "spread", cfg.SpreadJobs, "S2 jobs")
	flag.DurationVar(&cfg.SpreadOver, "spread-over", cfg.SpreadOver, "S2 window")
	flag.IntVar(&cfg.Procs, "procs", cfg.Procs, "S3/S5 processes")
	flag.DurationVar(&cfg.PeriodicFor, "periodic-for", cfg.PeriodicFor, "S3 duration of each run")
	tasks := flag.String("periodic-tasks", "1,100", "S3 every:1s task counts, comma-separated")
	flag.IntVar(&cfg.ScaleJobs, "scale", cfg.ScaleJobs, "S4 pending jobs")
	flag.IntVar(&cfg.ScaleChunk, "scale-chunk", cfg.ScaleChunk, "S4 jobs per EnqueueMany")
	flag.DurationVar(&cfg.ScaleProbe, "scale-probe", cfg.ScaleProbe, "S4 probe duration")
	flag.IntVar(&cfg.FailoverRounds, "failover-rounds", cfg.FailoverRounds, "S5 kills")
	flag.DurationVar(&cfg.ProcessTTL, "process-ttl", 0, "S5 workers' process TTL (0: the runtime's default)")
	flag.DurationVar(&cfg.RunLease, "run-lease", 0, "S5 workers' run lease (0: the runtime's default)")
	flag.BoolVar(&cfg.WithTasks, "with-tasks", false, "S1 and S2 schedulers run WithTasks(their job type)")
	flag.IntVar(&cfg.MaxRunning, "max-running", 0, "also run S1 with the job type's max_running (0: no)")
	rate := flag.String("rate", "", `also run S1 with the job type's rate, e.g. "20000/s" ("": no)`)
	flag.IntVar(&cfg.LimitProcs, "limit-procs", 3, "worker processes of the limited and priority S1 (-max-running, -rate, -priority)")
	priority := flag.Bool("priority", false, "also run the mixed-priority backlog (priority 0, 5, 10)")
	priorityJobs := flag.Int("priority-jobs", 30000, "jobs of each priority of the -priority backlog")
	flag.IntVar(&cfg.Schedules, "schedules", cfg.Schedules, "S6 run-time recurring tasks due at one instant")
	flag.IntVar(&cfg.SchedProcs, "schedule-procs", cfg.SchedProcs, "S6 worker processes")
	flag.BoolVar(&cfg.ScheduleZones, "schedule-zones", false, "S6 tasks daily:09:00 over every IANA zone (default every:1h, UTC)")
	flag.DurationVar(&cfg.ScheduleJitter, "schedule-jitter", 0, "S6 tasks' jitter (TaskSpec.Jitter, 0 to 24h): each due at the instant plus its offset")
	flag.BoolVar(&cfg.ScheduleParams, "schedule-params", false, `S6 task i has params {"tenant":i} (default: no params, the memory figure is beyond params)`)
	flag.BoolVar(&cfg.ScheduleNoHistory, "schedule-no-history", false, "S6 workers keep no run history (WithHistory(0, ...))")
	flag.BoolVar(&cfg.ScheduleReference, "schedule-reference", cfg.ScheduleReference, "after S6, as many delayed jobs at one instant on as many processes: S6's baseline (job speed)")
	flag.IntVar(&cfg.Workers, "workers", 0, "WithWorkers of the scheduler under test (0: default)")
	flag.IntVar(&cfg.Batch, "batch", 0, "WithBatch of the scheduler under test (0: default)")
	flag.StringVar(&cfg.FiresOut, "s3-runs", "", "write every S3 run as CSV to `path`.<tasks>")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the S1 drain")
	flag.BoolVar(&cfg.Verbose, "v", false, "log the Redis cost of each scenario")
	flag.Parse()
	if *rate != "" {
		r, err := crontab.ParseRate(*rate)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crontabbench: -rate: %v\n", err)
			os.Exit(2)
		}
		cfg.Rate = r
	}
	if *priority {
		if *priorityJobs < 1 {
			fmt.Fprintf(os.Stderr, "crontabbench: -priority-jobs %d: want 1 or more\n", *priorityJobs)
			os.Exit(2)
		}
		cfg.PriorityJobs = *priorityJobs
	}
	if cfg.Schedules < 1 || cfg.Schedules > 10_000_000 {
		fmt.Fprintf(os.Stderr, "crontabbench: -schedules %d: want 1 to 10000000\n", cfg.Schedules)
		os.Exit(2)
	}
	if err := schedule.ValidateJitter(cfg.ScheduleJitter); err != nil {
		fmt.Fprintf(os.Stderr, "crontabbench: -schedule-jitter: %v\n", err)
		os.Exit(2)
	}
	if cfg.ScheduleJitter > 0 && cfg.ScheduleZones {
		fmt.Fprintln(os.Stderr, "crontabbench: -schedule-jitter and -schedule-zones: use one or the other (the zone check assumes no offset)")
		os.Exit(2)
	}
	if cfg.SchedProcs < 1 || cfg.SchedProcs > 16 {
		fmt.Fprintf(os.Stderr, "crontabbench: -schedule-procs %d: want 1 to 16\n", cfg.SchedProcs)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "crontabbench: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *only != "" {
		cfg.Scenarios = strings.Split(*only, ",")
	}
	cfg.RedisArgs = strings.Fields(*redisArgs)
	cfg.PeriodicTasks = nil
	for _, s := range strings.Split(*tasks, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1000 {
			fmt.Fprintf(os.Stderr, "crontabbench: -periodic-tasks %q: want counts from 1 to 1000\n", *tasks)
			os.Exit(2)
		}
		cfg.PeriodicTasks = append(cfg.PeriodicTasks, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := bench.Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crontabbench:", err)
		os.Exit(1)
	}
}
