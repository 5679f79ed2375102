/**
 * The console page's script, plain ES2020 with no dependency. It redraws at most once a frame, only
 * the parts an event changed, so a hundred requests a second cost the page a few small redraws.
 */
export const CONSOLE_SCRIPT = `"use strict";
const KINDS = [["proxyUsers", "Proxy users"], ["keys", "API keys"], ["ips", "IPs"], ["charges", "Charges"]];
const HISTORY_SECONDS = 60;
const LOG_ROWS = 200;
const view = { objects: null, fresh: [], state: null, tab: "proxyUsers", history: new Map(), last: new Map(), arrived: [] };
const dirty = new Set();
let scheduled = false;

const $ = (id) => document.getElementById(id);
const esc = (v) => String(v == null ? "" : v).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
const bytes = (n) => n >= 1e9 ? (n / 1e9).toFixed(2) + " GB" : n >= 1e6 ? (n / 1e6).toFixed(1) + " MB" : n >= 1e3 ? (n / 1e3).toFixed(1) + " kB" : n + " B";
const gb = (v) => v == null ? "none" : v + " GB";

function mark(part) {
  dirty.add(part);
  if (!scheduled) { scheduled = true; requestAnimationFrame(render); }
}

function bar(value, ceiling) {
  if (ceiling == null) return "<td class=muted>no ceiling</td>";
  const share = ceiling === 0 ? 1 : Math.min(1, value / ceiling);
  return "<td><div class='bar" + (share >= 1 ? " full" : "") + "' title='" + Math.round(share * 100) + " %'><i style='width:" + (share * 100).toFixed(1) + "%'></i></div></td>";
}

function sparkline(points) {
  const max = Math.max(1, ...points);
  const step = 160 / (HISTORY_SECONDS - 1);
  // Newest at the right edge, so a page opened a moment ago already reads like a strip chart.
  const left = 160 - (points.length - 1) * step;
  const d = points.map((p, i) => (i ? "L" : "M") + Math.round(left + i * step) + " " + Math.round(22 - (p / max) * 20)).join("");
  return "<svg width=160 height=24 viewBox='0 0 160 24'><path data-series=rate d='" + d + "' fill=none stroke='#3b82f6'/></svg>";
}

const COLUMNS = {
  proxyUsers: [["name", (o) => o.name], ["id", (o) => o.id], ["enabled", (o) => o.enabled ? "yes" : "<span class=bad>no</span>"], ["daily", (o) => gb(o.limits.daily_gb)], ["monthly", (o) => gb(o.limits.monthly_gb)], ["created", (o) => o.created_at]],
  keys: [["name", (o) => o.name], ["id", (o) => o.id], ["scopes", (o) => o.scopes.join(", ")], ["expires", (o) => o.expires_at || "never"], ["rotated", (o) => o.last_rotated_at || "never"]],
  ips: [["ip", (o) => o.ip], ["id", (o) => o.id], ["product", (o) => o.product], ["place", (o) => o.country + " " + o.city], ["health", (o) => o.health]],
  charges: [["id", (o) => o.id], ["kind", (o) => o.kind], ["amount", (o) => "$" + (o.amount_cents / 100).toFixed(2)], ["at", (o) => o.created_at]],
};
const RAW = new Set(["enabled"]);

// Objects by kind, each a Map by id in creation order: a change replaces an object where it stands.
function listed(kind) {
  const list = [...((view.objects && view.objects[kind]) || new Map()).values()];
  return kind === "charges" ? list.reverse() : list;
}

function renderObjects() {
  const objects = view.objects || {};
  $("tabs").innerHTML = KINDS.map(([kind, label]) => "<button data-tab='" + kind + "'" + (kind === view.tab ? " class=on" : "") + ">" + label + " (" + (objects[kind] ? objects[kind].size : 0) + ")</button>").join("");
  const columns = COLUMNS[view.tab];
  const rows = listed(view.tab).map((o) => "<tr data-object-id='" + esc(o.id) + "'>" + columns.map(([name, get]) => "<td>" + (RAW.has(name) ? get(o) : esc(get(o))) + "</td>").join("") + "</tr>");
  $("objects").innerHTML = "<table><thead><tr>" + columns.map(([name]) => "<th>" + name + "</th>").join("") + "</tr></thead><tbody>" + rows.join("") + "</tbody></table>";
}

const logRow = (r) => "<tr><td>" + new Date(r.at).toISOString().slice(11, 23) + "</td><td>" + esc(r.method) + "</td><td>" + esc(r.path) + "</td><td class='" + (/^2/.test(r.outcome) ? "ok" : "bad") + "'>" + esc(r.outcome) + "</td><td>" + esc(r.keyId || "-") + "</td><td>" + r.ms + "</td></tr>";

// Only the new rows are parsed and the oldest dropped: the table is never rebuilt while requests arrive.
function renderLog() {
  const body = $("log");
  const fresh = view.fresh.slice(-LOG_ROWS);
  view.fresh = [];
  body.insertAdjacentHTML("afterbegin", fresh.reverse().map(logRow).join(""));
  while (body.rows.length > LOG_ROWS) body.deleteRow(-1);
  const now = Date.now();
  view.arrived = view.arrived.filter(([t]) => now - t < 10000);
  $("rate").textContent = (view.arrived.reduce((sum, [, n]) => sum + n, 0) / 10).toFixed(1) + " req/s";
}

function renderState() {
  const s = view.state;
  $("urls").textContent = "API " + s.urls.api + "  gateway " + s.urls.gateway + "  clock " + s.now;
  const names = new Map(listed("keys").map((k) => [k.id, k.name]));
  $("windows").innerHTML = s.windows.map((w) => "<tr data-window-key='" + esc(w.id) + "' data-used='" + w.used + "'><td>" + esc(names.get(w.id) || w.id) + "</td>" + bar(w.used, w.limit) + "<td>" + w.used + " / " + w.limit + "</td><td class=muted>resets in " + w.resetSeconds + " s</td></tr>").join("") || "<tr><td class=muted>no request yet</td></tr>";
  $("gateway").innerHTML = s.gateway.map((u) => "<tr data-gateway-user='" + esc(u.id) + "' data-today-bytes='" + u.todayBytes + "'><td>" + esc(u.name) + (u.enabled ? "" : " <span class=bad>(disabled)</span>") + "</td><td>" + bytes(u.todayBytes) + "</td>" + bar(u.todayBytes, u.dailyCeiling) + "<td>" + bytes(u.monthBytes) + "</td>" + bar(u.monthBytes, u.monthlyCeiling) + "<td>" + sparkline(view.history.get(u.id) || [0]) + "</td></tr>").join("") || "<tr><td class=muted>no gateway traffic this month</td></tr>";
  $("faults").textContent = JSON.stringify(s.faults, null, 2);
}

function render() {
  scheduled = false;
  if (dirty.has("objects") && view.objects) renderObjects();
  if (dirty.has("log")) renderLog();
  if (dirty.has("state") && view.state) renderState();
  dirty.clear();
}

document.addEventListener("click", (event) => {
  const tab = event.target.closest && event.target.closest("[data-tab]");
  if (tab) { view.tab = tab.dataset.tab; mark("objects"); }
});

const events = new EventSource("/console/events");
events.onopen = () => { $("status").textContent = "live"; $("status").className = ""; };
events.onerror = () => { $("status").textContent = "disconnected, retrying…"; $("status").className = "down"; };
// The full list when the stream opens (again), then only what changed.
events.addEventListener("objects", (e) => {
  const lists = JSON.parse(e.data);
  view.objects = {};
  for (const [kind] of KINDS) view.objects[kind] = new Map((lists[kind] || []).map((o) => [o.id, o]));
  mark("objects"); mark("state");
});
events.addEventListener("changes", (e) => {
  if (!view.objects) return;
  for (const [kind, change] of Object.entries(JSON.parse(e.data))) {
    const shown = view.objects[kind];
    if (!shown) continue;
    for (const o of change.put) shown.set(o.id, o);
    for (const id of change.gone) shown.delete(id);
  }
  mark("objects"); mark("state");
});
events.addEventListener("log", (e) => {
  const { records, count } = JSON.parse(e.data);
  view.arrived.push([Date.now(), count]);
  view.fresh = view.fresh.concat(records);
  mark("log");
});
events.addEventListener("state", (e) => {
  view.state = JSON.parse(e.data);
  for (const u of view.state.gateway) {
    const points = view.history.get(u.id) || [];
    const previous = view.last.get(u.id);
    points.push(previous === undefined ? 0 : Math.max(0, u.todayBytes - previous));
    if (points.length > HISTORY_SECONDS) points.shift();
    view.history.set(u.id, points);
    view.last.set(u.id, u.todayBytes);
  }
  mark("state");
});
`;
