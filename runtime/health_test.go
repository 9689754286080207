package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// probe is one answer of the health handler.
type probe struct {
	code int
	body healthReport
	raw  string
	took time.Duration
}

// healthServer mounts s's health handler under /healthz/ of a test server.
func healthServer(t *testing.T, s *Scheduler) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/healthz/", http.StripPrefix("/healthz", s.HealthHandler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getProbe(t *testing.T, srv *httptest.Server, method, path string) probe {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	p := probe{code: resp.StatusCode, raw: string(raw), took: time.Since(began)}
	if method == http.MethodGet && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", method, path, ct)
		}
		if err := json.Unmarshal(raw, &p.body); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, raw, err)
		}
	}
	return p
}

// expectProbe fails t unless path answers code with the status that goes
// with it.
func expectProbe(t *testing.T, srv *httptest.Server, path string, code int) probe {
	t.Helper()
	p := getProbe(t, srv, http.MethodGet, path)
	want := map[int]string{http.StatusOK: "ok", http.StatusServiceUnavailable: "unavailable"}[code]
	if p.code != code || p.body.Status != want {
		t.Errorf("GET %s = %d %s, want %d with status %q", path, p.code, p.raw, code, want)
	}
	if p.took > time.Second {
		t.Errorf("GET %s took %v, want under a second (a Kubernetes probe's default timeout)", path, p.took)
	}
	return p
}

func TestHealthProbes(t *testing.T) {
	t.Parallel()
	redisSrv := downRedis(t)
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { return nil })
	logs, logger := newLogCapture()
	s, cancel, done := startRun(t, quickClient(t, redisSrv), testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)}),
		WithLogger(logger))
	hs := healthServer(t, s)

	// Starting, Redis down: not ready, alive.
	waitFor(t, 5*time.Second, "an attempt to reach Redis", func() bool { return len(logs.lines("waiting for Redis")) > 0 })
	p := expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable)
	if p.body.Ready || p.body.Redis == "ok" || p.body.Redis == "" || p.body.Process != s.ID() || p.body.Reason == "" {
		t.Errorf("readyz while starting: %s, want ready false, the PING's error, the process and a reason", p.raw)
	}
	expectProbe(t, hs, "/healthz/livez", http.StatusOK)

	// Up.
	if err := redisSrv.Relaunch(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ready():
	case <-time.After(8 * time.Second):
		t.Fatal("not ready 8s after Redis came up")
	}
	waitFor(t, 2*time.Second, "readyz 200 once ready", func() bool {
		return getProbe(t, hs, http.MethodGet, "/healthz/readyz").code == http.StatusOK
	})
	p = expectProbe(t, hs, "/healthz/readyz", http.StatusOK)
	if !p.body.Ready || p.body.Redis != "ok" || p.body.HeartbeatAgeMS == nil || *p.body.HeartbeatAgeMS < 0 ||
		*p.body.HeartbeatAgeMS > 1000 || p.body.Process != s.ID() || p.body.Reason != "" {
		t.Errorf("readyz when ready: %s", p.raw)
	}
	for _, field := range []string{`"status":"ok"`, `"ready":true`, `"redis":"ok"`, `"heartbeat_age_ms":`, `"process":"` + s.ID() + `"`} {
		if !strings.Contains(p.raw, field) {
			t.Errorf("readyz body %s lacks %s", p.raw, field)
		}
	}
	expectProbe(t, hs, "/healthz/livez", http.StatusOK)

	// Methods and paths.
	if p := getProbe(t, hs, http.MethodHead, "/healthz/readyz"); p.code != http.StatusOK || p.raw != "" {
		t.Errorf("HEAD readyz = %d %q, want 200 without a body", p.code, p.raw)
	}
	if p := getProbe(t, hs, http.MethodHead, "/healthz/livez"); p.code != http.StatusOK {
		t.Errorf("HEAD livez = %d", p.code)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if p := getProbe(t, hs, m, "/healthz/readyz"); p.code != http.StatusMethodNotAllowed {
			t.Errorf("%s readyz = %d, want 405", m, p.code)
		}
	}
	if p := getProbe(t, hs, http.MethodGet, "/healthz/nope"); p.code != http.StatusNotFound {
		t.Errorf("GET /healthz/nope = %d, want 404", p.code)
	}

	// Paused (SIGSTOP) for longer than the liveness bound (the process TTL,
	// 1s): not ready, with the PING's error; alive throughout.
	redisSrv.Pause()
	waitFor(t, 3*time.Second, "readyz 503 while Redis is paused", func() bool {
		return getProbe(t, hs, http.MethodGet, "/healthz/readyz").code == http.StatusServiceUnavailable
	})
	p = expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable)
	if p.body.Redis == "ok" || p.body.Ready != true {
		t.Errorf("readyz while Redis is paused: %s, want the PING's error (the scheduler itself still runs)", p.raw)
	}
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		expectProbe(t, hs, "/healthz/livez", http.StatusOK)
	}
	redisSrv.Resume()
	waitFor(t, 15*time.Second, "readyz 200 after Redis resumed", func() bool {
		return getProbe(t, hs, http.MethodGet, "/healthz/readyz").code == http.StatusOK
	})

	// Killed: the same.
	redisSrv.Kill()
	waitFor(t, 3*time.Second, "readyz 503 once Redis is killed", func() bool {
		return getProbe(t, hs, http.MethodGet, "/healthz/readyz").code == http.StatusServiceUnavailable
	})
	if p := expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable); !strings.Contains(p.body.Redis, "refused") {
		t.Errorf("readyz with Redis killed: %s, want the refused PING", p.raw)
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		expectProbe(t, hs, "/healthz/livez", http.StatusOK)
	}

	// Returned: neither.
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
	expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable)
	expectProbe(t, hs, "/healthz/livez", http.StatusServiceUnavailable)
}

// A maintenance loop that has not ticked for longer than the liveness
// bound fails liveness while Redis answers, and passes it while Redis does
// not (the stall is Redis's).
func TestLivenessOfAWedgedLoop(t *testing.T) {
	t.Parallel()
	redisSrv := redistest.Start(t)
	s, err := NewScheduler(quickClient(t, redisSrv), NewRegistry(), WithLogger(nil), WithProcessTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	hs := healthServer(t, s)
	expectProbe(t, hs, "/healthz/livez", http.StatusOK) // Run not called: nothing to be wedged
	expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable)

	// As if Run ran and its loop last ticked a minute ago.
	s.health.epoch = time.Now().Add(-time.Minute)
	s.health.beat()
	s.health.epoch = time.Now().Add(-2 * time.Minute)
	s.health.state.Store(runRunning)
	p := expectProbe(t, hs, "/healthz/livez", http.StatusServiceUnavailable)
	if !strings.Contains(p.body.Reason, "maintenance loop") || p.body.Redis != "ok" {
		t.Errorf("livez of a wedged loop: %s", p.raw)
	}
	if p := expectProbe(t, hs, "/healthz/readyz", http.StatusServiceUnavailable); p.body.HeartbeatAgeMS == nil || *p.body.HeartbeatAgeMS < 59000 {
		t.Errorf("readyz with a heartbeat a minute old: %s", p.raw)
	}

	redisSrv.Kill()
	time.Sleep(healthPingCache)
	p = expectProbe(t, hs, "/healthz/livez", http.StatusOK)
	if p.body.Redis == "ok" {
		t.Errorf("livez with Redis killed reports redis ok: %s", p.raw)
	}
}
