// The operators' dashboard (the book's operators/dashboard.md): the sunset's verdict first, the
// retiring version's traffic, the busiest clients, every client in numbered pages with filters, one
// client's page, and the elements deprecated inside a version. The view (filters, page, range, tab,
// one client) lives in the URL's fragment, never the token: a view can be reloaded, bookmarked and
// sent; the refresh every 60 s re-reads it and never changes it.

import { count, plural, relative, time, number, utc } from "./format.js";
import { draw } from "./chart.js";

const PAGE = 50;
const REFRESH_MS = 60000;
const STATUSES = ["not-started", "in-progress", "ready", "done", "unknown"];
const $ = (id) => document.getElementById(id);

const state = {
  token: null, // in memory only
  version: document.documentElement.dataset.version || null,
  successor: document.documentElement.dataset.successor || null,
  pages: 1,
  opened: new Set(), // clients whose routes are open, kept through a refresh
  timer: null,
  paused: false,
  updated: null,
  loading: 0, // the latest load: an older one's answers are dropped
};

// ---- The view, in the fragment -------------------------------------------------------------

// `sort` is kept with the filters: it is asked of the same pages, and a link carries it.
const FILTERS = ["status", "tenant", "changes", "q", "sort"];

function view() {
  const p = new URLSearchParams(location.hash.slice(1));
  const page = Math.max(1, parseInt(p.get("page") || "1", 10) || 1);
  const range = ["7", "30", "90"].includes(p.get("range")) ? Number(p.get("range")) : 30;
  const tab = p.get("client") ? "client" : p.get("tab") === "elements" ? "elements" : "clients";
  const filters = Object.fromEntries(FILTERS.map((f) => [f, p.get(f) || ""]));
  return { page, range, tab, client: p.get("client") || "", filters };
}

/// Sets part of the view; the fragment changes and `hashchange` loads what it shows.
function go(changes) {
  const v = { ...view(), ...changes };
  const p = new URLSearchParams();
  if (v.tab === "client" && v.client) p.set("client", v.client);
  else if (v.tab === "elements") p.set("tab", "elements");
  for (const f of FILTERS) if (v.filters[f]) p.set(f, v.filters[f]);
  if (v.page > 1) p.set("page", String(v.page));
  if (v.range !== 30) p.set("range", String(v.range));
  const hash = p.toString();
  if (hash === location.hash.slice(1)) load();
  else location.hash = hash;
}

function migrationQuery(v, extra) {
  const p = new URLSearchParams({ version: state.version });
  for (const f of FILTERS) if (v.filters[f]) p.set(f, v.filters[f]);
  for (const [k, value] of Object.entries(extra)) p.set(k, value);
  return "/admin/migration?" + p;
}

// ---- Asking the service ----------------------------------------------------------------------

class Refused extends Error {
  constructor(status) { super("HTTP " + status); this.status = status; }
}

async function ask(path, accept = "application/json") {
  const answer = await fetch(path, { headers: { Authorization: "Bearer " + state.token, Accept: accept } });
  if (!answer.ok) throw new Refused(answer.status);
  return accept === "application/json" ? answer.json() : answer.text();
}

function say(words, error) {
  $("status").className = error ? "error" : "muted";
  $("status").textContent = words;
}

// ---- Small pieces ----------------------------------------------------------------------------

function cell(row, value, className) {
  const td = row.insertCell();
  if (className) td.className = className;
  td.append(value instanceof Node ? value : document.createTextNode(String(value ?? "")));
  return td;
}

function status(name) {
  const s = document.createElement("span");
  s.className = "status " + name;
  s.textContent = name;
  return s;
}

/// A link to one client's page.
function clientLink(tenant, subject) {
  const a = document.createElement("a");
  a.href = "#" + new URLSearchParams({ client: tenant + "/" + subject });
  a.className = "client";
  a.textContent = subject;
  return a;
}

function sayEmpty(table, words) {
  const body = table.tBodies[0];
  if (body.rows.length) return;
  const td = body.insertRow().insertCell();
  td.colSpan = table.tHead.rows[0].cells.length;
  td.className = "muted empty";
  td.textContent = words;
}

function retiringLabels() {
  for (const label of document.querySelectorAll(".retiring")) label.textContent = "v" + state.version;
  $("successor").textContent = "v" + state.successor;
  $("catalogue").href = "/api/v" + state.successor + "/changes";
}

// ---- The verdict -----------------------------------------------------------------------------

function renderVerdict(r, now) {
  const box = $("verdict");
  const blocking = r.clients.blocking;
  box.className = "card " + (r.ready ? "ready" : "blocked");
  box.dataset.state = r.ready ? "ready" : "blocked";
  $("verdict-text").textContent = r.ready
    ? "v" + r.version + " can be turned off: no client called it in the last " + r.window + " days."
    : "v" + r.version + " is not ready to turn off: " + plural(blocking, "client", "clients") +
      " called it in the last " + r.window + " days.";
  const detail = $("verdict-detail");
  detail.replaceChildren();
  if (r.sunsetAt) detail.append("Sunset " + utc(r.sunsetAt) + " (" + plural(r.daysLeft, "day", "days") + " left). ");
  else detail.append("No sunset set. ");
  detail.append(r.projectedLastDay
    ? "At the current decline its traffic reaches zero on " + r.projectedLastDay + "."
    : "Its traffic is not falling.");
  void now;
}

// ---- Traffic and the busiest -----------------------------------------------------------------

function renderReport(usage, readiness, range, now) {
  for (const label of document.querySelectorAll(".range-label")) label.textContent = "last " + range + " days";
  $("range").value = String(range);
  $("total").textContent = count(usage.summary.requests);
  $("clients").textContent = count(usage.summary.clients);
  $("sunset").textContent = usage.sunsetAt ? usage.sunsetAt.slice(0, 10) : "not set";
  $("sunset").title = usage.sunsetAt ? utc(usage.sunsetAt) : "";
  $("left").textContent = usage.sunsetAt ? (Date.parse(usage.sunsetAt) > now ? relative(usage.sunsetAt, now) : "passed") : "";
  $("chart").setAttribute("aria-label", "v" + state.version + " requests per day, last " + range + " days");
  draw($("chart"), readiness.requestsPerDay, [
    { kind: "projected", label: "projected last day", day: readiness.projectedLastDay },
    { kind: "sunset", label: "sunset", day: readiness.sunsetAt && readiness.sunsetAt.slice(0, 10) },
  ]);
  const body = $("ranking").tBodies[0];
  body.replaceChildren();
  for (const c of readiness.blocking) {
    const row = body.insertRow();
    cell(row, c.tenant); cell(row, clientLink(c.tenant, c.subject)); cell(row, number(c.requests), "n");
    cell(row, time(c.lastRequest, now)); cell(row, status(c.status)); cell(row, number(c.mustChange), "n");
  }
  sayEmpty($("ranking"), "No client called v" + state.version + " in the last " + range + " days.");
  $("report").hidden = false;
}

// ---- Every client, in pages ------------------------------------------------------------------

function routesCell(row, r) {
  const td = cell(row, "", "routes");
  const key = r.tenant + "/" + r.subject;
  const details = td.appendChild(document.createElement("details"));
  details.open = state.opened.has(key);
  details.addEventListener("toggle", () => (details.open ? state.opened.add(key) : state.opened.delete(key)));
  const names = r.routes.map((x) => x.method + " " + x.called);
  details.appendChild(document.createElement("summary")).textContent =
    names.length === 0 ? "no v" + r.version + " routes" : names.length === 1 ? names[0] : names[0] + " and " + (names.length - 1) + " more";
  const list = details.appendChild(document.createElement("ul"));
  for (const x of r.routes) {
    const met = x.exposures.map((e) => e.change + " ×" + count(e.requests));
    list.appendChild(document.createElement("li")).textContent =
      x.method + " " + x.called + " (" + plural(x.requests, "request", "requests") + "), successor " + x.successor +
      "; changes: " + (x.changes.join(", ") || "none") + "; met: " + (met.join(", ") || "none");
  }
}

function noticesText(told) {
  told = told || { endpoint: false, last: null };
  return (told.endpoint ? "endpoint set" : "no endpoint") + (told.last ? "; last " + told.last.type + " " + told.last.status : "");
}

const met = (r) => new Set(r.routes.flatMap((x) => x.exposures.map((e) => e.change))).size;
const requestsOf = (r) => r.routes.reduce((n, x) => n + x.requests, 0);

function renderMigration(m, v, now) {
  const cards = $("status-cards");
  cards.replaceChildren();
  for (const s of STATUSES) {
    const card = cards.appendChild(document.createElement("button"));
    card.type = "button";
    card.className = "card"; card.id = "status-" + s;
    card.setAttribute("aria-pressed", String(v.filters.status === s));
    card.append(status(s));
    card.appendChild(document.createElement("b")).textContent = count(m.summary.byStatus[s] || 0);
    card.addEventListener("click", () => go({ page: 1, filters: { ...v.filters, status: v.filters.status === s ? "" : s } }));
  }
  for (const f of FILTERS) $("f-" + f).value = v.filters[f];
  const body = $("progress").tBodies[0];
  body.replaceChildren();
  for (const r of m.records) {
    const row = body.insertRow();
    row.dataset.client = r.tenant + "/" + r.subject;
    cell(row, r.tenant); cell(row, clientLink(r.tenant, r.subject)); cell(row, status(r.status));
    cell(row, number(requestsOf(r)), "n"); cell(row, time(r["lastV" + r.version + "Request"], now));
    cell(row, time(r.lastRehearsal, now)); cell(row, number(met(r)), "n"); cell(row, noticesText(r.notices));
    routesCell(row, r);
  }
  const filtered = FILTERS.some((f) => f !== "sort" && v.filters[f]);
  sayEmpty($("progress"), filtered ? "No client matches these filters." : "No client has called v" + state.version + " yet.");
  state.pages = m.pages;
  const total = m.summary.clients;
  $("shown").textContent = total === 0 ? "no clients"
    : "page " + count(m.page) + " of " + count(m.pages) + " · " + plural(total, "client", "clients");
  $("first").disabled = $("previous").disabled = m.page <= 1;
  $("next").disabled = $("last").disabled = m.page >= m.pages;
  $("migration").hidden = false;
}

function renderPins(pins, brownouts, now) {
  const pinBody = $("pins").tBodies[0];
  pinBody.replaceChildren();
  for (const p of pins.tenants) {
    const row = pinBody.insertRow();
    cell(row, p.tenant); cell(row, p.version); cell(row, p.previous ?? ""); cell(row, time(p.changedAt, now)); cell(row, p.changedBy);
  }
  sayEmpty($("pins"), "No tenant is pinned to a version.");
  const brownoutBody = $("brownouts").tBodies[0];
  brownoutBody.replaceChildren();
  for (const b of brownouts.brownouts.filter((b) => !b.endedAt && Date.parse(b.end) > now)) {
    const row = brownoutBody.insertRow();
    cell(row, b.deprecation ? b.deprecation + " (v" + b.version + ")" : b.version);
    cell(row, b.subject ? b.tenant + " / " + b.subject : b.tenant || "everyone");
    cell(row, time(b.start, now)); cell(row, time(b.end, now)); cell(row, b.createdBy);
  }
  sayEmpty($("brownouts"), "No brownout is active or planned.");
}

// ---- Deprecated elements ---------------------------------------------------------------------

function renderElements(listed, verdicts, now) {
  const body = $("deprecations").tBodies[0];
  body.replaceChildren();
  listed.forEach((d, i) => {
    const row = body.insertRow();
    row.id = "deprecation-" + d.id;
    const element = d.element.name ? d.element.kind + " " + d.element.name : "the operation";
    cell(row, d.id + " (" + element + ")"); cell(row, d.operation); cell(row, d.state);
    cell(row, d.sunsetAt ? d.sunsetAt.slice(0, 10) : "not set"); cell(row, number(d.clients), "n");
    cell(row, number(d.requests), "n"); cell(row, time(d.lastUsed, now));
    const ready = verdicts[i];
    cell(row, ready.ready ? "ready to remove" : plural(ready.clients.blocking, "client still uses it", "clients still use it"));
  });
  $("tab-elements").hidden = listed.length === 0;
}

// ---- One client ------------------------------------------------------------------------------

function guidePath(tenant, subject) {
  return "/admin/clients/" + encodeURIComponent(tenant) + "/" + encodeURIComponent(subject) + "/guide";
}

async function loadClient(key, now, current) {
  const cut = key.indexOf("/");
  const [tenant, subject] = cut < 0 ? [key, ""] : [key.slice(0, cut), key.slice(cut + 1)];
  $("client-title").textContent = tenant + " / " + subject;
  $("tab-client").hidden = false;
  const path = guidePath(tenant, subject) + "?version=" + state.version;
  let guide;
  try {
    guide = await ask(path);
  } catch (e) {
    if (current !== state.loading) return;
    $("client-body").hidden = true;
    $("client-missing").hidden = false;
    $("client-missing").textContent = e.status === 404
      ? "No such client has called v" + state.version + "."
      : "Could not load the client (" + (e.status || e.message) + ").";
    return;
  }
  const query = new URLSearchParams({ version: state.version, tenant, q: subject, limit: "1000" });
  const [listed, html] = await Promise.all([ask("/admin/migration?" + query), ask(path + "&format=html", "text/html")]);
  if (current !== state.loading) return;
  const record = listed.records.find((r) => r.tenant === tenant && r.subject === subject);
  $("client-missing").hidden = true;
  $("client-body").hidden = false;
  $("client-status").replaceChildren(status(guide.status));
  $("client-requests").textContent = count(record ? requestsOf(record) : guide.routes.reduce((n, r) => n + r.requests, 0));
  $("client-last").replaceChildren(time(record && record["lastV" + state.version + "Request"], now));
  $("client-changes").textContent = count(record ? met(record) : 0);
  $("client-notices").textContent = noticesText(record && record.notices);
  $("client-next").textContent = guide.nextStep;
  const routes = $("client-routes").tBodies[0];
  routes.replaceChildren();
  for (const r of guide.routes) {
    const called = record && record.routes.find((x) => x.method === r.method && x.route === r.route);
    const row = routes.insertRow();
    cell(row, r.method + " " + (called ? called.called : r.route)); cell(row, number(r.requests), "n");
    cell(row, r.successor ? r.successor.method + " " + r.successor.path : "none");
    cell(row, r.mustChange.map((m) => m.title + " (" + plural(m.requests, "request", "requests") + "): " + m.instruction).join(" ") || "nothing");
  }
  sayEmpty($("client-routes"), "No request of this client to v" + state.version + " is on record.");
  const elements = $("client-elements").tBodies[0];
  elements.replaceChildren();
  for (const d of guide.deprecations) {
    const row = elements.insertRow();
    cell(row, d.id + " (" + (d.element.name ? d.element.kind + " " + d.element.name : "the operation") + ")");
    cell(row, d.operation); cell(row, d.sunsetAt ? d.sunsetAt.slice(0, 10) : "not set"); cell(row, number(d.requests), "n");
    cell(row, d.replacement);
  }
  sayEmpty($("client-elements"), "It uses no deprecated element.");
  $("guide-address").textContent = "GET " + guidePath(tenant, subject) + "?format=html";
  $("guide-frame").srcdoc = html;
}

// ---- Loading a view --------------------------------------------------------------------------

function showTab(tab) {
  for (const [name, section] of [["clients", ["report", "migration"]], ["elements", ["elements"]], ["client", ["client"]]]) {
    const link = $("tab-" + name);
    if (tab === name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
    if (tab !== name) for (const id of section) $(id).hidden = true;
  }
  if (tab !== "client") $("tab-client").hidden = true;
}

/// Loads what the view shows. The verdict and the first page are asked at once; the rest
/// follows. A refresh is the same load: it keeps the view, the open rows and the scroll.
async function load() {
  if (!state.token) return;
  const current = ++state.loading;
  const v = view();
  const now = Date.now();
  const scroll = window.scrollY;
  showTab(v.tab);
  const since = new Date(now - (v.range - 1) * 86400000).toISOString().slice(0, 10) + "T00:00:00Z";
  const readiness = "/admin/versions/" + state.version + "/readiness";
  const asked = {
    verdict: ask(readiness + "?limit=1"),
    page: v.tab === "clients" ? ask(migrationQuery(v, { limit: PAGE, page: v.page })) : null,
    usage: v.tab === "clients" ? ask("/admin/usage?version=" + state.version + "&limit=1&since=" + encodeURIComponent(since)) : null,
    busiest: v.tab === "clients" ? ask(readiness + "?window=" + v.range + "&limit=10") : null,
    pins: v.tab === "clients" ? Promise.all([ask("/admin/tenants"), ask("/admin/brownouts")]) : null,
    elements: ask("/admin/deprecations"),
  };
  for (const p of Object.values(asked)) p?.catch(() => {});
  try {
    const verdict = await asked.verdict;
    if (current !== state.loading) return;
    renderVerdict(verdict, now);
    if (v.tab === "clients") {
      const page = await asked.page;
      if (current !== state.loading) return;
      if (page.page > page.pages) return go({ page: page.pages });
      renderMigration(page, v, now);
      const [usage, busiest, [pins, brownouts]] = await Promise.all([asked.usage, asked.busiest, asked.pins]);
      if (current !== state.loading) return;
      renderReport(usage, busiest, v.range, now);
      renderPins(pins, brownouts, now);
    }
    const listed = (await asked.elements).deprecations;
    const verdicts = await Promise.all(listed.map((d) => ask("/admin/deprecations/" + encodeURIComponent(d.id) + "/readiness?limit=1")));
    if (current !== state.loading) return;
    renderElements(listed, verdicts, now);
    if (v.tab === "elements") $("elements").hidden = false;
    if (v.tab === "client") {
      $("client").hidden = false;
      await loadClient(v.client, now, current);
    }
    if (current !== state.loading) return;
    window.scrollTo(0, scroll);
    state.updated = new Date(now).toISOString();
    say("");
    tick();
  } catch (e) {
    if (current !== state.loading) return;
    if (e.status === 401 || e.status === 403) return signOut("That token is not an admin token.");
    say("Could not load the dashboard (" + (e.status || e.message) + ").", true);
  }
}

// ---- The refresh -----------------------------------------------------------------------------

function tick() {
  if (!state.updated) return;
  const updated = $("updated");
  updated.replaceChildren("Updated ", time(state.updated, Date.now()), state.paused ? " · refresh paused" : " · refreshes every 60 s");
  $("refresh").hidden = false;
}

function schedule() {
  clearInterval(state.timer);
  state.timer = setInterval(() => (state.paused ? tick() : load()), REFRESH_MS);
}

$("refresh-now").addEventListener("click", () => load());
$("pause").addEventListener("click", () => {
  state.paused = !state.paused;
  $("pause").textContent = state.paused ? "resume refresh" : "pause refresh";
  if (!state.paused) load();
  tick();
});

// ---- Signing in and out ----------------------------------------------------------------------

/// The token's subject, read from its payload (the service checks the token; this only names it).
function subjectOf(token) {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)).sub || "an admin";
  } catch {
    return "an admin";
  }
}

function signOut(why) {
  state.token = null;
  state.loading++;
  clearInterval(state.timer);
  state.opened.clear();
  for (const id of ["report", "migration", "elements", "client", "signed-in", "refresh"]) $(id).hidden = true;
  $("login").hidden = false;
  $("verdict").className = "card";
  $("verdict").dataset.state = "waiting";
  $("verdict-text").textContent = "Sign in to see whether v" + state.version + " can be turned off.";
  $("verdict-detail").textContent = "";
  say(why || "Signed out.", Boolean(why));
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value.trim();
  $("token").value = "";
  if (!state.token) return;
  $("who").textContent = subjectOf(state.token);
  $("login").hidden = true;
  $("signed-in").hidden = false;
  $("verdict").dataset.state = "loading";
  $("verdict-text").textContent = "Asking whether v" + state.version + " can be turned off…";
  say("Loading…");
  load();
  schedule();
});
$("sign-out").addEventListener("click", () => signOut());

// ---- Moving through the view -----------------------------------------------------------------

window.addEventListener("hashchange", () => load());
$("tab-clients").addEventListener("click", (e) => { e.preventDefault(); go({ tab: "clients", client: "" }); });
$("tab-elements").addEventListener("click", (e) => { e.preventDefault(); go({ tab: "elements", client: "" }); });
$("tab-client").addEventListener("click", (e) => e.preventDefault());
$("to-all").addEventListener("click", (e) => { e.preventDefault(); $("all-clients").scrollIntoView(); });
$("range").addEventListener("change", () => go({ range: Number($("range").value) }));
$("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  const filters = Object.fromEntries(FILTERS.map((f) => [f, $("f-" + f).value.trim()]));
  go({ page: 1, filters });
});
$("f-clear").addEventListener("click", () => go({ page: 1, filters: { ...view().filters, status: "", tenant: "", changes: "", q: "" } }));
$("first").addEventListener("click", () => go({ page: 1 }));
$("previous").addEventListener("click", () => go({ page: Math.max(1, view().page - 1) }));
$("next").addEventListener("click", () => go({ page: Math.min(state.pages, view().page + 1) }));
$("last").addEventListener("click", () => go({ page: state.pages }));

// The CSV of this view's filters, fetched with the token (a plain link could not send it).
$("csv").addEventListener("click", async (event) => {
  event.preventDefault();
  try {
    const csv = await ask(migrationQuery(view(), { format: "csv" }), "text/csv");
    download(new Blob([csv], { type: "text/csv" }), "migration-v" + state.version + ".csv");
  } catch (e) {
    say("Could not download the CSV (" + (e.status || e.message) + ").", true);
  }
});

$("guide-markdown").addEventListener("click", async (event) => {
  event.preventDefault();
  const key = view().client, cut = key.indexOf("/");
  try {
    const text = await ask(guidePath(key.slice(0, cut), key.slice(cut + 1)) + "?format=markdown&version=" + state.version, "text/markdown");
    download(new Blob([text], { type: "text/markdown" }), "guide-" + key.replace(/[^A-Za-z0-9-]+/g, "_") + ".md");
  } catch (e) {
    say("Could not download the guide (" + (e.status || e.message) + ").", true);
  }
});

/// Saves a blob as a file, and lets go of it afterwards.
function download(blob, name) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

retiringLabels();
showTab(view().tab);
