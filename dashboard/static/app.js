// The crontab dashboard: every 2 seconds it fetches the counts and the
// page of tasks and of jobs on screen (never all of them: the API pages by
// cursor), and renders them; buttons POST to the API with the page's CSRF
// token, one item or a selection. No framework, no CDN.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const readOnly = document.querySelector('meta[name="read-only"]').content === "true";
const editable = document.querySelector('meta[name="editable"]').content === "true";
const pageSize = 20;
let offset = 0;          // Redis server time minus browser time, ms
let selected = null;     // the task whose history is shown
let lastTasks = [];      // the page of tasks on screen
// Each list's query and place: its filters, the cursor of the page shown
// and the cursors of the pages before it (for Prev), and the selection.
const taskView = { match: "", status: "", type: "", cursor: "", back: [], next: "", picked: new Set() };
const jobView = { state: "pending", type: "", cursor: "", back: [], next: "", picked: new Set() };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fmtDuration(ms) {
  const neg = ms < 0;
  ms = Math.abs(ms);
  let s;
  if (ms < 1000) s = `${Math.round(ms)}ms`;
  else if (ms < 60e3) s = `${(ms / 1000).toFixed(ms < 10e3 ? 1 : 0)}s`;
  else if (ms < 3600e3) s = `${Math.floor(ms / 60e3)}m ${Math.floor((ms % 60e3) / 1000)}s`;
  else if (ms < 86400e3) s = `${Math.floor(ms / 3600e3)}h ${Math.floor((ms % 3600e3) / 60e3)}m`;
  else s = `${Math.floor(ms / 86400e3)}d ${Math.floor((ms % 86400e3) / 3600e3)}h`;
  return neg ? "-" + s : s;
}

function serverNow() { return Date.now() + offset; }

function ago(iso) {
  if (!iso) return "";
  return fmtDuration(serverNow() - Date.parse(iso)) + " ago";
}

function countdown(iso) {
  if (!iso) return "—";
  const ms = Date.parse(iso) - serverNow();
  if (ms <= 0) return "due now";
  return "in " + fmtDuration(ms);
}

function badge(cls, text, title) {
  return el("span", { class: "badge " + cls, title }, text);
}

function sparkline(points) {
  const ns = "http://www.w3.org/2000/svg";
  const w = 120, h = 24, pad = 3;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  if (!points || points.length === 0) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", 0); t.setAttribute("y", 16); t.setAttribute("fill", "#6b7385"); t.setAttribute("font-size", "11");
    t.textContent = "no runs yet";
    svg.append(t);
    return svg;
  }
  const max = Math.max(1, ...points.map((p) => p.duration_ms));
  const step = points.length > 1 ? (w - 2 * pad) / (points.length - 1) : 0;
  const xy = points.map((p, i) => [pad + i * step, h - pad - (p.duration_ms / max) * (h - 2 * pad)]);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", xy.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "));
  svg.append(line);
  points.forEach((p, i) => {
    if (p.outcome !== "ok") {
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("class", "failed");
      c.setAttribute("cx", xy[i][0]); c.setAttribute("cy", xy[i][1]); c.setAttribute("r", 2.5);
      svg.append(c);
    }
  });
  const title = document.createElementNS(ns, "title");
  title.textContent = points.map((p) => `${p.duration_ms}ms ${p.outcome}`).join(", ");
  svg.append(title);
  return svg;
}


async function api(method, path, body) {
  const opts = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const reply = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(reply.error || `${r.status} ${r.statusText}`);
  return reply;
}

function showError(msg) {
  const box = document.getElementById("error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

let noticeTimer = null;
function showNotice(msg) {
  const box = document.getElementById("notice");
  box.textContent = msg || "";
  box.hidden = !msg;
  clearTimeout(noticeTimer);
  if (msg) noticeTimer = setTimeout(() => showNotice(""), 8000);
}

async function act(path, what) {
  try {
    const r = await api("POST", path);
    showError("");
    if (r.fire) showNotice(`${what}: fires at ${fmtTime(r.fire)}`);
  } catch (e) {
    showError(`${what}: ${e.message}`);
  }
  await refresh();
}

// bulk POSTs one action on the selection of a list, then reports how many
// failed and why.
async function bulk(kind, action, items, view) {
  if (items.length === 0) return;
  const body = kind === "tasks" ? { names: items } : { ids: items };
  try {
    const r = await api("POST", `/api/bulk/${kind}/${action}`, body);
    const failed = r.results.filter((x) => x.error);
    if (failed.length) showError(`${action}: ${failed.length} of ${items.length} failed: ` + failed.map((x) => `${x.name || x.id}: ${x.error}`).join("; "));
    else showError("");
    showNotice(`${action}: ${items.length - failed.length} of ${items.length} done`);
    view.picked.clear();
  } catch (e) {
    showError(`${action}: ${e.message}`);
  }
  await refresh();
}

function button(action, label, path, what) {
  if (readOnly) return null;
  return el("button", { type: "button", "data-action": action, onclick: () => act(path, what) }, label);
}

function pick(view, key) {
  if (readOnly) return null;
  const box = el("input", { type: "checkbox", class: "pick", "data-pick": key, checked: view.picked.has(key) });
  box.addEventListener("change", () => {
    if (box.checked) view.picked.add(key); else view.picked.delete(key);
    renderBulk();
  });
  return el("td", { class: "select" }, box);
}

function fill(tbody, rows, cols, empty) {
  tbody.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: cols }, empty))]));
}

function renderCounts(c) {
  const items = [["tasks", c.tasks], ["queued", c.queued], ["due", c.due], ["running", c.running],
    ["jobs pending", c.jobs_pending], ["jobs running", c.jobs_running], ["dead", c.jobs_dead], ["processes", c.processes]];
  document.getElementById("counts").replaceChildren(...items.map(([k, v]) => el("span", { "data-count": k.replace(" ", "_") }, k, el("b", {}, v))));
}

function renderTasks(tasks) {
  const cols = readOnly ? 10 : 11;
  const rows = tasks.map((t) => {
    const enc = encodeURIComponent(t.name);
    const actions = el("td", { class: "actions" });
    if (t.status === "active") actions.append(button("pause", "Pause", `/api/tasks/${enc}/pause`, `pause ${t.name}`) || "");
    else actions.append(button("resume", "Resume", `/api/tasks/${enc}/resume`, `resume ${t.name}`) || "");
    actions.append(button("trigger", "Run now", `/api/tasks/${enc}/trigger`, `run ${t.name} now`) || "");
    if (t.status !== "disabled") actions.append(button("disable", "Disable", `/api/tasks/${enc}/disable`, `disable ${t.name}`) || "");
    if (editable && t.source === "dynamic") actions.append(el("button", { type: "button", "data-action": "edit", onclick: () => openForm(t) }, "Edit"));
    const last = el("td", {});
    if (t.last_outcome) {
      last.append(badge("oc-" + t.last_outcome, t.last_outcome, t.last_error || undefined), " ",
        el("span", { class: "sub", "data-iso": t.last_run, "data-rel": "ago" }, ago(t.last_run)));
      if (t.last_error) last.append(el("div", { class: "err block", title: t.last_error }, t.last_error));
    } else {
      last.append(el("span", { class: "sub" }, "never"));
    }
    const status = el("td", { class: "status" }, badge("st-" + t.status, t.status));
    if (t.running > 0) status.append(" ", badge("running", "running", t.locked_by ? "lock held by " + t.locked_by : undefined));
    return el("tr", { "data-task": t.name, class: selected === t.name ? "selected" : null },
      pick(taskView, t.name),
      el("td", {}, el("span", { class: "task-name", onclick: () => selectTask(t.name), title: t.class || t.type }, t.name),
        t.source === "dynamic" ? el("div", { class: "sub" }, "run-time task · " + t.type) : null),
      status,
      el("td", {}, el("code", {}, t.expression), el("div", { class: "sub" }, t.interval || t.tz)),
      el("td", {}, el("span", { class: "countdown", "data-iso": t.next_run, "data-rel": "countdown" }, countdown(t.next_run)),
        el("div", { class: "sub" }, fmtTime(t.next_run))),
      last,
      el("td", {}, sparkline(t.recent)),
      el("td", { class: "num" }, t.runs),
      el("td", { class: "num" }, t.failures),
      el("td", { class: "num" }, t.skips),
      readOnly ? null : actions);
  });
  const filtered = taskView.match || taskView.status || taskView.type;
  fill(document.querySelector("#tasks tbody"), rows, cols, filtered ? "No task matches." : "No tasks: start a scheduler.");
}

function payload(p) {
  const s = p === undefined ? "" : JSON.stringify(p);
  return el("span", { class: "payload", title: s }, s);
}

function renderJobs(jobs) {
  const st = jobView.state;
  const cols = readOnly ? 8 : 9;
  fill(document.querySelector("#jobs tbody"), jobs.map((j) => {
    let when, extra;
    if (j.state === "running") {
      when = el("span", { class: "sub" }, "lease until " + fmtTime(j.lease_until));
      extra = j.owner || "";
    } else if (j.state === "dead") {
      when = el("span", { title: fmtTime(j.failed), "data-iso": j.failed, "data-rel": "ago" }, ago(j.failed));
      extra = el("span", { class: "err", title: j.error }, j.error);
    } else {
      when = el("span", { "data-iso": j.due, "data-rel": "countdown", class: "countdown", title: fmtTime(j.due) }, countdown(j.due));
      extra = j.waiting || "";
    }
    let action = null;
    if (j.state === "pending") action = button("cancel", "Cancel", `/api/jobs/${encodeURIComponent(j.id)}/cancel`, `cancel ${j.id}`);
    if (j.state === "dead") action = button("retry", "Retry", `/api/jobs/${encodeURIComponent(j.id)}/retry`, `retry ${j.id}`);
    return el("tr", { "data-job": j.id },
      st === "running" ? (readOnly ? null : el("td", { class: "select" })) : pick(jobView, j.id),
      el("td", {}, el("code", {}, j.id), j.unique ? el("div", { class: "sub unique", title: "unique identity" }, "unique " + j.unique) : null),
      el("td", {}, j.task),
      el("td", {}, badge(j.state === "running" ? "running" : j.state === "dead" ? "oc-failed" : "st-active", j.state)),
      el("td", {}, when),
      el("td", { class: j.state === "pending" ? "waiting" : "detail" }, extra),
      el("td", { class: "num" }, j.attempts),
      el("td", {}, payload(j.payload)),
      readOnly ? null : el("td", {}, action));
  }), cols, jobView.type ? `No ${st} job of type ${jobView.type}.` : `No ${st} jobs.`);
  document.getElementById("jobs-detail").textContent = { pending: "Waiting", running: "Process", dead: "Error" }[st];
  document.getElementById("jobs-when").textContent = { pending: "Due", running: "Lease", dead: "Failed" }[st];
}

function renderBulk() {
  if (readOnly) return;
  const nt = taskView.picked.size, nj = jobView.picked.size;
  document.getElementById("tasks-picked").textContent = nt ? `${nt} selected` : "";
  document.getElementById("jobs-picked").textContent = nj ? `${nj} selected` : "";
  for (const b of document.querySelectorAll("#tasks-bulk button")) b.disabled = nt === 0;
  for (const b of document.querySelectorAll("#jobs-bulk button")) {
    const fits = (b.dataset.bulk === "cancel" && jobView.state === "pending") || (b.dataset.bulk === "retry" && jobView.state === "dead");
    b.hidden = !fits;
    b.disabled = nj === 0;
  }
}

function renderPager(prefix, view) {
  document.getElementById(prefix + "-prev").disabled = view.back.length === 0;
  document.getElementById(prefix + "-next").disabled = !view.next;
  document.getElementById(prefix + "-page").textContent = `page ${view.back.length + 1}`;
}

function renderProcesses(procs) {
  fill(document.querySelector("#processes tbody"), (procs || []).map((p) => {
    const age = p.last_beat ? serverNow() - Date.parse(p.last_beat) : null;
    const types = p.types || [];
    return el("tr", { "data-process": p.id },
      el("td", {}, el("code", {}, p.id)),
      el("td", {}, p.host),
      el("td", { class: "num" }, p.pid),
      el("td", {}, p.version || ""),
      el("td", {}, fmtTime(p.started)),
      el("td", {}, el("span", { class: "beat", "data-iso": p.last_beat, "data-rel": "ago" }, age === null ? "" : ago(p.last_beat))),
      el("td", { class: "num" }, p.running),
      el("td", { class: "roles", title: types.join(", ") }, types.length ? `${types.length} types: ${types.slice(0, 4).join(", ")}${types.length > 4 ? ", …" : ""}` : `${p.tasks} types`),
      el("td", { class: "health" }, p.alive ? badge("alive", "alive") : badge("dead-proc", "silent"), p.master ? " " : null, p.master ? badge("master", "master") : null));
  }), 9, "No scheduler process is running.");
}

async function selectTask(name) {
  selected = name;
  document.getElementById("history-task").textContent = name;
  document.getElementById("history-section").hidden = false;
  await renderHistory();
  renderTasks(lastTasks);
}

async function renderHistory() {
  if (!selected) return;
  let runs;
  try {
    runs = await api("GET", `/api/tasks/${encodeURIComponent(selected)}/history?limit=50`);
  } catch (e) {
    showError(`history of ${selected}: ${e.message}`);
    return;
  }
  fill(document.querySelector("#history tbody"), runs.map((r) => el("tr", {},
    el("td", {}, fmtTime(r.fire)),
    el("td", {}, fmtTime(r.start)),
    el("td", { class: "num" }, fmtDuration(r.duration_ms)),
    el("td", {}, badge("oc-" + r.outcome, r.outcome), r.job_id ? el("span", { class: "sub" }, " job " + r.job_id) : null),
    el("td", { class: "num" }, r.attempt),
    el("td", {}, r.process || ""),
    el("td", {}, r.error ? el("span", { class: "err", title: r.error }, r.error) : ""))),
  7, "No runs recorded yet.");
}

function tick() {
  document.querySelectorAll("[data-rel]").forEach((e) => {
    const iso = e.getAttribute("data-iso");
    e.textContent = e.getAttribute("data-rel") === "ago" ? ago(iso) : countdown(iso);
  });
  document.getElementById("clock").textContent = fmtTime(new Date(serverNow()).toISOString());
}

// glob makes the search box's text a Redis MATCH pattern: text with no
// wildcard matches anywhere in the name.
function glob(text) {
  if (!text) return "";
  if (/[*?[]/.test(text)) return text;
  return "*" + text.replace(/\\/g, "\\\\") + "*";
}

function taskQuery() {
  const q = new URLSearchParams({ limit: pageSize });
  if (taskView.cursor) q.set("cursor", taskView.cursor);
  if (taskView.match) q.set("match", glob(taskView.match));
  if (taskView.status) q.set("status", taskView.status);
  if (taskView.type) q.set("type", taskView.type);
  return "/api/page/tasks?" + q;
}

function jobQuery() {
  const q = new URLSearchParams({ state: jobView.state, limit: pageSize });
  if (jobView.cursor) q.set("cursor", jobView.cursor);
  if (jobView.type) q.set("type", jobView.type);
  return "/api/page/jobs?" + q;
}

// chart draws one minute chart: for each minute, stacked bars (series of
// [field, class]), and a line of the field line; the scale's top is
// labelled with fmt.
function chart(id, minutes, bars, line, fmt) {
  const ns = "http://www.w3.org/2000/svg";
  const w = 600, h = 90, top = 12, bottom = 14, left = 2;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "chart-svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const total = (m) => bars.reduce((s, [f]) => s + m[f], 0);
  const max = Math.max(1, ...minutes.map((m) => Math.max(total(m), line ? m[line] : 0)));
  const bw = (w - left) / minutes.length;
  const y = (v) => h - bottom - (v / max) * (h - top - bottom);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  add("line", { x1: 0, x2: w, y1: h - bottom, y2: h - bottom });
  minutes.forEach((m, i) => {
    let base = 0;
    for (const [f, cls] of bars) {
      if (!m[f]) continue;
      const r = add("rect", { class: cls, x: (left + i * bw + 0.5).toFixed(1), width: Math.max(1, bw - 1).toFixed(1),
        y: y(base + m[f]).toFixed(1), height: (y(base) - y(base + m[f])).toFixed(1), "data-minute": i });
      const title = document.createElementNS(ns, "title");
      title.textContent = `${fmtTime(m.minute).slice(11, 16)}: ${bars.map(([bf]) => `${bf} ${m[bf]}`).join(", ")}`;
      r.append(title);
      base += m[f];
    }
  });
  if (line) {
    const pts = minutes.map((m, i) => `${(left + i * bw + bw / 2).toFixed(1)},${y(m[line]).toFixed(1)}`);
    add("polyline", { points: pts.join(" ") });
  }
  add("text", { class: "axis", x: 2, y: 10 }, fmt(max));
  add("text", { class: "axis", x: 2, y: h - 2 }, minutes.length ? fmtTime(minutes[0].minute).slice(11, 16) : "");
  add("text", { class: "axis", x: w - 2, y: h - 2, "text-anchor": "end" }, "now");
  document.getElementById(id).replaceChildren(svg);
}

function renderCharts(minutes) {
  const ms = minutes.map((m) => ({ ...m, ok: m.fires - m.failed, jobs_ok: m.jobs - m.job_failed }));
  chart("chart-fires", ms, [["ok", "ok"], ["failed", "fail"]], null, (v) => `${v} runs`);
  chart("chart-lag", ms, [["lag_max_ms", "max"]], "lag_avg_ms", (v) => fmtDuration(v));
  chart("chart-jobs", ms, [["jobs_ok", "ok"], ["job_failed", "fail"]], null, (v) => `${v} attempts`);
}

let refreshing = false, again = false;
async function refresh() {
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    const t0 = Date.now();
    const [counts, tasks, jobs, stats] = await Promise.all([api("GET", "/api/counts"), api("GET", taskQuery()), api("GET", jobQuery()), api("GET", "/api/stats")]);
    const rtt = Date.now() - t0;
    offset = Date.parse(counts.counts.now) - (t0 + rtt / 2);
    renderCounts(counts.counts);
    lastTasks = tasks.tasks || [];
    taskView.next = tasks.next_cursor;
    renderTasks(lastTasks);
    renderPager("tasks", taskView);
    jobView.next = jobs.next_cursor;
    renderJobs(jobs.jobs || []);
    renderPager("jobs", jobView);
    renderProcesses(counts.processes);
    renderCharts(stats.minutes || []);
    renderBulk();
    await renderHistory();
    document.body.setAttribute("data-loaded", "true");
    if (document.getElementById("error").textContent.startsWith("dashboard:")) showError("");
  } catch (e) {
    showError("dashboard: " + e.message);
  } finally {
    refreshing = false;
    tick();
    if (again) { again = false; refresh(); }
  }
}

// restart shows a list's first page again (its filters changed).
function restart(view) {
  view.cursor = "";
  view.back = [];
  view.picked.clear();
  refresh();
}

function wirePager(prefix, view) {
  document.getElementById(prefix + "-next").addEventListener("click", () => {
    if (!view.next) return;
    view.back.push(view.cursor);
    view.cursor = view.next;
    refresh();
  });
  document.getElementById(prefix + "-prev").addEventListener("click", () => {
    if (view.back.length === 0) return;
    view.cursor = view.back.pop();
    refresh();
  });
}

function debounce(fn, ms) {
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

// The run-time task form (with Config.Client): PUT /api/tasks/NAME, the
// Client's SetTask errors shown in the form.
function openForm(t) {
  const f = document.getElementById("task-form");
  f.reset();
  document.getElementById("task-form-error").hidden = true;
  document.getElementById("task-form-title").textContent = t ? `Edit ${t.name}` : "New run-time task";
  f.elements.name.readOnly = !!t;
  document.getElementById("task-remove").hidden = !t;
  if (t) {
    f.elements.name.value = t.name;
    f.elements.type.value = t.type;
    f.elements.expression.value = t.expression;
    f.elements.tz.value = t.tz || "";
    f.elements.status.value = t.status;
    f.elements.timeout.value = t.timeout_ms ? Math.round(t.timeout_ms / 1000) : "";
    f.elements.misfire.value = t.misfire || "";
    f.elements.concurrent.checked = t.concurrent;
    f.elements.params.value = t.params === undefined ? "" : JSON.stringify(t.params);
  }
  f.hidden = false;
  f.elements[t ? "expression" : "name"].focus();
}

function formError(msg) {
  const box = document.getElementById("task-form-error");
  box.textContent = msg;
  box.hidden = !msg;
}

async function saveForm(ev) {
  ev.preventDefault();
  const f = document.getElementById("task-form");
  const v = (n) => f.elements[n].value.trim();
  const body = { type: v("type"), expression: v("expression"), tz: v("tz"), status: v("status"), misfire: v("misfire"),
    concurrent: f.elements.concurrent.checked };
  if (v("timeout")) body.timeout_ms = Number(v("timeout")) * 1000;
  if (v("params")) {
    try { body.params = JSON.parse(v("params")); } catch (e) { formError(`params: not JSON: ${e.message}`); return; }
  }
  try {
    const t = await api("PUT", `/api/tasks/${encodeURIComponent(v("name"))}`, body);
    f.hidden = true;
    showNotice(`saved ${t.name}: next run ${fmtTime(t.next_run)}`);
    await refresh();
  } catch (e) {
    formError(e.message);
  }
}

async function removeTask() {
  const name = document.getElementById("task-form").elements.name.value;
  try {
    await api("DELETE", `/api/tasks/${encodeURIComponent(name)}`);
    document.getElementById("task-form").hidden = true;
    showNotice(`removed ${name}`);
    await refresh();
  } catch (e) {
    formError(e.message);
  }
}

if (editable) {
  document.getElementById("task-new").addEventListener("click", () => openForm(null));
  document.getElementById("task-form").addEventListener("submit", saveForm);
  document.getElementById("task-cancel").addEventListener("click", () => { document.getElementById("task-form").hidden = true; });
  document.getElementById("task-remove").addEventListener("click", removeTask);
}
document.body.classList.toggle("read-only", readOnly);
document.getElementById("history-close").addEventListener("click", () => {
  selected = null;
  document.getElementById("history-section").hidden = true;
  renderTasks(lastTasks);
});
const search = document.getElementById("task-search");
search.addEventListener("input", debounce(() => { taskView.match = search.value.trim(); restart(taskView); }, 250));
document.getElementById("task-status").addEventListener("change", (e) => { taskView.status = e.target.value; restart(taskView); });
const taskType = document.getElementById("task-type");
taskType.addEventListener("input", debounce(() => { taskView.type = taskType.value.trim(); restart(taskView); }, 250));
document.getElementById("job-state").addEventListener("change", (e) => { jobView.state = e.target.value; restart(jobView); });
const jobType = document.getElementById("job-type");
jobType.addEventListener("input", debounce(() => { jobView.type = jobType.value.trim(); restart(jobView); }, 250));
wirePager("tasks", taskView);
wirePager("jobs", jobView);
for (const b of document.querySelectorAll("#tasks-bulk button")) {
  b.addEventListener("click", () => bulk("tasks", b.dataset.bulk, [...taskView.picked], taskView));
}
for (const b of document.querySelectorAll("#jobs-bulk button")) {
  b.addEventListener("click", () => bulk("jobs", b.dataset.bulk, [...jobView.picked], jobView));
}
for (const [all, view] of [["tasks-all", taskView], ["jobs-all", jobView]]) {
  const box = document.getElementById(all);
  if (!box) continue;
  box.addEventListener("change", () => {
    const table = all === "tasks-all" ? "#tasks" : "#jobs";
    for (const b of document.querySelectorAll(`${table} tbody input.pick`)) {
      b.checked = box.checked;
      if (box.checked) view.picked.add(b.dataset.pick); else view.picked.delete(b.dataset.pick);
    }
    renderBulk();
  });
}
refresh();
setInterval(refresh, 2000);
setInterval(tick, 250);
