package dashboard

// The page's reads at scale (one page of tasks or jobs, the counts) and the
// bulk actions on a selection.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// TaskPage is the reply of GET /api/page/tasks.
type TaskPage struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"next_cursor"`
}

// JobPage is the reply of GET /api/page/jobs.
type JobPage struct {
	Jobs       []Job  `json:"jobs"`
	NextCursor string `json:"next_cursor"`
}

// CountsReply is the reply of GET /api/counts: what the page's header and
// process view show, without a task or job list.
type CountsReply struct {
	Counts    Counts    `json:"counts"`
	Processes []Process `json:"processes"`
}

// maxBulk caps the items of one bulk request.
const maxBulk = 1000

// pageLimitParam reads ?limit= for a page: 1 to crontab.MaxPageLimit, or
// def when absent. Any other value answers 400 naming the parameter: a
// limit is never clamped.
func pageLimitParam(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > crontab.MaxPageLimit {
		writeError(w, http.StatusBadRequest, "limit "+strconv.Quote(s)+": want 1 to "+strconv.Itoa(crontab.MaxPageLimit))
		return 0, false
	}
	return n, true
}

// taskQueryParam reads a page of tasks' query (?cursor=C&limit=N&match=GLOB
// &status=S&type=T), with def the limit when absent, or answers 400.
func taskQueryParam(w http.ResponseWriter, r *http.Request, def int) (crontab.TaskQuery, bool) {
	limit, ok := pageLimitParam(w, r, def)
	if !ok {
		return crontab.TaskQuery{}, false
	}
	q := r.URL.Query()
	st := crontab.Status(q.Get("status"))
	if st != "" && !st.Valid() {
		writeError(w, http.StatusBadRequest, "status "+strconv.Quote(string(st))+": want active, paused or disabled")
		return crontab.TaskQuery{}, false
	}
	return crontab.TaskQuery{Cursor: q.Get("cursor"), Limit: limit, Match: q.Get("match"), Status: st, Type: q.Get("type")}, true
}

func (h *Handler) counts(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ov, err := h.cfg.Inspector.Overview(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	procs, err := h.cfg.Inspector.Processes(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := CountsReply{Counts: CountsView(ov), Processes: make([]Process, len(procs))}
	for i, p := range procs {
		out.Processes[i] = ProcessView(p)
	}
	writeJSON(w, out)
}

func (h *Handler) taskPage(w http.ResponseWriter, r *http.Request) {
	q, ok := taskQueryParam(w, r, crontab.DefaultPageLimit)
	if !ok {
		return
	}
	ctx := r.Context()
	page, err := h.cfg.Inspector.TaskPage(ctx, q)
	if err != nil {
		badCursor(w, r, h, err)
		return
	}
	writeJSON(w, TaskPage{Tasks: h.withSparklines(ctx, page.Tasks), NextCursor: page.NextCursor})
}

// withSparklines converts tasks for the API with their sparkline points
// (one history read per task, 8 at a time).
func (h *Handler) withSparklines(ctx context.Context, tasks []crontab.TaskInfo) []Task {
	out := make([]Task, len(tasks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, t := range tasks {
		out[i] = TaskView(t)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].Recent = h.recent(ctx, t.Name)
		})
	}
	wg.Wait()
	return out
}

// badCursor answers a page's error: 400 when the cursor is what the
// inspector refused (crontab.ErrBadCursor), else as fail does.
func badCursor(w http.ResponseWriter, r *http.Request, h *Handler, err error) {
	if errors.Is(err, crontab.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.fail(w, r, err)
}

func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request) {
	limit, ok := pageLimitParam(w, r, crontab.DefaultPageLimit)
	if !ok {
		return
	}
	q := r.URL.Query()
	st := crontab.JobState(q.Get("state"))
	switch st {
	case crontab.JobPending, crontab.JobRunning, crontab.JobDead:
	default:
		writeError(w, http.StatusBadRequest, "state "+strconv.Quote(string(st))+": want pending, running or dead")
		return
	}
	ctx := r.Context()
	page, err := h.cfg.Inspector.JobPage(ctx, crontab.JobQuery{State: st, Cursor: q.Get("cursor"), Limit: limit, Type: q.Get("type")})
	if err == nil && st == crontab.JobPending {
		err = h.cfg.Inspector.ExplainWaiting(ctx, page.Jobs)
	}
	if err != nil {
		badCursor(w, r, h, err)
		return
	}
	out := JobPage{Jobs: make([]Job, len(page.Jobs)), NextCursor: page.NextCursor}
	for i, j := range page.Jobs {
		out.Jobs[i] = JobView(j)
	}
	writeJSON(w, out)
}

// BulkResult is one item's outcome in a bulk reply: Error is "" when the
// action was done.
type BulkResult struct {
	Name  string `json:"name,omitempty"`
	ID    string `json:"id,omitempty"`
	Error string `json:"error,omitempty"`
}

// BulkReply is the reply of a bulk action.
type BulkReply struct {
	Action  string       `json:"action"`
	Results []BulkResult `json:"results"`
}

// readBulk decodes a bulk request's body: {"names": [...]} or {"ids":
// [...]}, 1 to maxBulk items.
func readBulk(w http.ResponseWriter, r *http.Request, field string) ([]string, bool) {
	var body map[string][]string
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, `body: want {"`+field+`": [...]}: `+err.Error())
		return nil, false
	}
	items := body[field]
	if len(items) == 0 || len(items) > maxBulk {
		writeError(w, http.StatusBadRequest, field+": "+strconv.Itoa(len(items))+" items: want 1 to "+strconv.Itoa(maxBulk))
		return nil, false
	}
	return items, true
}

func (h *Handler) bulkTasks(w http.ResponseWriter, r *http.Request) {
	c, action := h.cfg.Inspector, r.PathValue("action")
	var do func(name string) error
	switch action {
	case "pause", "resume", "disable", "enable":
		st := map[string]crontab.Status{"pause": crontab.StatusPaused, "resume": crontab.StatusActive,
			"disable": crontab.StatusDisabled, "enable": crontab.StatusActive}[action]
		do = func(name string) error { return c.SetStatus(r.Context(), name, st) }
	case "trigger":
		do = func(name string) error { _, err := c.Trigger(r.Context(), name); return err }
	default:
		writeError(w, http.StatusNotFound, "unknown action "+strconv.Quote(action)+": want pause, resume, disable, enable or trigger")
		return
	}
	names, ok := readBulk(w, r, "names")
	if !ok {
		return
	}
	out := BulkReply{Action: action, Results: make([]BulkResult, len(names))}
	for i, n := range names {
		out.Results[i].Name = n
		if err := do(n); err != nil {
			if r.Context().Err() != nil {
				return
			}
			out.Results[i].Error = err.Error()
		}
	}
	writeJSON(w, out)
}

func (h *Handler) bulkJobs(w http.ResponseWriter, r *http.Request) {
	c, action := h.cfg.Inspector, r.PathValue("action")
	var do func(id string) error
	switch action {
	case "cancel":
		do = func(id string) error { return c.Cancel(r.Context(), id) }
	case "retry":
		do = func(id string) error { return c.RetryDead(r.Context(), id) }
	default:
		writeError(w, http.StatusNotFound, "unknown action "+strconv.Quote(action)+": want cancel or retry")
		return
	}
	ids, ok := readBulk(w, r, "ids")
	if !ok {
		return
	}
	out := BulkReply{Action: action, Results: make([]BulkResult, len(ids))}
	for i, id := range ids {
		out.Results[i].ID = id
		if err := do(id); err != nil {
			if r.Context().Err() != nil {
				return
			}
			out.Results[i].Error = err.Error()
		}
	}
	writeJSON(w, out)
}

// Minute is one minute of the charts (GET /api/stats).
type Minute struct {
	Minute    time.Time `json:"minute"`
	Fires     int64     `json:"fires"`
	Failed    int64     `json:"failed"`
	LagAvgMS  int64     `json:"lag_avg_ms"`
	LagMaxMS  int64     `json:"lag_max_ms"`
	Jobs      int64     `json:"jobs"`
	JobFailed int64     `json:"job_failed"`
}

// StatsReply is the reply of GET /api/stats: the last 60 minutes, oldest
// first, the current one last.
type StatsReply struct {
	Minutes []Minute `json:"minutes"`
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	mins, err := h.cfg.Inspector.MinuteStats(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := StatsReply{Minutes: make([]Minute, len(mins))}
	for i, m := range mins {
		out.Minutes[i] = Minute{Minute: m.Minute, Fires: m.Fires, Failed: m.Failed, LagAvgMS: m.LagAvg.Milliseconds(),
			LagMaxMS: m.LagMax.Milliseconds(), Jobs: m.JobRuns, JobFailed: m.JobFailed}
	}
	writeJSON(w, out)
}

// TaskForm is the body of PUT /api/tasks/{name}: a run-time task to create
// or replace, as crontab.TaskSpec has it (the name is the path's).
type TaskForm struct {
	Type       string          `json:"type"`
	Params     json.RawMessage `json:"params,omitempty"`
	Expression string          `json:"expression"`
	TZ         string          `json:"tz,omitempty"`
	Status     string          `json:"status,omitempty"`
	TimeoutMS  int64           `json:"timeout_ms,omitempty"`
	Concurrent bool            `json:"concurrent,omitempty"`
	Misfire    string          `json:"misfire,omitempty"`
	MaxRunning int             `json:"max_running,omitempty"`
}

// putTask creates or replaces a run-time task with Client.SetTask (or,
// without Config.Client, Inspector.SetTask, which takes the types the live
// processes run), whose validation errors answer 400.
func (h *Handler) putTask(w http.ResponseWriter, r *http.Request) {
	var f TaskForm
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		writeError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	if f.TimeoutMS < 0 {
		writeError(w, http.StatusBadRequest, "timeout_ms "+strconv.FormatInt(f.TimeoutMS, 10)+": want 0 (the type's) or more")
		return
	}
	spec := crontab.TaskSpec{Key: r.PathValue("name"), Type: f.Type, Expression: f.Expression, TZ: f.TZ,
		Status: crontab.Status(f.Status), Timeout: time.Duration(f.TimeoutMS) * time.Millisecond, Concurrent: f.Concurrent,
		Misfire: crontab.Misfire(f.Misfire), MaxRunning: f.MaxRunning}
	if len(f.Params) > 0 && string(f.Params) != "null" {
		spec.Params = f.Params
	}
	set := h.cfg.Inspector.SetTask
	if h.cfg.Client != nil {
		set = h.cfg.Client.SetTask
	}
	if err := set(r.Context(), spec); err != nil {
		if r.Context().Err() != nil {
			return
		}
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	t, err := h.cfg.Inspector.Task(r.Context(), spec.Key)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, TaskView(t))
}

// deleteTask removes a run-time task (Client.RemoveTask, or
// Inspector.RemoveTask without Config.Client).
func (h *Handler) deleteTask(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	remove := h.cfg.Inspector.RemoveTask
	if h.cfg.Client != nil {
		remove = h.cfg.Client.RemoveTask
	}
	if err := remove(r.Context(), name); err != nil {
		if errors.Is(err, crontab.ErrNotFound) {
			h.fail(w, r, err)
			return
		}
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, map[string]string{"task": name, "action": "remove"})
}
