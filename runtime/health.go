package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The bounds of the health probes' PING of Redis: one PING at a time, its
// answer awaited for at most healthPingTimeout (under the 1s default
// timeoutSeconds of a Kubernetes probe) and reused for healthPingCache, so a
// storm of probes sends Redis at most four PINGs a second.
const (
	healthPingTimeout = 500 * time.Millisecond
	healthPingCache   = 250 * time.Millisecond
)

// The states of Run, for the probes.
const (
	runIdle     int32 = iota // Run not called
	runStarting              // waiting for Redis, registering
	runRunning               // Ready is closed, dispatch runs
	runStopping              // Run's ctx ended: draining
	runReturned              // Run returned
)

// healthState is what the probes read: Run's state, the maintenance loop's
// last tick and last successful heartbeat, and the cached PING.
type healthState struct {
	epoch  time.Time    // monotonic base of tickNS and beatNS
	state  atomic.Int32 // runIdle ... runReturned
	tickNS atomic.Int64 // since epoch: the last tick of the maintenance loop, or heartbeat attempt
	beatNS atomic.Int64 // since epoch: the end of the last successful heartbeat; 0 before the first
	ping   pinger
}

func newHealthState() *healthState { return &healthState{epoch: time.Now()} }

// tick records that the maintenance loop (or the keep-alive loop of a
// stopping scheduler) started a round.
func (h *healthState) tick() { h.tickNS.Store(max(1, int64(time.Since(h.epoch)))) }

// beat records a successful heartbeat.
func (h *healthState) beat() {
	now := max(1, int64(time.Since(h.epoch)))
	h.beatNS.Store(now)
	h.tickNS.Store(now)
}

// age returns how long ago the instant at (since epoch) was, and false
// when at is 0 (never).
func (h *healthState) age(at int64) (time.Duration, bool) {
	if at == 0 {
		return 0, false
	}
	return time.Since(h.epoch) - time.Duration(at), true
}

// pinger sends one PING at a time and caches its answer.
type pinger struct {
	mu       sync.Mutex
	at       time.Time     // when err was measured; zero: never
	err      error         // the last PING's answer
	inflight chan struct{} // closed when the PING in flight answers; nil if none
}

// check returns Redis's answer to a PING at most healthPingCache old, or
// waits at most healthPingTimeout for a new one.
func (p *pinger) check(ctx context.Context, ping func(context.Context) error) error {
	p.mu.Lock()
	if !p.at.IsZero() && time.Since(p.at) < healthPingCache {
		err := p.err
		p.mu.Unlock()
		return err
	}
	done := p.inflight
	if done == nil {
		done = make(chan struct{})
		p.inflight = done
		go func() {
			// Not ctx: the answer serves the probes that come after this one.
			pctx, cancel := context.WithTimeout(context.Background(), healthPingTimeout)
			err := ping(pctx)
			cancel()
			p.mu.Lock()
			p.at, p.err, p.inflight = time.Now(), err, nil
			p.mu.Unlock()
			close(done)
		}()
	}
	p.mu.Unlock()
	t := time.NewTimer(healthPingTimeout)
	defer t.Stop()
	select {
	case <-done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	case <-t.C:
		return fmt.Errorf("no answer to PING within %v", healthPingTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// healthReport is the JSON body of the probes.
type healthReport struct {
	Status         string `json:"status"`           // "ok" or "unavailable"
	Ready          bool   `json:"ready"`            // Ready is closed and Run's ctx has not ended
	Redis          string `json:"redis"`            // "ok" or the PING's error
	HeartbeatAgeMS *int64 `json:"heartbeat_age_ms"` // null before the first heartbeat
	Process        string `json:"process"`
	Reason         string `json:"reason,omitempty"` // why the status is "unavailable"
}

// HealthHandler returns an http.Handler for the liveness and readiness
// probes of an orchestrator such as Kubernetes. It serves two paths,
// relative to where it is mounted: GET or HEAD /livez and /readyz answer
// 200 when the check passes and 503 when it fails, with a JSON body
//
//	{"status":"ok","ready":true,"redis":"ok","heartbeat_age_ms":180,"process":"host:42:1f2e3d4c"}
//
// (status "unavailable" and a "reason" when it fails; "redis" is "ok" or
// the error of a PING; heartbeat_age_ms is the age of the last successful
// heartbeat, null before the first). Other methods get 405, other paths 404.
// Mount it at the root of a mux, or under a prefix with http.StripPrefix:
//
//	http.Handle("/", s.HealthHandler()) // /livez, /readyz
//	mux.Handle("/healthz/", http.StripPrefix("/healthz", s.HealthHandler())) // /healthz/livez, /healthz/readyz
//
// Readiness (/readyz) passes while the scheduler claims tasks and jobs:
// Ready is closed, Run's ctx has not ended, Redis (the master of the
// namespace's slot on a Cluster) answers a PING within 500ms, and the last
// successful heartbeat is younger than the process TTL (WithProcessTTL).
//
// Liveness (/livez) fails only when restarting the process would help:
// Run has returned (the process lives on without a scheduler), or the
// maintenance loop, which ticks every heartbeat interval (TTL/5), has not
// ticked for the longer of 3 intervals and the process TTL while Redis
// answers its PING (the loop is wedged). While Run waits for Redis at start
// and while Redis is down or stalled, liveness passes: every process is
// stuck on the same Redis then, and an orchestrator that restarted them
// all would make an outage of Redis an outage of every scheduler, without
// fixing anything. Before Run is called, both pass and fail as at start.
//
// The PING is shared by all probes: one at a time, its answer reused for
// 250ms, so probes cannot flood Redis; a probe waits at most 500ms for it,
// under the 1s default timeout of a Kubernetes probe.
func (s *Scheduler) HealthHandler() http.Handler {
	return http.HandlerFunc(s.serveHealth)
}

func (s *Scheduler) serveHealth(w http.ResponseWriter, r *http.Request) {
	var check func(context.Context, *healthReport)
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case "livez":
		check = s.liveness
	case "readyz":
		check = s.readiness
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	state := s.health.state.Load()
	rep := healthReport{Status: "ok", Ready: state == runRunning, Process: s.id}
	if age, ok := s.health.age(s.health.beatNS.Load()); ok {
		ms := age.Milliseconds()
		rep.HeartbeatAgeMS = &ms
	}
	if err := s.health.ping.check(r.Context(), s.db.Ping); err != nil {
		rep.Redis = err.Error()
	} else {
		rep.Redis = "ok"
	}
	check(r.Context(), &rep)
	code := http.StatusOK
	if rep.Reason != "" {
		rep.Status, code = "unavailable", http.StatusServiceUnavailable
	}
	body, _ := json.Marshal(rep)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(append(body, '\n'))
	}
}

// readiness sets rep.Reason when the scheduler does not claim tasks and
// jobs (see HealthHandler).
func (s *Scheduler) readiness(_ context.Context, rep *healthReport) {
	switch s.health.state.Load() {
	case runIdle:
		rep.Reason = "Run has not been called"
	case runStarting:
		rep.Reason = "starting: waiting for Redis and registering the tasks"
	case runStopping:
		rep.Reason = "stopping: Run's ctx ended"
	case runReturned:
		rep.Reason = "stopped: Run returned"
	default:
		age, ok := s.health.age(s.health.beatNS.Load())
		switch {
		case rep.Redis != "ok":
			rep.Reason = "redis does not answer PING"
		case !ok || age >= s.opts.processTTL:
			rep.Reason = fmt.Sprintf("no successful heartbeat within the process TTL (%v)", s.opts.processTTL)
		}
	}
}

// liveness sets rep.Reason when the scheduler is gone or wedged (see
// HealthHandler).
func (s *Scheduler) liveness(_ context.Context, rep *healthReport) {
	switch s.health.state.Load() {
	case runIdle, runStarting:
		return
	case runReturned:
		rep.Reason = "stopped: Run returned"
		return
	}
	bound := max(3*s.opts.heartbeat, s.opts.processTTL)
	if age, ok := s.health.age(s.health.tickNS.Load()); ok && age > bound && rep.Redis == "ok" {
		rep.Reason = fmt.Sprintf("the maintenance loop has not ticked for %v though Redis answers", age.Round(time.Millisecond))
	}
}
