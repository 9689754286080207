package bench

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Machine describes where a run happened.
type Machine struct {
	NumCPU     int    `json:"nproc"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu"`
	Go         string `json:"go"`
	Redis      string `json:"redis"`
	Hz         string `json:"redis_hz"`
}

// Summary is Machine on one line.
func (m Machine) Summary() string {
	return fmt.Sprintf("%d CPUs (%s), %s, redis %s hz %s", m.NumCPU, m.CPU, m.Go, m.Redis, m.Hz)
}

func machine(ctx context.Context, rdb *redis.Client) Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(), CPU: "?"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	m.Redis = info(ctx, rdb, "server")["redis_version"]
	if hz, err := rdb.ConfigGet(ctx, "hz").Result(); err == nil {
		m.Hz = hz["hz"]
	}
	return m
}

// loadavg is the first three fields of /proc/loadavg ("?" elsewhere).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// info returns the fields of one INFO section.
func info(ctx context.Context, rdb redis.Cmdable, section string) map[string]string {
	out := map[string]string{}
	s, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return out
	}
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// usage is a snapshot of what work costs: Redis CPU and commands, this
// process's CPU.
type usage struct {
	redisCPU time.Duration
	selfCPU  time.Duration
	cmds     map[string]cmdStat // INFO commandstats (commands inside scripts included)
	at       time.Time
}

type cmdStat struct {
	Calls int64   `json:"calls"`
	Usec  int64   `json:"usec"`
	PerOp float64 `json:"usec_per_call"`
}

func snapshot(ctx context.Context, rdb redis.Cmdable) usage {
	u := usage{at: time.Now(), cmds: map[string]cmdStat{}}
	cpu := info(ctx, rdb, "cpu")
	u.redisCPU = seconds(cpu["used_cpu_user"]) + seconds(cpu["used_cpu_sys"])
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.selfCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for k, v := range info(ctx, rdb, "commandstats") {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(kv, "=")
			switch key {
			case "calls":
				st.Calls, _ = strconv.ParseInt(val, 10, 64)
			case "usec":
				st.Usec, _ = strconv.ParseInt(val, 10, 64)
			}
		}
		u.cmds[name] = st
	}
	return u
}

func seconds(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}

// cost is the difference of two snapshots, per unit of work.
type cost struct {
	RedisCPUPerOp float64            `json:"redis_cpu_us_per_op"`
	SelfCPUPerOp  float64            `json:"bench_process_cpu_us_per_op"`
	TripsPerOp    float64            `json:"round_trips_per_op"`
	CmdsPerOp     float64            `json:"commands_sent_per_op"`
	Commands      map[string]cmdStat `json:"redis_commands"` // top commands by time
}

func (a usage) to(b usage, ops int, trips, sent int64) cost {
	c := cost{Commands: map[string]cmdStat{}}
	if ops <= 0 {
		return c
	}
	n := float64(ops)
	c.RedisCPUPerOp = float64((b.redisCPU - a.redisCPU).Microseconds()) / n
	c.SelfCPUPerOp = float64((b.selfCPU - a.selfCPU).Microseconds()) / n
	c.TripsPerOp = float64(trips) / n
	c.CmdsPerOp = float64(sent) / n
	type kv struct {
		name string
		st   cmdStat
	}
	var all []kv
	for name, st := range b.cmds {
		prev := a.cmds[name]
		d := cmdStat{Calls: st.Calls - prev.Calls, Usec: st.Usec - prev.Usec}
		if d.Calls > 0 {
			d.PerOp = float64(d.Calls) / n
			all = append(all, kv{name, d})
		}
	}
	slices.SortFunc(all, func(x, y kv) int { return int(y.st.Usec - x.st.Usec) })
	for _, e := range all[:min(len(all), 8)] {
		c.Commands[e.name] = e.st
	}
	return c
}

func (c cost) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redis cpu %.1fµs/op, bench process cpu %.1fµs/op, %.3f round trips/op, %.2f commands sent/op;",
		c.RedisCPUPerOp, c.SelfCPUPerOp, c.TripsPerOp, c.CmdsPerOp)
	names := make([]string, 0, len(c.Commands))
	for n := range c.Commands {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int { return int(c.Commands[y].Usec - c.Commands[x].Usec) })
	for _, n := range names {
		st := c.Commands[n]
		fmt.Fprintf(&b, " %s %.2f/op %dms", n, st.PerOp, st.Usec/1000)
	}
	return b.String()
}

// counter is a go-redis hook counting round trips and commands sent.
type counter struct {
	trips, cmds atomic.Int64
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		c.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		c.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// client returns a new client of the bench's server with a counter.
func (e *env) client() (*redis.Client, *counter) {
	c := redis.NewClient(e.srv.Options())
	n := &counter{}
	c.AddHook(n)
	return c, n
}

// dist summarises a set of durations.
type dist struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
	Min  float64 `json:"min_ms"`
	Mean float64 `json:"mean_ms"`
}

func summarize(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return dist{N: len(s), P50: msOf(pct(s, 0.50)), P99: msOf(pct(s, 0.99)), Max: msOf(s[len(s)-1]),
		Min: msOf(s[0]), Mean: msOf(sum / time.Duration(len(s)))}
}

// pct is the nearest-rank percentile of sorted s.
func pct(s []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (d dist) String() string {
	return fmt.Sprintf("n=%d p50=%.2fms p99=%.2fms max=%.2fms", d.N, d.P50, d.P99, d.Max)
}

// Calibration is what the machine itself achieves at the time of a run, so
// that every figure can be read against it on a shared, noisy machine.
type Calibration struct {
	// TimerLate is how late a goroutine wakes from a timer set for each
	// whole millisecond for 3 s (as S2's jobs are due): the floor of any lag
	// here, tail included.
	TimerLate dist `json:"timer_late"`
	// PingRTT is one connection's PING round trip to the bench's server.
	PingRTT dist `json:"ping_rtt"`
	// IdleRTT is the PING round trip after 100 ms with no request (as a
	// claim at the instant of an every:1s task follows an idle stretch);
	// WarmedRTT the same with another PING sent, unanswered, 1 ms before
	// (what the dispatch loop does before a prepared instant). 20 each.
	IdleRTT   dist `json:"idle_ping_rtt"`
	WarmedRTT dist `json:"warmed_ping_rtt"`
	// PingRate is PINGs per second over 50 connections, one in flight each
	// (the unpipelined request rate of the server as this machine runs it).
	PingRate float64 `json:"ping_per_s_50_conns"`
	Load     string  `json:"load"`
}

func calibrate(ctx context.Context, rdb *redis.Client) Calibration {
	c := Calibration{Load: loadavg()}
	var late []time.Duration
	next := time.Now().Truncate(time.Millisecond).Add(time.Millisecond)
	for end := next.Add(3 * time.Second); next.Before(end) && ctx.Err() == nil; {
		sleep(ctx, time.Until(next))
		now := time.Now()
		late = append(late, now.Sub(next))
		next = next.Add(time.Millisecond)
		if next.Before(now) { // a stall: the instants it skipped are not measured twice
			next = now.Truncate(time.Millisecond).Add(time.Millisecond)
		}
	}
	c.TimerLate = summarize(late)
	var rtts []time.Duration
	for range 500 {
		t0 := time.Now()
		if rdb.Ping(ctx).Err() != nil {
			break
		}
		rtts = append(rtts, time.Since(t0))
	}
	c.PingRTT = summarize(rtts)
	c.IdleRTT, c.WarmedRTT = idleRTT(ctx, rdb, false), idleRTT(ctx, rdb, true)
	var n atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(time.Second)
	opts := *rdb.Options()
	opts.PoolSize = 50
	pool := redis.NewClient(&opts)
	defer pool.Close()
	for range 50 {
		wg.Go(func() {
			for time.Now().Before(end) && pool.Ping(ctx).Err() == nil {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	c.PingRate = float64(n.Load())
	return c
}

// idleRTT times 20 PINGs, each after 100 ms without a request; with warm,
// another PING goes out 1 ms before each, not waited for.
func idleRTT(ctx context.Context, rdb *redis.Client, warm bool) dist {
	var rtts []time.Duration
	for range 20 {
		if warm {
			sleep(ctx, 99*time.Millisecond)
			go rdb.Ping(ctx)
			sleep(ctx, time.Millisecond)
		} else {
			sleep(ctx, 100*time.Millisecond)
		}
		t0 := time.Now()
		if rdb.Ping(ctx).Err() != nil {
			break
		}
		rtts = append(rtts, time.Since(t0))
	}
	return summarize(rtts)
}
