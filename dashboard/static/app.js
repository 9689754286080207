// The crontab dashboard: polls /api/overview and renders it; buttons POST
// to the API with the page's CSRF token. No framework, no CDN.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
let offset = 0;          // Redis server time minus browser time, ms
let data = null;         // the last overview
let selected = null;     // the task whose history is shown

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

async function api(method, path) {
  const opts = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = csrf;
  const r = await fetch(path, opts);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}

function showError(msg) {
  const box = document.getElementById("error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

async function act(path, what) {
  try {
    await api("POST", path);
    showError("");
  } catch (e) {
    showError(`${what}: ${e.message}`);
  }
  await refresh();
}

function button(action, label, path, what) {
  return el("button", { type: "button", "data-action": action, onclick: () => act(path, what) }, label);
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
  const rows = tasks.map((t) => {
    const enc = encodeURIComponent(t.name);
    const actions = el("td", { class: "actions" });
    if (t.status === "active") actions.append(button("pause", "Pause", `/api/tasks/${enc}/pause`, `pause ${t.name}`));
    else actions.append(button("resume", "Resume", `/api/tasks/${enc}/resume`, `resume ${t.name}`));
    actions.append(button("trigger", "Run now", `/api/tasks/${enc}/trigger`, `trigger ${t.name}`));
    if (t.status !== "disabled") actions.append(button("disable", "Disable", `/api/tasks/${enc}/disable`, `disable ${t.name}`));
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
      actions);
  });
  fill(document.querySelector("#tasks tbody"), rows, 10, "No tasks: start a scheduler.");
}

function payload(p) {
  const s = p === undefined ? "" : JSON.stringify(p);
  return el("span", { class: "payload", title: s }, s);
}

function renderJobs(jobs, dead) {
  fill(document.querySelector("#jobs tbody"), (jobs || []).map((j) => el("tr", { "data-job": j.id },
    el("td", {}, el("code", {}, j.id), j.unique ? el("div", { class: "sub unique", title: "unique identity" }, "unique " + j.unique) : null),
    el("td", {}, j.task),
    el("td", {}, badge(j.state === "running" ? "running" : "st-active", j.state)),
    el("td", {}, j.state === "running"
      ? el("span", { class: "sub" }, "lease until " + fmtTime(j.lease_until))
      : el("span", { "data-iso": j.due, "data-rel": "countdown", class: "countdown", title: fmtTime(j.due) }, countdown(j.due))),
    el("td", { class: "waiting" }, j.waiting || ""),
    el("td", { class: "num" }, j.attempts),
    el("td", {}, j.owner || ""),
    el("td", {}, payload(j.payload)),
    el("td", {}, j.state === "pending" ? button("cancel", "Cancel", `/api/jobs/${encodeURIComponent(j.id)}/cancel`, `cancel ${j.id}`) : null))),
  9, "No pending or running jobs.");
  fill(document.querySelector("#dead tbody"), (dead || []).map((j) => el("tr", { "data-job": j.id },
    el("td", {}, el("code", {}, j.id)),
    el("td", {}, j.task),
    el("td", {}, fmtTime(j.failed)),
    el("td", { class: "num" }, j.attempts),
    el("td", {}, el("span", { class: "err", title: j.error }, j.error)),
    el("td", {}, payload(j.payload)),
    el("td", {}, button("retry", "Retry", `/api/jobs/${encodeURIComponent(j.id)}/retry`, `retry ${j.id}`)))),
  7, "No dead jobs.");
}

function renderProcesses(procs) {
  fill(document.querySelector("#processes tbody"), (procs || []).map((p) => el("tr", { "data-process": p.id },
    el("td", {}, el("code", {}, p.id)),
    el("td", {}, p.host),
    el("td", { class: "num" }, p.pid),
    el("td", {}, p.version || ""),
    el("td", {}, fmtTime(p.started)),
    el("td", {}, el("span", { "data-iso": p.last_beat, "data-rel": "ago" }, ago(p.last_beat))),
    el("td", { class: "num" }, p.running),
    el("td", {}, p.alive ? badge("alive", "alive") : badge("dead-proc", "silent"), p.master ? " " : null, p.master ? badge("master", "master") : null))),
  8, "No scheduler process is running.");
}

async function selectTask(name) {
  selected = name;
  document.getElementById("history-task").textContent = name;
  document.getElementById("history-section").hidden = false;
  await renderHistory();
  if (data) renderTasks(data.tasks || []);
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

let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const t0 = Date.now();
    data = await api("GET", "/api/overview");
    const rtt = Date.now() - t0;
    offset = Date.parse(data.counts.now) - (t0 + rtt / 2);
    renderCounts(data.counts);
    renderTasks(data.tasks || []);
    renderJobs(data.jobs, data.dead);
    renderProcesses(data.processes);
    await renderHistory();
    document.body.setAttribute("data-loaded", "true");
    if (document.getElementById("error").textContent.startsWith("dashboard:")) showError("");
  } catch (e) {
    showError("dashboard: " + e.message);
  } finally {
    refreshing = false;
    tick();
  }
}

document.getElementById("history-close").addEventListener("click", () => {
  selected = null;
  document.getElementById("history-section").hidden = true;
  if (data) renderTasks(data.tasks || []);
});
refresh();
setInterval(refresh, 2000);
setInterval(tick, 250);
