package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/dashboard"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's screenshot to docs/dashboard.png")

// TestDashboardInChromium loads the dashboard in headless Chromium (driven
// through chromedriver's WebDriver API), sees the tasks of running
// schedulers, and the jobs (why a due one waits, a unique one's identity),
// clicks pause and sees the status change in Redis and on the page, opens
// a task's history, and takes a screenshot.
//
// It needs Debian's chromium and chromium-driver (.ci/run installs them).
// Without them it fails when CI=true and skips otherwise.
func TestDashboardInChromium(t *testing.T) {
	browser, driver := lookBrowser(t)
	d := startDemo(t)
	h, err := dashboard.New(dashboard.Config{Inspector: d.inspector, Namespace: "crontab", Token: "demo-token"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	time.Sleep(3 * time.Second) // some runs, for the sparklines and the history

	wd := startDriver(t, driver, browser)
	wd.navigate(srv.URL + "/?token=demo-token")
	wd.waitFor("the tasks of the running schedulers", 15*time.Second, func() bool {
		return wd.exists(`body[data-loaded="true"] tr[data-task="heartbeat"]`)
	})
	for _, task := range []string{"heartbeat", "minute report", "clean logs", "flaky"} {
		if !wd.exists(fmt.Sprintf(`tr[data-task=%q]`, task)) {
			t.Errorf("the page lacks task %q", task)
		}
	}
	if got := wd.text(`tr[data-task="heartbeat"] td.status`); !strings.Contains(got, "active") {
		t.Errorf("heartbeat status on the page: %q", got)
	}
	if got := wd.text(`tr[data-task="clean logs"] .countdown`); !strings.HasPrefix(got, "in ") {
		t.Errorf("clean logs countdown: %q", got)
	}
	wd.waitFor("the processes", 5*time.Second, func() bool { return wd.exists(`tr[data-process="worker-b:4188"]`) })
	if !wd.exists(`#jobs tr[data-job="sms-15550100"]`) || !wd.exists(`#dead tr[data-job="sms-0001"]`) {
		t.Error("the page lacks the pending or the dead job")
	}
	if got := wd.text(`#jobs tr[data-job="export-q3"] td.waiting`); got != "no process" {
		t.Errorf("export-q3 waiting on the page: %q, want no process", got)
	}
	if got := wd.text(`#jobs tr[data-job="sms-15550100"] td.waiting`); got != "" {
		t.Errorf("sms-15550100 (not due) waiting on the page: %q, want nothing", got)
	}
	if got := wd.text(`#jobs tr[data-job="sms-15550199"] .unique`); !strings.Contains(got, "otp:+15550199") {
		t.Errorf("sms-15550199's unique identity on the page: %q", got)
	}

	wd.click(`tr[data-task="heartbeat"] button[data-action="pause"]`)
	deadline := time.Now().Add(5 * time.Second)
	for d.status("heartbeat") != "paused" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := d.status("heartbeat"); st != "paused" {
		t.Fatalf("status in Redis after clicking pause: %q", st)
	}
	wd.waitFor("the page to show heartbeat paused", 5*time.Second, func() bool {
		return strings.Contains(wd.text(`tr[data-task="heartbeat"] td.status`), "paused") &&
			wd.exists(`tr[data-task="heartbeat"] button[data-action="resume"]`)
	})

	wd.click(`tr[data-task="flaky"] .task-name`)
	wd.waitFor("flaky's history", 5*time.Second, func() bool {
		return wd.exists(`#history-section:not([hidden]) #history tbody tr td .badge`)
	})
	if got := wd.text("#history-task"); got != "flaky" {
		t.Errorf("history of %q, want flaky", got)
	}
	if wd.exists(`#error:not([hidden])`) {
		t.Errorf("the page shows an error: %s", wd.text("#error"))
	}

	shot := wd.screenshot()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 700 {
		t.Errorf("screenshot is %v", b)
	}
	out := filepath.Join(t.TempDir(), "dashboard.png")
	if *updateScreenshot {
		out = filepath.Join("..", "docs", "dashboard.png")
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
}

// lookBrowser finds chromium and chromedriver.
func lookBrowser(t *testing.T) (browser, driver string) {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	driver, _ = exec.LookPath("chromedriver")
	if browser == "" || driver == "" {
		msg := "chromium and chromedriver are needed: apt-get install -y chromium chromium-driver"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return browser, driver
}

// webDriver is a tiny client of the W3C WebDriver protocol.
type webDriver struct {
	t       *testing.T
	base    string
	session string
}

const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// startDriver starts chromedriver and a headless Chromium session; both
// are stopped at cleanup.
func startDriver(t *testing.T, driver, browser string) *webDriver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var log bytes.Buffer
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = &log, &log
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromedriver log:\n%s", log.String())
		}
	})
	wd := &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	wd.waitFor("chromedriver to start", 10*time.Second, func() bool {
		resp, err := http.Get(wd.base + "/status")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": browser,
			"args": []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-dev-shm-usage", "--window-size=1440,1330", "--hide-scrollbars",
				"--user-data-dir=" + t.TempDir()},
		},
	}}}
	var reply struct {
		SessionID string `json:"sessionId"`
	}
	wd.call("POST", "/session", caps, &reply)
	if reply.SessionID == "" {
		t.Fatal("webdriver: no session id")
	}
	wd.session = reply.SessionID
	t.Cleanup(func() { wd.try("DELETE", "/session/"+wd.session, nil, nil) })
	return wd
}

// call sends one WebDriver command and decodes its "value" into out.
func (wd *webDriver) call(method, path string, body, out any) {
	wd.t.Helper()
	if err := wd.try(method, path, body, out); err != nil {
		wd.t.Fatal(err)
	}
}

func (wd *webDriver) try(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, wd.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("webdriver %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if os.Getenv("WD_DEBUG") != "" {
		wd.t.Logf("%s %s -> %d %.300s", method, path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, env.Value)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

func (wd *webDriver) path(p string) string { return "/session/" + wd.session + p }

func (wd *webDriver) navigate(url string) {
	wd.call("POST", wd.path("/url"), map[string]string{"url": url}, nil)
}

// find returns the id of the element matching css, or "".
func (wd *webDriver) find(css string) string {
	var els []map[string]string
	wd.call("POST", wd.path("/elements"), map[string]string{"using": "css selector", "value": css}, &els)
	if len(els) == 0 {
		return ""
	}
	return els[0][elementKey]
}

func (wd *webDriver) exists(css string) bool { return wd.find(css) != "" }

func (wd *webDriver) text(css string) string {
	id := wd.find(css)
	if id == "" {
		return ""
	}
	var s string
	if err := wd.try("GET", wd.path("/element/"+id+"/text"), nil, &s); err != nil {
		return "" // stale: the page re-rendered in between
	}
	return s
}

// click clicks the element matching css, retrying while the page
// re-renders it.
func (wd *webDriver) click(css string) {
	wd.t.Helper()
	var last error
	for range 20 {
		id := wd.find(css)
		if id == "" {
			last = fmt.Errorf("no element %s", css)
		} else if last = wd.try("POST", wd.path("/element/"+id+"/click"), map[string]any{}, nil); last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	wd.t.Fatalf("click %s: %v", css, last)
}

func (wd *webDriver) screenshot() []byte {
	var s string
	wd.call("GET", wd.path("/screenshot"), nil, &s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		wd.t.Fatal(err)
	}
	return b
}

func (wd *webDriver) waitFor(what string, d time.Duration, cond func() bool) {
	wd.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			var url, src string
			wd.try("GET", wd.path("/url"), nil, &url)
			wd.try("GET", wd.path("/source"), nil, &src)
			var logs any
			wd.try("POST", wd.path("/se/log"), map[string]string{"type": "browser"}, &logs)
			wd.t.Fatalf("timed out after %v waiting for %s; page %s, console %v, source:\n%s", d, what, url, logs, src)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
