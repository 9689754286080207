package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// periodicOutcome is what a run of every:1s tasks over several processes
// measured, over the whole seconds when every process was up.
type periodicOutcome struct {
	Procs      int  `json:"processes"`
	Tasks      int  `json:"tasks"`
	Instants   int  `json:"instants_per_task"`
	Expected   int  `json:"expected"`
	Executions int  `json:"executions"`
	Duplicates int  `json:"duplicates"`
	Missed     int  `json:"missed"`
	Skipped    int  `json:"skipped"`
	Lag        dist `json:"lag"`
	// WorstPerInstant is the distribution over instants of the lag of
	// each instant's latest run; SlowInstants counts the instants whose
	// latest run started more than 5 ms late.
	WorstPerInstant dist           `json:"worst_per_instant"`
	SlowInstants    int            `json:"slow_instants"`
	ByProcess       map[string]int `json:"by_process"`
	Cost            cost           `json:"cost_per_run"`
}

// slowInstant is the lag target of S3: an instant whose latest run started
// later than this is counted slow.
const slowInstant = 5 * time.Millisecond

// checkInstants counts, for every task and every whole second in
// [firstMS, lastMS], the runs of that instant.
func checkInstants(fires []fireLine, skips []skipLine, tasks int, firstMS, lastMS int64) periodicOutcome {
	o := periodicOutcome{Tasks: tasks, ByProcess: map[string]int{}}
	seen := map[string]map[int64]int{}
	worst := map[int64]time.Duration{}
	var lags []time.Duration
	for _, f := range fires {
		if f.fireMS < firstMS || f.fireMS > lastMS {
			continue
		}
		if seen[f.task] == nil {
			seen[f.task] = map[int64]int{}
		}
		seen[f.task][f.fireMS]++
		lags = append(lags, f.lag())
		worst[f.fireMS] = max(worst[f.fireMS], f.lag())
		o.Executions++
		o.ByProcess[f.proc]++
	}
	for _, s := range skips {
		if s.fireMS >= firstMS && s.fireMS <= lastMS {
			o.Skipped++
		}
	}
	for i := range tasks {
		name := tickName(i)
		for at := firstMS; at <= lastMS; at += 1000 {
			switch n := seen[name][at]; {
			case n == 0:
				o.Missed++
			case n > 1:
				o.Duplicates += n - 1
			}
		}
	}
	o.Instants = int((lastMS-firstMS)/1000) + 1
	o.Expected = o.Instants * tasks
	o.Lag = summarize(lags)
	var worsts []time.Duration
	for _, w := range worst {
		worsts = append(worsts, w)
		if w > slowInstant {
			o.SlowInstants++
		}
	}
	o.WorstPerInstant = summarize(worsts)
	return o
}

func runPeriodic(ctx context.Context, e *env) error {
	details := map[string]any{}
	for k, tasks := range e.cfg.PeriodicTasks {
		if k > 0 {
			if err := e.admin.FlushAll(ctx).Err(); err != nil {
				return err
			}
		}
		o, err := e.periodic(ctx, tasks)
		if err != nil {
			return err
		}
		e.logf("S3 %d procs x %d tasks: %d/%d runs, %d dup, %d missed, %d skipped, lag %s, latest run of each instant %s (%d of %d instants over %v), by process %v",
			o.Procs, tasks, o.Executions, o.Expected, o.Duplicates, o.Missed, o.Skipped, o.Lag,
			o.WorstPerInstant, o.SlowInstants, o.Instants, slowInstant, o.ByProcess)
		details[strconv.Itoa(tasks)] = o
		sc := fmt.Sprintf("S3 periodic %dp x %d every:1s", o.Procs, tasks)
		e.add(sc, "executions", "", float64(o.Executions), nil, false, &target{float64(o.Expected), fmt.Sprintf("%d", o.Expected)})
		e.add(sc, "duplicates", "", float64(o.Duplicates), nil, true, &target{0, "0"})
		e.add(sc, "missed", "", float64(o.Missed), nil, true, &target{0, "0"})
		e.add(sc, "lag p50", "ms", o.Lag.P50, nil, true, nil)
		e.add(sc, "lag p99", "ms", o.Lag.P99, nil, true, &target{5, "<= 5 ms"})
		e.add(sc, "instants with a run > 5 ms late", "", float64(o.SlowInstants), nil, true, nil)
	}
	e.report.Details["s3"] = details
	return nil
}

// periodic runs Procs workers with tasks every:1s tasks for PeriodicFor.
func (e *env) periodic(ctx context.Context, tasks int) (periodicOutcome, error) {
	f, err := e.newFleet()
	if err != nil {
		return periodicOutcome{}, err
	}
	defer f.stop()
	for range e.cfg.Procs {
		if _, err := f.spawn(ctx, tasks); err != nil {
			return periodicOutcome{}, err
		}
	}
	ready := time.Now()
	u0 := snapshot(ctx, e.admin)
	sleep(ctx, e.cfg.PeriodicFor)
	u1 := snapshot(ctx, e.admin)
	// Whole seconds when every process had been up for a second, until a
	// second before the end.
	first := ready.Truncate(time.Second).Add(2 * time.Second).UnixMilli()
	last := time.Now().Truncate(time.Second).Add(-time.Second).UnixMilli()
	f.awaitFires(ctx, tasks, last)
	f.stop()
	fires, skips := f.snapshot()
	if e.cfg.FiresOut != "" {
		if err := writeFires(fmt.Sprintf("%s.%d", e.cfg.FiresOut, tasks), fires); err != nil {
			return periodicOutcome{}, err
		}
	}
	o := checkInstants(fires, skips, tasks, first, last)
	o.Procs = e.cfg.Procs
	o.Cost = u0.to(u1, int(e.cfg.PeriodicFor/time.Second)*tasks, 0, 0)
	if e.cfg.Verbose {
		e.logf("S3 %d tasks, per run (all processes): %s", tasks, o.Cost)
	}
	return o, nil
}

// writeFires writes every run a worker reported, one per line: process,
// task, fire (unix ms), handler start (unix ns).
func writeFires(path string, fires []fireLine) error {
	var b strings.Builder
	b.WriteString("process,task,fire_ms,start_ns\n")
	for _, l := range fires {
		fmt.Fprintf(&b, "%s,%s,%d,%d\n", l.proc, l.task, l.fireMS, l.startNS)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("S3 runs: %w", err)
	}
	return nil
}

// failoverRound is one kill.
type failoverRound struct {
	Victim      string  `json:"victim"`
	VictimFire  int64   `json:"victim_fire_ms"`
	NextBy      string  `json:"next_by"`
	NextFire    int64   `json:"next_fire_ms"`
	KillToNext  float64 `json:"kill_to_next_fire_ms"`
	NextLag     float64 `json:"next_fire_lag_ms"`
	KilledAfter float64 `json:"killed_after_victim_start_ms"`
}

type failoverOutcome struct {
	Rounds   []failoverRound `json:"rounds"`
	Check    periodicOutcome `json:"check"`
	TTL      string          `json:"process_ttl"`
	RunLease string          `json:"run_lease"`
	RunFor   string          `json:"run_lasts"`
	KillWhen string          `json:"kill"`
}

func runFailover(ctx context.Context, e *env) error {
	idle, err := e.failover(ctx, e.cfg.FailoverRounds, 0, 100*time.Millisecond)
	if err != nil {
		return err
	}
	details := map[string]any{"idle": idle}
	sc := fmt.Sprintf("S5 failover %dp, SIGKILL x%d", e.cfg.Procs, len(idle.Rounds))
	worstGap, worstLag := 0.0, 0.0
	for _, r := range idle.Rounds {
		worstGap, worstLag = max(worstGap, r.KillToNext), max(worstLag, r.NextLag)
	}
	e.logf("S5 idle kills: worst kill->next fire %.0fms, worst next-fire lag %.2fms, %d dup, %d missed",
		worstGap, worstLag, idle.Check.Duplicates, idle.Check.Missed)
	e.add(sc, "kill -> next fire elsewhere (max)", "ms", worstGap, nil, true, &target{2000, "<= 2000 ms"})
	e.add(sc, "lag of that fire (max)", "ms", worstLag, nil, true, nil)
	e.add(sc, "missed+duplicates", "", float64(idle.Check.Missed+idle.Check.Duplicates), nil, true, &target{0, "0"})

	// A process killed in the middle of a run holds the task's lock until
	// its run lease expires; the claim of the first instant after that
	// takes the lock over.
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return err
	}
	mid, err := e.failover(ctx, e.cfg.FailoverRounds, 300*time.Millisecond, 100*time.Millisecond)
	if err != nil {
		return err
	}
	details["mid_run"] = mid
	if len(mid.Rounds) > 0 {
		worst := 0.0
		gaps := make([]string, len(mid.Rounds))
		for i, r := range mid.Rounds {
			worst = max(worst, r.KillToNext)
			gaps[i] = fmt.Sprintf("%.0fms", r.KillToNext)
		}
		e.logf("S5b mid-run kills (run lease %s, process ttl %s): kill->next fire %s, %d skipped while locked, %d missed, %d dup",
			mid.RunLease, mid.TTL, strings.Join(gaps, " "), mid.Check.Skipped, mid.Check.Missed, mid.Check.Duplicates)
		sc := fmt.Sprintf("S5b kill mid-run x%d (run lease %s)", len(mid.Rounds), mid.RunLease)
		e.add(sc, "kill -> next fire elsewhere (max)", "ms", worst, nil, true, &target{2000, "<= 2000 ms"})
		e.add(sc, "instants skipped (lock held)", "", float64(mid.Check.Missed), nil, true, nil)
		e.add(sc, "duplicates", "", float64(mid.Check.Duplicates), nil, true, &target{0, "0"})
	}
	e.report.Details["s5"] = details
	return nil
}

// failover runs Procs workers with one every:1s task whose runs last
// runFor, and rounds times SIGKILLs the process that ran the latest
// instant killAfter after that run started, then starts a replacement.
func (e *env) failover(ctx context.Context, rounds int, runFor, killAfter time.Duration) (failoverOutcome, error) {
	out := failoverOutcome{RunFor: runFor.String(), KillWhen: fmt.Sprintf("%v after the victim's run started", killAfter),
		TTL: "5s (default)", RunLease: "1.5s (default)"}
	extra := []string{"-sleep", runFor.String()}
	if e.cfg.ProcessTTL > 0 {
		extra = append(extra, "-ttl", e.cfg.ProcessTTL.String())
		out.TTL = e.cfg.ProcessTTL.String()
	}
	if e.cfg.RunLease > 0 {
		extra = append(extra, "-run-lease", e.cfg.RunLease.String())
		out.RunLease = e.cfg.RunLease.String()
	}
	f, err := e.newFleet()
	if err != nil {
		return out, err
	}
	defer f.stop()
	notify := make(chan fireLine, 64)
	f.mu.Lock()
	f.notify = notify
	f.mu.Unlock()
	for range e.cfg.Procs {
		if _, err := f.spawn(ctx, 1, extra...); err != nil {
			return out, err
		}
	}
	ready := time.Now()
	sleep(ctx, 2*time.Second)
	next := func(after int64) (fireLine, error) {
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l := <-notify:
				if l.fireMS > after {
					return l, nil
				}
			case <-timeout:
				return fireLine{}, fmt.Errorf("no fire after %d within 30s", after)
			case <-ctx.Done():
				return fireLine{}, ctx.Err()
			}
		}
	}
	last := int64(0)
	for range rounds {
		for len(notify) > 0 { // the victim is the process of the next fire
			<-notify
		}
		victim, err := next(last)
		if err != nil {
			return out, err
		}
		time.Sleep(time.Until(time.Unix(0, victim.startNS).Add(killAfter)))
		f.mu.Lock()
		p := f.procs[victim.proc]
		delete(f.procs, victim.proc)
		f.mu.Unlock()
		killAt := time.Now()
		p.kill()
		nf, err := next(victim.fireMS)
		if err != nil {
			return out, err
		}
		out.Rounds = append(out.Rounds, failoverRound{Victim: victim.proc, VictimFire: victim.fireMS, NextBy: nf.proc,
			NextFire: nf.fireMS, KillToNext: msOf(time.Duration(nf.startNS - killAt.UnixNano())), NextLag: msOf(nf.lag()),
			KilledAfter: msOf(killAt.Sub(time.Unix(0, victim.startNS)))})
		last = nf.fireMS
		if _, err := f.spawn(ctx, 1, extra...); err != nil {
			return out, err
		}
	}
	sleep(ctx, 2*time.Second)
	first := ready.Truncate(time.Second).Add(2 * time.Second).UnixMilli()
	lastMS := time.Now().Truncate(time.Second).Add(-time.Second).UnixMilli()
	f.awaitFires(ctx, 1, lastMS)
	f.stop()
	fires, skips := f.snapshot()
	out.Check = checkInstants(fires, skips, 1, first, lastMS)
	out.Check.Procs = e.cfg.Procs
	return out, nil
}
