package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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
	crontab "github.com/gocrontab/crontab/runtime"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's screenshots to docs/dashboard.png, dashboard-tasks.png, dashboard-jobs.png and dashboard-form.png")

// TestDashboardInChromium loads the dashboard in headless Chromium (driven
// through chromedriver's WebDriver API), sees the tasks of running
// schedulers, and the jobs (why a due one waits, a unique one's identity),
// clicks pause and sees the status change in Redis and on the page, opens
// a task's history; searches tasks by name, pages through them with Next
// and Prev, runs one now, pauses a selection and cancels a selection of
// jobs, each seen in Redis; shows the dead jobs; and takes screenshots.
// A read-only dashboard shows the same tasks without a button.
//
// It needs Debian's chromium and chromium-driver (.ci/run installs them).
// Without them it fails when CI=true and skips otherwise.
func TestDashboardInChromium(t *testing.T) {
	browser, driver := lookBrowser(t)
	d := startDemo(t)
	// 45 run-time tasks more, and 100 fillers, for the pages (20 a page):
	// past 128 tasks the queue is no listpack, which a scan returns whole
	// (TaskPage), so the pages hold about 20.
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "send sms", New: func() crontab.TaskInterface { return new(sendSMS) }}); err != nil {
		t.Fatal(err)
	}
	producer := crontab.NewClient(d.rdb, reg)
	bg := context.Background()
	for i := range 45 {
		spec := crontab.TaskSpec{Key: fmt.Sprintf("reminder %02d", i), Type: "send sms", Params: sendSMS{To: fmt.Sprintf("+1555%04d", i), Text: "reminder"},
			Expression: fmt.Sprintf("daily:%02d:%02d", 6+i%12, i%60)}
		if err := producer.SetTask(bg, spec); err != nil {
			t.Fatal(err)
		}
	}
	fillers := make([]crontab.TaskSpec, 100)
	for i := range fillers {
		fillers[i] = crontab.TaskSpec{Key: fmt.Sprintf("pad %03d", i), Type: "send sms", Params: sendSMS{To: "+15550000"},
			Expression: "daily:05:00"}
	}
	if _, err := producer.SetTasks(bg, fillers); err != nil {
		t.Fatal(err)
	}
	const allTasks = 4 + 45 + 100
	h, err := dashboard.New(dashboard.Config{Inspector: d.inspector, Client: producer, Namespace: "crontab", Token: "demo-token"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	time.Sleep(3 * time.Second) // some runs, for the sparklines and the history

	wd := startDriver(t, driver, browser)
	wd.navigate(srv.URL + "/?token=demo-token")
	wd.waitFor("the first page of tasks", 15*time.Second, func() bool {
		return wd.exists(`body[data-loaded="true"] #tasks tbody tr[data-task]`)
	})
	// Search first: the demo's tasks by name, whatever page they are on.
	wd.typeText("#task-search", "[hmcf]*")
	wd.waitFor("the search for [hmcf]*", 5*time.Second, func() bool {
		return strings.Join(wd.rows("#tasks", "data-task"), ",") == "clean logs,flaky,heartbeat,minute report"
	})
	for _, task := range []string{"heartbeat", "minute report", "clean logs", "flaky"} {
		if !wd.exists(fmt.Sprintf(`tr[data-task=%q]`, task)) {
			t.Errorf("the search for [hmcf]* lacks task %q", task)
		}
	}
	if got := wd.text(`tr[data-task="heartbeat"] td.status`); !strings.Contains(got, "active") {
		t.Errorf("heartbeat status on the page: %q", got)
	}
	if got := wd.text(`tr[data-task="clean logs"] .countdown`); !strings.HasPrefix(got, "in ") {
		t.Errorf("clean logs countdown: %q", got)
	}
	wd.waitFor("the processes", 5*time.Second, func() bool { return wd.exists(`tr[data-process="worker-b:4188"]`) })
	if got := wd.text(`tr[data-process="worker-b:4188"] td.roles`); !strings.Contains(got, "5 types") {
		t.Errorf("worker-b's role on the page: %q, want its 5 types", got)
	}
	if !wd.exists(`#jobs tr[data-job="sms-15550100"]`) {
		t.Error("the page lacks the pending job")
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

	// Run now: clean logs (daily at 03:00) runs once, at once.
	wd.click(`tr[data-task="clean logs"] button[data-action="trigger"]`)
	wd.waitFor("the notice of the run", 5*time.Second, func() bool { return strings.Contains(wd.text("#notice"), "fires at") })
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if tk, err := d.inspector.Task(bg, "clean logs"); err == nil && tk.Runs >= 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if tk, err := d.inspector.Task(bg, "clean logs"); err != nil || tk.Runs != 1 {
		t.Errorf("clean logs after Run now: %d runs, %v; want 1", tk.Runs, err)
	}

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
	wd.waitFor("the charts of the last hour's runs", 5*time.Second, func() bool {
		return wd.exists(`#chart-fires svg rect.ok`) && wd.exists(`#chart-fires svg rect.fail`) && wd.exists(`#chart-lag svg polyline`) &&
			wd.exists(`#chart-jobs svg rect.fail`)
	})
	saveShot(t, wd, "dashboard.png")
	wd.click("#history-close")

	// Paging: no search, 20 a page, Next to the end and Prev back.
	wd.typeText("#task-search", "")
	wd.waitFor("every task's first page", 5*time.Second, func() bool {
		return len(wd.rows("#tasks", "data-task")) >= 20 && !wd.exists("#tasks-next:disabled")
	})
	seen := map[string]int{}
	first := wd.rows("#tasks", "data-task")
	for page := 1; ; page++ {
		for _, n := range wd.rows("#tasks", "data-task") {
			seen[n]++
		}
		if wd.exists("#tasks-next:disabled") {
			break
		}
		wd.click("#tasks-next")
		want := fmt.Sprintf("page %d", page+1)
		wd.waitFor(want, 5*time.Second, func() bool { return wd.text("#tasks-page") == want })
		if page > allTasks {
			t.Fatal("Next does not end")
		}
	}
	if len(seen) != allTasks {
		t.Errorf("the pages showed %d tasks, want %d", len(seen), allTasks)
	}
	for n, k := range seen {
		if k != 1 {
			t.Errorf("task %q on %d pages", n, k)
		}
	}
	for !wd.exists("#tasks-prev:disabled") {
		wd.click("#tasks-prev")
		time.Sleep(150 * time.Millisecond)
	}
	wd.waitFor("page 1 again", 5*time.Second, func() bool {
		return wd.text("#tasks-page") == "page 1" && strings.Join(wd.rows("#tasks", "data-task"), ",") == strings.Join(first, ",")
	})

	// Bulk pause of a search's selection.
	wd.typeText("#task-search", "reminder 1")
	wd.waitFor("the search for reminder 1", 5*time.Second, func() bool {
		r := wd.rows("#tasks", "data-task")
		return len(r) == 10 && r[0] == "reminder 10"
	})
	wd.click(`tr[data-task="reminder 11"] input.pick`)
	wd.click(`tr[data-task="reminder 12"] input.pick`)
	wd.waitFor("two selected", 5*time.Second, func() bool { return wd.text("#tasks-picked") == "2 selected" })
	saveShot(t, wd, "dashboard-tasks.png")
	wd.click(`#tasks-bulk button[data-bulk="pause"]`)
	deadline = time.Now().Add(5 * time.Second)
	for (d.status("reminder 11") != "paused" || d.status("reminder 12") != "paused") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if d.status("reminder 11") != "paused" || d.status("reminder 12") != "paused" || d.status("reminder 13") != "active" {
		t.Errorf("after the bulk pause: %s %s %s", d.status("reminder 11"), d.status("reminder 12"), d.status("reminder 13"))
	}
	wd.waitFor("the page to show the paused selection", 5*time.Second, func() bool {
		return strings.Contains(wd.text(`tr[data-task="reminder 12"] td.status`), "paused") && wd.text("#tasks-picked") == ""
	})
	wd.click(`#task-status option[value="paused"]`)
	wd.waitFor("the paused filter", 5*time.Second, func() bool {
		return strings.Join(wd.rows("#tasks", "data-task"), ",") == "reminder 11,reminder 12"
	})

	// Bulk cancel of two pending jobs.
	wd.click(`#jobs tr[data-job="sms-15550101"] input.pick`)
	wd.click(`#jobs tr[data-job="sms-15550102"] input.pick`)
	wd.waitFor("two jobs selected", 5*time.Second, func() bool { return wd.text("#jobs-picked") == "2 selected" })
	wd.exec(`document.getElementById("jobs-section").scrollIntoView(); return null;`, nil)
	saveShot(t, wd, "dashboard-jobs.png")
	wd.click(`#jobs-bulk button[data-bulk="cancel"]`)
	wd.waitFor("the cancelled jobs to leave the page", 5*time.Second, func() bool {
		return !wd.exists(`#jobs tr[data-job="sms-15550101"]`) && !wd.exists(`#jobs tr[data-job="sms-15550102"]`) &&
			wd.exists(`#jobs tr[data-job="sms-15550100"]`)
	})
	for _, id := range []string{"sms-15550101", "sms-15550102"} {
		if _, err := d.inspector.Job(bg, id); !errors.Is(err, crontab.ErrNotFound) {
			t.Errorf("job %s after the bulk cancel: %v", id, err)
		}
	}
	wd.click(`#job-state option[value="dead"]`)
	wd.waitFor("the dead jobs", 5*time.Second, func() bool {
		return wd.exists(`#jobs tr[data-job="sms-0001"] button[data-action="retry"]`) && !wd.exists(`#jobs tr[data-job="sms-15550100"]`)
	})
	if !wd.exists(`#jobs-bulk button[data-bulk="retry"]:not([hidden])`) || !wd.exists(`#jobs-bulk button[data-bulk="cancel"][hidden]`) {
		t.Error("the dead jobs' bulk bar does not offer retry alone")
	}
	if wd.exists(`#error:not([hidden])`) {
		t.Errorf("the page shows an error: %s", wd.text("#error"))
	}

	// The run-time task form: SetTask's refusal shown in it, then a save
	// and an edit, each in Redis.
	wd.click("#task-new")
	wd.waitFor("the form", 5*time.Second, func() bool { return wd.exists("#task-form:not([hidden])") })
	wd.typeText(`#task-form input[name="name"]`, "otp resend")
	wd.typeText(`#task-form input[name="type"]`, "send sms")
	wd.typeText(`#task-form input[name="expression"]`, "every:soon")
	wd.typeText(`#task-form textarea[name="params"]`, `{"to": "+15550111", "text": "again"}`)
	wd.click("#task-save")
	wd.waitFor("the refusal in the form", 5*time.Second, func() bool {
		return strings.Contains(wd.text("#task-form-error"), "expression") && wd.exists("#task-form:not([hidden])")
	})
	if _, err := d.inspector.Task(bg, "otp resend"); err == nil {
		t.Error("a refused task was written")
	}
	saveShot(t, wd, "dashboard-form.png")
	wd.typeText(`#task-form input[name="expression"]`, "every:15m")
	wd.click("#task-save")
	wd.waitFor("the form to close on save", 5*time.Second, func() bool { return wd.exists("#task-form[hidden]") })
	if tk, err := d.inspector.Task(bg, "otp resend"); err != nil || tk.Expression != "every:15m" || tk.Source != crontab.SourceDynamic ||
		!strings.Contains(string(tk.Params), "+15550111") {
		t.Fatalf("the saved task: %+v, %v", tk, err)
	}
	wd.click(`#task-status option[value=""]`)
	wd.typeText("#task-search", "otp")
	wd.waitFor("the saved task on the page", 5*time.Second, func() bool { return wd.exists(`tr[data-task="otp resend"] button[data-action="edit"]`) })
	wd.click(`tr[data-task="otp resend"] button[data-action="edit"]`)
	wd.waitFor("the form to edit it", 5*time.Second, func() bool { return wd.text("#task-form-title") == "Edit otp resend" })
	wd.typeText(`#task-form input[name="expression"]`, "hourly:45")
	wd.click("#task-save")
	wd.waitFor("the edit on the page", 5*time.Second, func() bool {
		return strings.Contains(wd.text(`tr[data-task="otp resend"]`), "hourly:45")
	})
	if tk, _ := d.inspector.Task(bg, "otp resend"); tk.Expression != "hourly:45" {
		t.Errorf("the edited task's expression in Redis: %q", tk.Expression)
	}

	// Read-only: the same tasks, no button, no selection.
	ro, err := dashboard.New(dashboard.Config{Inspector: d.inspector, Namespace: "crontab", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	// A loopback Host without credentials: the driver opens 127.0.0.1.
	roSrv := httptest.NewServer(ro)
	defer roSrv.Close()
	wd.navigate(roSrv.URL + "/")
	wd.waitFor("the read-only page", 15*time.Second, func() bool {
		return wd.exists(`body[data-loaded="true"].read-only #tasks tbody tr[data-task]`) && wd.exists(`#jobs tbody tr[data-job]`)
	})
	if wd.exists(`button[data-action]`) || wd.exists(`input.pick`) || wd.exists(`[data-bulk]`) || !wd.exists("#read-only") {
		t.Error("the read-only page shows action buttons or selections, or no read-only badge")
	}
	if !wd.exists("#tasks-next") || wd.exists(`#error:not([hidden])`) {
		t.Errorf("the read-only page lacks its pager or shows an error: %s", wd.text("#error"))
	}
}

// saveShot takes a screenshot, checks it, and writes it to docs/name with
// -update-screenshot (else to a temporary directory).
func saveShot(t *testing.T, wd *webDriver, name string) {
	t.Helper()
	shot := wd.screenshot()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 700 {
		t.Errorf("screenshot is %v", b)
	}
	out := filepath.Join(t.TempDir(), name)
	if *updateScreenshot {
		out = filepath.Join("..", "docs", name)
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

// text returns the text of the element matching css, "" when there is
// none.
func (wd *webDriver) text(css string) string {
	// An element the page re-rendered between the find and the read is
	// stale: found again, up to 2 s (a refresh re-renders the tables every
	// few seconds, and a loaded machine made the read land in one).
	for range 20 {
		id := wd.find(css)
		if id == "" {
			return ""
		}
		var s string
		if err := wd.try("GET", wd.path("/element/"+id+"/text"), nil, &s); err == nil {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
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

// exec runs script in the page (WebDriver's execute/sync) and decodes
// what it returns into out.
func (wd *webDriver) exec(script string, out any) {
	wd.t.Helper()
	wd.call("POST", wd.path("/execute/sync"), map[string]any{"script": script, "args": []any{}}, out)
}

// typeText clears the input matching css and types text into it.
func (wd *webDriver) typeText(css, text string) {
	wd.t.Helper()
	id := wd.find(css)
	if id == "" {
		wd.t.Fatalf("no input %s", css)
	}
	wd.call("POST", wd.path("/element/"+id+"/clear"), map[string]any{}, nil)
	if text != "" {
		wd.call("POST", wd.path("/element/"+id+"/value"), map[string]any{"text": text}, nil)
	} else { // clearing fires no input event
		wd.exec(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event("input")); return null;`, css), nil)
	}
}

// rows returns the data-ATTR values of the rows of table css.
func (wd *webDriver) rows(css, attr string) []string {
	wd.t.Helper()
	var out []string
	wd.exec(fmt.Sprintf(`return [...document.querySelectorAll(%q)].map((e) => e.getAttribute(%q));`, css+" tbody tr["+attr+"]", attr), &out)
	return out
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
