// Package dashboard is gocrontab's web dashboard: one page, with its
// script and style embedded in the binary (no CDN), and the JSON API it
// uses. `crontab serve` runs it; a program can also mount [New]'s handler
// itself.
//
// The page shows the tasks (status, the next run counting down, the last
// outcome, a sparkline of recent run durations), pending, running and dead
// jobs (with a job's unique identity, and why a due pending job waits:
// Job.Waiting), the scheduler processes, and the history of a task chosen by a
// click; its buttons pause, resume, trigger, cancel and retry, one or a
// selection at once. It searches and filters tasks (name, status, type)
// and jobs (state, type), a page at a time, charts the last hour per
// minute (Inspector.MinuteStats), and creates, edits and removes run-time
// tasks in a form (unless read-only). It reads
// Redis only through the crontab.Inspector it is given: it needs no task code.
//
// # API
//
//	GET  /api/overview                 counts, a page of tasks (with sparkline points), the first 50 jobs of each state, processes (?cursor=C&limit=N&match=GLOB&status=S&type=T)
//	GET  /api/tasks                    a page of tasks, a JSON array (?cursor=C&limit=N&match=GLOB&status=S&type=T; limit default 1000)
//	GET  /api/tasks/{name}             one task
//	GET  /api/tasks/{name}/history     its runs, newest first (?limit=N, default 50)
//	POST /api/tasks/{name}/{action}    action: pause, resume, disable, enable or trigger
//	GET  /api/jobs                     jobs (?state=pending|running|dead&task=NAME&limit=N)
//	GET  /api/jobs/{id}                one job
//	POST /api/jobs/{id}/cancel         cancel a pending job
//	POST /api/jobs/{id}/retry          move a dead job back to the queue
//	GET  /api/processes                scheduler processes
//	GET  /api/counts                   counts and processes (O(1) in tasks and jobs)
//	GET  /api/stats                    the last hour per minute: fires, failures, lag, job attempts
//	GET  /api/page/tasks               one page of tasks with sparklines (?cursor=C&limit=N&match=GLOB&status=S&type=T)
//	GET  /api/page/jobs                one page of one state's jobs (?state=S&cursor=C&limit=N&type=T)
//	POST /api/bulk/tasks/{action}      body {"names": [...]}: pause, resume, disable, enable or trigger each
//	POST /api/bulk/jobs/{action}       body {"ids": [...]}: cancel or retry each
//	PUT  /api/tasks/{name}             create or replace a run-time task (body TaskForm)
//	DELETE /api/tasks/{name}           remove a run-time task
//	GET  /metrics                      Prometheus metrics, when Config.Metrics is set
//
// The page polls /api/counts and the pages it shows (Inspector.TaskPage
// and JobPage), so its refresh reads only what is on screen, whatever the
// number of tasks and jobs. No endpoint reads every task: /api/tasks,
// /api/overview and /api/page/tasks each read one page (Inspector.TaskPage),
// and the jobs of /api/overview are one JobPage of each state.
//
// A page's query: cursor is the previous page's next cursor ("" or absent
// starts); limit is 1 to 1000 (crontab.MaxPageLimit), by default 50
// (crontab.DefaultPageLimit), or 1000 for /api/tasks, so that a namespace
// of up to 1000 tasks comes whole in one reply; a page may hold a few more
// than limit tasks (Inspector.TaskPage). A limit out of range, a status
// other than active, paused or disabled, or a cursor that is not a next
// cursor is a 400 that names it; a limit is never clamped. match is a
// Redis glob on the name, type a task type.
//
// A page's reply is {"tasks" or "jobs": [...], "next_cursor": "..."}
// (next_cursor "" on the last page). /api/tasks answers the array alone,
// and the next cursor in the X-Next-Cursor header and a Link header
// (<?cursor=C&...>; rel="next"), both absent on the last page;
// /api/overview names it "tasks_next_cursor" (continue with /api/page/tasks
// or /api/tasks). A bulk reply lists each item's
// outcome, {"results": [{"name" or "id": ..., "error": ...}]}, and is
// 200 even when some failed; a bulk request holds at most 1000 items.
//
// Errors are JSON {"error": "..."}: 400 for a bad request (and a run-time
// task that Client.SetTask refuses, with its reason), 401 without
// credentials, 403 for a failed CSRF check or any POST to a read-only
// dashboard (Config.ReadOnly), 404 for a missing task or job,
// 409 for a task that is paused, disabled or running (trigger), 501 for
// the run-time task form of a handler without Config.Client.
//
// # Security
//
// With neither Config.Token nor Config.BasicUser, the handler requires no
// credentials, and serves only requests whose Host is a loopback name
// (localhost, 127.0.0.1, [::1]), which defeats DNS rebinding; `crontab
// serve` allows that only on a loopback address. With a token, a request is
// let in by "Authorization: Bearer TOKEN", by basic auth whose password is
// the token (any user name), or by the cookie that opening /?token=TOKEN
// sets (then the token is dropped from the address). With BasicUser and
// BasicPassword, basic auth with them lets a request in. A browser without
// credentials is asked for basic auth.
//
// Every POST must carry the header X-CSRF-Token with the token the page
// embeds (GET /api/session returns it too), unless it authenticated with
// an Authorization: Bearer header, which a browser never sends by itself;
// and a POST whose Origin header names another host is refused.
package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

//go:embed static
var static embed.FS

// Config configures the dashboard.
type Config struct {
	// Inspector reads and changes the namespace. Required
	// (crontab.NewInspector(rdb, crontab.WithNamespace(ns))).
	Inspector *crontab.Inspector
	// Namespace is shown in the page's title. Empty shows nothing.
	Namespace string
	// Token, when set, is required (see the package documentation).
	Token string
	// BasicUser and BasicPassword, when BasicUser is set, are accepted as
	// basic auth.
	BasicUser, BasicPassword string
	// Metrics, when set, is served at /metrics (behind the same auth).
	Metrics http.Handler
	// Logger logs failed requests. Nil means slog.Default().
	Logger *slog.Logger
	// Sparkline is how many recent runs each task's sparkline shows. Zero
	// means 20.
	Sparkline int
	// Client, when set, is what the form writes run-time tasks with
	// (Client.SetTask and RemoveTask, which check a task against the
	// Client's registry: give it the registry of the schedulers). Nil
	// writes them with Inspector.SetTask and RemoveTask, which need no
	// task code: a type is known when a live process runs it, and params
	// are checked to be JSON, not decoded into the type (crontab serve).
	Client *crontab.Client
	// ReadOnly refuses every request that would change something (each
	// POST answers 403) and hides the page's action buttons.
	ReadOnly bool
}

// Handler is the dashboard's http.Handler.
type Handler struct {
	cfg  Config
	csrf string
	mux  *http.ServeMux
	page *template.Template
	log  *slog.Logger
}

// New returns the dashboard handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Inspector == nil {
		return nil, errors.New("dashboard: nil Inspector")
	}
	if cfg.BasicUser != "" && cfg.BasicPassword == "" {
		return nil, errors.New("dashboard: basic auth user without a password")
	}
	if cfg.Sparkline <= 0 {
		cfg.Sparkline = 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	page, err := template.ParseFS(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	h := &Handler{cfg: cfg, csrf: hex.EncodeToString(b[:]), mux: http.NewServeMux(), page: page, log: cfg.Logger}
	h.routes()
	return h, nil
}

// AuthRequired reports whether the handler asks for credentials.
func (h *Handler) AuthRequired() bool { return h.cfg.Token != "" || h.cfg.BasicUser != "" }

func (h *Handler) routes() {
	assets, _ := fs.Sub(static, "static")
	m := h.mux
	m.HandleFunc("GET /{$}", h.index)
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(assets)))
	m.HandleFunc("GET /api/session", h.session)
	m.HandleFunc("GET /api/overview", h.overview)
	m.HandleFunc("GET /api/tasks", h.tasks)
	m.HandleFunc("GET /api/tasks/{name}", h.task)
	m.HandleFunc("GET /api/tasks/{name}/history", h.history)
	m.HandleFunc("POST /api/tasks/{name}/{action}", h.taskAction)
	m.HandleFunc("GET /api/jobs", h.jobs)
	m.HandleFunc("GET /api/jobs/{id}", h.job)
	m.HandleFunc("POST /api/jobs/{id}/{action}", h.jobAction)
	m.HandleFunc("GET /api/processes", h.processes)
	m.HandleFunc("GET /api/counts", h.counts)
	m.HandleFunc("GET /api/stats", h.stats)
	m.HandleFunc("PUT /api/tasks/{name}", h.putTask)
	m.HandleFunc("DELETE /api/tasks/{name}", h.deleteTask)
	m.HandleFunc("GET /api/page/tasks", h.taskPage)
	m.HandleFunc("GET /api/page/jobs", h.jobPage)
	m.HandleFunc("POST /api/bulk/tasks/{action}", h.bulkTasks)
	m.HandleFunc("POST /api/bulk/jobs/{action}", h.bulkJobs)
	if h.cfg.Metrics != nil {
		m.Handle("GET /metrics", h.cfg.Metrics)
	}
}

// ServeHTTP checks the request's host, credentials and CSRF token, then
// serves it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !h.AuthRequired() && !loopbackHost(r.Host) {
		writeError(w, http.StatusForbidden, "this dashboard has no credentials and serves loopback names only (localhost, 127.0.0.1, [::1]); start it with -token to serve others")
		return
	}
	bearer, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if h.cfg.ReadOnly {
			writeError(w, http.StatusForbidden, "this dashboard is read-only (crontab serve -read-only): it changes nothing")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameHost(origin, r.Host) {
			writeError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if !bearer && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")), []byte(h.csrf)) != 1 {
			writeError(w, http.StatusForbidden, "missing or wrong X-CSRF-Token header")
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

const cookieName = "crontab_token"

// authenticate lets r in or answers it. It reports whether r carried a
// bearer token (which needs no CSRF check).
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (bearer, ok bool) {
	if !h.AuthRequired() {
		return false, true
	}
	eq := func(a, b string) bool { return b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	tok := h.cfg.Token
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		if eq(strings.TrimPrefix(auth, "Bearer "), tok) {
			return true, true
		}
	} else if user, pass, isBasic := r.BasicAuth(); isBasic {
		if eq(pass, tok) || (h.cfg.BasicUser != "" && eq(user, h.cfg.BasicUser) && eq(pass, h.cfg.BasicPassword)) {
			return false, true
		}
	} else if c, err := r.Cookie(cookieName); err == nil && eq(c.Value, tok) {
		return false, true
	} else if q := r.URL.Query().Get("token"); r.Method == http.MethodGet && r.URL.Path == "/" && eq(q, tok) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return false, false
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="crontab", charset="UTF-8"`)
	writeError(w, http.StatusUnauthorized, "credentials required")
	return false, false
}

// loopbackHost reports whether the Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	err := h.page.Execute(&buf, map[string]any{"CSRF": h.csrf, "Namespace": h.cfg.Namespace, "ReadOnly": h.cfg.ReadOnly,
		"Editable": !h.cfg.ReadOnly})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	w.Write(buf.Bytes())
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{"csrf_token": h.csrf, "namespace": h.cfg.Namespace})
}

// Overview is the reply of GET /api/overview: the counts, the first page
// of tasks (the query of /api/page/tasks; TasksNextCursor continues it
// there, "" when it was the last), the first overviewJobs pending and
// running jobs (Jobs) and dead jobs (Dead), and the processes.
type Overview struct {
	Counts          Counts    `json:"counts"`
	Tasks           []Task    `json:"tasks"`
	TasksNextCursor string    `json:"tasks_next_cursor"`
	Jobs            []Job     `json:"jobs"`
	Dead            []Job     `json:"dead"`
	Processes       []Process `json:"processes"`
}

// overviewJobs caps the jobs the overview lists per state (one JobPage
// each).
const overviewJobs = 50

// overview reads a bounded overview: a page of tasks, a page of each
// state's jobs, the counts and the processes; nothing in it grows with
// the number of tasks or jobs.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	q, ok := taskQueryParam(w, r, crontab.DefaultPageLimit)
	if !ok {
		return
	}
	ctx := r.Context()
	c := h.cfg.Inspector
	var out Overview
	counts, err := c.Overview(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out.Counts = CountsView(counts)
	page, err := c.TaskPage(ctx, q)
	if err != nil {
		badCursor(w, r, h, err)
		return
	}
	out.Tasks, out.TasksNextCursor = h.withSparklines(ctx, page.Tasks), page.NextCursor
	for _, st := range []crontab.JobState{crontab.JobPending, crontab.JobRunning, crontab.JobDead} {
		jobs, err := c.JobPage(ctx, crontab.JobQuery{State: st, Limit: overviewJobs})
		if err == nil && st == crontab.JobPending {
			err = c.ExplainWaiting(ctx, jobs.Jobs)
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		for _, j := range jobs.Jobs {
			if st == crontab.JobDead {
				out.Dead = append(out.Dead, JobView(j))
			} else {
				out.Jobs = append(out.Jobs, JobView(j))
			}
		}
	}
	procs, err := c.Processes(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, p := range procs {
		out.Processes = append(out.Processes, ProcessView(p))
	}
	writeJSON(w, out)
}

// recent returns the sparkline points of a task: its latest completed
// runs, oldest first.
func (h *Handler) recent(ctx context.Context, task string) []Point {
	recs, err := h.cfg.Inspector.History(ctx, task, 3*h.cfg.Sparkline)
	if err != nil {
		return nil
	}
	var pts []Point
	for _, r := range recs {
		if r.Outcome == crontab.OutcomeSkipped {
			continue
		}
		pts = append(pts, Point{DurationMS: r.End.Sub(r.Start).Milliseconds(), Outcome: string(r.Outcome)})
		if len(pts) == h.cfg.Sparkline {
			break
		}
	}
	for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
		pts[i], pts[j] = pts[j], pts[i]
	}
	return pts
}

// tasksLimit is the default limit of GET /api/tasks: a namespace of up to
// that many tasks comes whole in one reply.
const tasksLimit = crontab.MaxPageLimit

// tasks answers a page of tasks (the query of /api/page/tasks, without
// sparklines) as a JSON array; the next page's cursor is in the
// X-Next-Cursor header and a Link rel="next" (both absent on the last
// page).
func (h *Handler) tasks(w http.ResponseWriter, r *http.Request) {
	q, ok := taskQueryParam(w, r, tasksLimit)
	if !ok {
		return
	}
	page, err := h.cfg.Inspector.TaskPage(r.Context(), q)
	if err != nil {
		badCursor(w, r, h, err)
		return
	}
	out := make([]Task, len(page.Tasks))
	for i, t := range page.Tasks {
		out[i] = TaskView(t)
	}
	if page.NextCursor != "" {
		next := r.URL.Query()
		next.Set("cursor", page.NextCursor)
		w.Header().Set("X-Next-Cursor", page.NextCursor)
		w.Header().Set("Link", "<?"+next.Encode()+`>; rel="next"`)
	}
	writeJSON(w, out)
}

func (h *Handler) task(w http.ResponseWriter, r *http.Request) {
	t, err := h.cfg.Inspector.Task(r.Context(), r.PathValue("name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, TaskView(t))
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 50)
	if !ok {
		return
	}
	recs, err := h.cfg.Inspector.History(r.Context(), r.PathValue("name"), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]Run, len(recs))
	for i, rec := range recs {
		out[i] = RunView(rec)
	}
	writeJSON(w, out)
}

func (h *Handler) taskAction(w http.ResponseWriter, r *http.Request) {
	ctx, c, name := r.Context(), h.cfg.Inspector, r.PathValue("name")
	var err error
	reply := map[string]any{"task": name, "action": r.PathValue("action")}
	switch r.PathValue("action") {
	case "pause":
		err = c.Pause(ctx, name)
	case "resume":
		err = c.Resume(ctx, name)
	case "disable":
		err = c.Disable(ctx, name)
	case "enable":
		err = c.Enable(ctx, name)
	case "trigger":
		var at time.Time
		at, err = c.Trigger(ctx, name)
		reply["fire"] = at
	default:
		writeError(w, http.StatusNotFound, "unknown action "+strconv.Quote(r.PathValue("action"))+": want pause, resume, disable, enable or trigger")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, reply)
}

func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 100)
	if !ok {
		return
	}
	q := r.URL.Query()
	st := crontab.JobState(q.Get("state"))
	switch st {
	case "", crontab.JobPending, crontab.JobRunning, crontab.JobDead:
	default:
		writeError(w, http.StatusBadRequest, "state "+strconv.Quote(string(st))+": want pending, running or dead")
		return
	}
	jobs, err := h.cfg.Inspector.Jobs(r.Context(), crontab.JobFilter{State: st, Task: q.Get("task"), Limit: limit})
	if err == nil {
		err = h.cfg.Inspector.ExplainWaiting(r.Context(), jobs)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		out[i] = JobView(j)
	}
	writeJSON(w, out)
}

func (h *Handler) job(w http.ResponseWriter, r *http.Request) {
	j, err := h.cfg.Inspector.Job(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, JobView(j))
}

func (h *Handler) jobAction(w http.ResponseWriter, r *http.Request) {
	ctx, c, id := r.Context(), h.cfg.Inspector, r.PathValue("id")
	var err error
	switch r.PathValue("action") {
	case "cancel":
		err = c.Cancel(ctx, id)
	case "retry":
		err = c.RetryDead(ctx, id)
	default:
		writeError(w, http.StatusNotFound, "unknown action "+strconv.Quote(r.PathValue("action"))+": want cancel or retry")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"job": id, "action": r.PathValue("action")})
}

func (h *Handler) processes(w http.ResponseWriter, r *http.Request) {
	procs, err := h.cfg.Inspector.Processes(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]Process, len(procs))
	for i, p := range procs {
		out[i] = ProcessView(p)
	}
	writeJSON(w, out)
}

func limitParam(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, "limit "+strconv.Quote(s)+": want a number >= 0 (0: all)")
		return 0, false
	}
	return n, true
}

// fail answers with the status that err's kind deserves.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, crontab.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, crontab.ErrRunning), errors.Is(err, crontab.ErrNotActive):
		status = http.StatusConflict
	case r.Context().Err() != nil:
		return
	default:
		h.log.Warn("dashboard request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, status, err.Error())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
