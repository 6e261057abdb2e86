// app.js: the inspector's views (docs/inspector.md). A plain module, no
// framework, no build step. Every figure it shows is what an operation of
// the JSON API answered (POST /v1/<operation>) for the key typed in the
// header, kept in sessionStorage (this tab only); the page computes no
// score, count or total of its own, it only lays them out. Text from the
// store is always set as textContent, never parsed as HTML.

const PAGE = 50; // timeline rows per page: the list is paged, never loaded whole
const PART_NAMES = ["relevance", "lexical", "recency", "importance", "context"];
const STATUSES = ["candidate", "promoted", "suppressed", "archived"];

// ---- the API ----

function key() { return sessionStorage.getItem("remem.key") || ""; }

async function api(method, path, body) {
  const headers = {};
  if (key()) headers.Authorization = "Bearer " + key();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).error.message; } catch (e) { /* not JSON: as is */ }
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return path === "/metrics" ? text : JSON.parse(text);
}

// POST /v1/<operation>: "memory.list" is /v1/memory/list.
function call(op, args) { return api("POST", "/v1/" + op.replace(/\./g, "/"), args); }

// ---- the DOM ----

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== undefined && k !== null) e.append(k instanceof Node ? k : String(k));
  return e;
}

function table(cls, heads, rows) {
  // a heading sits over its numbers when the column holds numbers
  const first = rows.length ? [...rows[0].cells] : [];
  return el("table", { class: cls }, el("thead", {}, el("tr", {}, heads.map((h, i) =>
    el("th", first[i] && first[i].classList.contains("num") ? { class: "num" } : {}, h)))),
  el("tbody", {}, rows));
}

function num(v, digits) {
  if (v === null || v === undefined) return "";
  return typeof v === "number" && digits !== undefined ? v.toFixed(digits) : String(v);
}

function counts(obj) {
  return Object.entries(obj || {}).map(([k, v]) => (k || "(none)") + " " + v).join(", ");
}

function say(msg) { document.getElementById("status").textContent = msg || ""; }

function show(...nodes) {
  const v = document.getElementById("view");
  v.replaceChildren(...nodes);
}

// ---- the route: #/<view>?ns=...&id=... ----

function route() {
  const h = location.hash.replace(/^#\/?/, "") || "namespaces";
  const [view, q] = h.split("?");
  return { view, params: new URLSearchParams(q || "") };
}

function go(view, params) {
  location.hash = "#/" + view + "?" + new URLSearchParams(params).toString();
}

let known = null; // the namespaces the key may read, from GET /v1/namespaces

async function namespaces() {
  if (!known) known = (await api("GET", "/v1/namespaces")).namespaces.map((n) => n.ns);
  return known;
}

// A namespace picker that re-routes the view on change.
function nsPicker(view, current, names, extra) {
  return el("select", { id: "ns", onchange: (e) => go(view, Object.assign({ ns: e.target.value }, extra || {})) },
    names.map((n) => el("option", n === current ? { value: n, selected: "" } : { value: n }, n)));
}

async function pickNs(params) {
  const names = await namespaces();
  const ns = params.get("ns") || names[0];
  return { ns, names };
}

// ---- views ----

async function viewNamespaces() {
  const names = await namespaces();
  const stats = await Promise.all(names.map((ns) => call("stats", { ns })));
  const rows = stats.map((s) => el("tr", { class: "link", "data-ns": s.ns, onclick: () => go("timeline", { ns: s.ns }) },
    el("td", { "data-col": "ns" }, s.ns),
    el("td", { class: "num", "data-col": "memories" }, num(s.memories)),
    el("td", { "data-col": "by_kind" }, counts(s.by_kind)),
    el("td", { "data-col": "by_tier" }, counts(s.by_tier)),
    el("td", { "data-col": "model" }, Object.keys(s.by_model || {}).filter((m) => m).join(", ")),
    el("td", { class: "num", "data-col": "bytes", title: "the namespace's cache, when loaded" }, s.cache ? num(s.cache.bytes) : "not loaded"),
    el("td", { class: "num", "data-col": "pending" }, num(s.pending_embeddings)),
    el("td", { class: "num", "data-col": "invalidated" }, num(s.invalidated)),
    el("td", { "data-col": "newest" }, s.newest || ""),
    el("td", { "data-col": "oldest" }, s.oldest || "")));
  const canvas = el("canvas", { id: "tiers-chart" });
  const chartLib = loadChart();
  show(el("h2", {}, "Namespaces"),
    table("namespaces", ["namespace", "memories", "by kind", "by tier", "model", "bytes in memory", "pending embeddings",
      "invalidated", "newest", "oldest"], rows),
    el("h3", {}, "Memories by tier"), el("div", { class: "chart" }, canvas));
  await chartLib;
  tierChart(canvas, stats);
}

// Chart.js is fetched by the one view that draws a chart, so that the
// other views do not wait for its 200 KB.
let chartLoading = null;
function loadChart() {
  if (!chartLoading)
    chartLoading = new Promise((ok) => {
      const s = el("script", { src: "/ui/chart.js" });
      s.onload = ok;
      s.onerror = ok; // no chart, the table still shows the counts
      document.head.append(s);
    });
  return chartLoading;
}

// Chart.js (Debian's libjs-chart.js, built into the binary): the counts as the
// stats operation gave them, stacked by tier.
function tierChart(canvas, stats) {
  if (!window.Chart) return;
  const tiers = [...new Set(stats.flatMap((s) => Object.keys(s.by_tier || {})))];
  const colours = { static: "#4e79a7", short: "#f28e2b", long: "#59a14f", archived: "#bab0ac" };
  new window.Chart(canvas, {
    type: "bar",
    data: {
      labels: stats.map((s) => s.ns),
      datasets: tiers.map((t) => ({ label: t, data: stats.map((s) => (s.by_tier || {})[t] || 0),
        backgroundColor: colours[t] || "#9c755f" })),
    },
    options: { animation: false, maintainAspectRatio: false, indexAxis: "y",
      scales: { x: { stacked: true }, y: { stacked: true } } },
  });
}

function listArgs(ns, params) {
  const args = { ns, order: "created", desc: true, limit: PAGE };
  for (const f of ["kinds", "tiers"]) if (params.get(f)) args[f] = params.get(f).split(",").map((s) => s.trim());
  if (params.get("filter")) args.filter = params.get("filter");
  if (params.get("cursor")) args.cursor = params.get("cursor");
  return args;
}

async function viewTimeline(params) {
  // With the namespace in the address, its page and the namespace list
  // are asked at once.
  const named = params.get("ns");
  const early = named ? call("memory.list", listArgs(named, params)) : null;
  if (early) early.catch(() => {}); // its error is shown when awaited below
  const { ns, names } = await pickNs(params);
  const page = await (early || call("memory.list", listArgs(ns, params)));
  const page_no = Number(params.get("page") || 1);
  const rows = page.memories.map((m) => el("tr", { class: "link", "data-id": m.id, onclick: () => go("memory", { ns, id: m.id }) },
    el("td", {}, m.created_at), el("td", { "data-col": "kind" }, m.kind), el("td", { "data-col": "tier" }, m.tier),
    el("td", { "data-col": "text" }, m.text.length > 140 ? m.text.slice(0, 140) + "…" : m.text),
    el("td", {}, m.accessed_at || ""), el("td", { class: "num" }, num(m.access_count)),
    el("td", {}, m.invalidated_at || "")));
  const form = filterForm(ns, names, params);
  const prev = history.length > 1 && page_no > 1 ? el("button", { id: "prev", onclick: () => history.back() }, "◀ Previous") : null;
  const next = page.next_cursor ? el("button", { id: "next", onclick: () => go("timeline",
    Object.assign(Object.fromEntries(params), { ns, cursor: page.next_cursor, page: page_no + 1 })) }, "Next ▶") : null;
  show(el("h2", {}, "Timeline of " + ns), form,
    table("timeline", ["created", "kind", "tier", "text", "accessed", "accesses", "invalidated"], rows),
    el("div", { class: "pager" }, prev, el("span", { id: "page" }, "page " + page_no), next));
}

function filterForm(ns, names, params) {
  const input = (name, ph) => el("input", { name, placeholder: ph, value: params.get(name) || "" });
  const form = el("form", { class: "bar", id: "filters" }, nsPicker("timeline", ns, names),
    input("kinds", "kinds: observation,reflection"), input("tiers", "tiers: short,long,archived"),
    el("input", { name: "filter", placeholder: '{"metadata.room":"kitchen"}', size: 34, value: params.get("filter") || "" }),
    el("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const p = { ns: form.querySelector("#ns").value };
    for (const f of ["kinds", "tiers", "filter"]) if (form.elements[f].value) p[f] = form.elements[f].value;
    go("timeline", p);
  });
  return form;
}

async function viewMemory(params) {
  const { ns } = await pickNs(params);
  const id = params.get("id");
  const form = el("form", { class: "bar" }, el("input", { name: "ns", value: ns || "", placeholder: "namespace" }),
    el("input", { name: "id", value: id || "", placeholder: "memory id", size: 32 }), el("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (e) => { e.preventDefault(); go("memory", { ns: form.elements.ns.value, id: form.elements.id.value }); });
  if (!id) return show(el("h2", {}, "Memory"), form, el("p", { class: "muted" }, "Pick a memory in the timeline, or give its id."));
  const [m, h, l] = await Promise.all([call("memory.get", { ns, id }), call("memory.history", { ns, id }),
    call("memory.links", { ns, id })]);
  const mem = m.memory || m;
  const fields = ["id", "kind", "tier", "text", "importance", "created_at", "updated_at", "accessed_at", "access_count",
    "invalidated_at", "superseded_by", "duplicate_count", "model"];
  const kv = el("div", { class: "kv", id: "fields" }, fields.flatMap((f) => [el("span", { class: "muted" }, f),
    el("span", { "data-field": f }, num(mem[f]))]), el("span", { class: "muted" }, "metadata"),
  el("pre", {}, JSON.stringify(mem.metadata, null, 1)));
  const hist = h.history.map((c) => el("tr", { "data-op": c.op }, el("td", {}, c.at), el("td", {}, c.op), el("td", {}, c.actor || ""),
    el("td", {}, el("pre", {}, changed(c.before, c.after))), el("td", {}, el("pre", {}, changed(c.after, c.before)))));
  const ends = (list, cls) => table(cls, ["id", "kind", "tier", "text"], list.map((x) => el("tr",
    { class: x.missing ? "" : "link", "data-id": x.id, onclick: x.missing ? null : () => go("memory", { ns, id: x.id }) },
    el("td", {}, x.id), el("td", {}, x.kind || ""), el("td", {}, x.tier || ""), el("td", {}, x.missing ? "(not in this namespace)" : x.text))));
  show(el("h2", {}, "Memory " + id), form, kv,
    el("h3", {}, "History"), table("history", ["at", "change", "who", "before", "after"], hist),
    el("h3", {}, "Links to (" + l.links_to.length + ")"), ends(l.links_to, "links-to"),
    el("h3", {}, "Linked from (" + l.linked_from.length + ")"), ends(l.linked_from, "linked-from"));
}

// The fields of a that differ from b (a change's before or after), as the
// history gave them.
function changed(a, b) {
  if (!a) return "";
  const out = {};
  for (const [k, v] of Object.entries(a)) if (!b || JSON.stringify(v) !== JSON.stringify(b[k])) out[k] = v;
  return JSON.stringify(out, null, 1);
}

async function viewRecall(params) {
  const { ns, names } = await pickNs(params);
  const profiles = (await api("GET", "/v1/profiles")).profiles.map((p) => p.name);
  const prof = params.get("profile") || "default";
  const form = el("form", { class: "bar", id: "recall-form" }, nsPicker("recall", ns, names),
    el("input", { name: "query", placeholder: "query", size: 40, value: params.get("query") || "" }),
    el("select", { name: "profile" }, profiles.map((p) => el("option", p === prof ? { value: p, selected: "" } : { value: p }, p))),
    el("input", { name: "k", type: "number", min: 1, max: 100, value: params.get("k") || 5, style: "width:5em" }),
    el("button", { type: "submit" }, "Recall"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    go("recall", { ns: form.querySelector("#ns").value, query: form.elements.query.value,
      profile: form.elements.profile.value, k: form.elements.k.value });
  });
  if (!params.get("query")) return show(el("h2", {}, "Recall explained"), form);
  const r = await call("recall.explain", { ns: [ns], query: params.get("query"), profile: prof,
    k: Number(params.get("k") || 5), near: 5 });
  const max = Math.max(1e-9, ...r.hits.concat(r.near_misses).map((h) => h.score));
  show(el("h2", {}, "Recall explained"), form,
    el("div", { class: "formula", id: "formula" }, r.formula),
    el("p", { class: "legend" }, PART_NAMES.map((p) => el("span", { class: "part-" + p }, p)),
      el("span", { class: "muted" }, r.candidates + " candidates scored in " + num(r.took_ms, 1) + " ms")),
    el("h3", {}, "Hits"), scoredTable("hits", r.hits, max, false),
    el("h3", {}, "Near misses"), scoredTable("near-misses", r.near_misses, max, true));
}

// Hits (or near misses) with their score and its parts as one stacked bar:
// each part's width is its share of the largest score shown.
function scoredTable(cls, hits, max, missed) {
  const rows = hits.map((h, i) => el("tr", { class: "hit", "data-id": h.id, "data-score": h.score },
    el("td", { class: "num" }, i + 1),
    el("td", { class: "num score" }, num(h.score, 4)),
    el("td", { style: "width:30%" }, el("div", { class: "stack", style: "width:" + (100 * h.score / max) + "%" },
      PART_NAMES.map((p) => el("span", { class: "part-" + p, "data-part": p, "data-value": h.parts[p],
        title: p + " " + num(h.parts[p], 4), style: "width:" + (h.score > 0 ? 100 * h.parts[p] / h.score : 0) + "%" })))),
    PART_NAMES.map((p) => el("td", { class: "num" }, num(h.parts[p], 3))),
    missed ? el("td", { "data-col": "missed" }, h.missed) : null,
    el("td", {}, h.kind), el("td", {}, h.text)));
  const heads = ["#", "score", "parts"].concat(PART_NAMES, missed ? ["left out by"] : [], ["kind", "text"]);
  return table(cls, heads, rows);
}

async function viewLessons(params) {
  const { ns, names } = await pickNs(params);
  const l = await call("lesson.list", { ns });
  const cols = STATUSES.map((st) => el("div", { class: "column", "data-status": st }, el("h3", {}, st),
    l.lessons.filter((x) => x.status === st).map(lessonCard)));
  const run = params.get("run");
  const runForm = el("form", { class: "bar" }, el("input", { name: "run", placeholder: "run id", value: run || "" }),
    el("button", { type: "submit" }, "Show run"));
  runForm.addEventListener("submit", (e) => { e.preventDefault(); go("lessons", { ns, run: runForm.elements.run.value }); });
  const nodes = [el("h2", {}, "Lessons of " + ns), el("form", { class: "bar" }, nsPicker("lessons", ns, names)),
    el("div", { class: "board", id: "board" }, cols), el("h3", {}, "Runs"), runForm];
  nodes.push(run ? await runTimeline(ns, run) : await runSummary(ns));
  show(...nodes);
}

function lessonCard(x) {
  const runs = x.relevant_runs || {};
  return el("div", { class: "card", "data-lesson": x.lesson_id },
    el("div", { class: "rule" }, x.rule_text),
    el("div", { class: "muted" }, x.domain_key + " · " + x.lesson_id),
    el("div", {}, "utility ", el("b", { "data-field": "utility" }, x.utility === null ? "–" : num(x.utility, 3)),
      " · runs ", el("b", { "data-field": "runs" }, num(runs.with)),
      " · retrievals ", el("b", { "data-field": "retrievals" }, num(x.retrieval_count)),
      " · helpful ", num(x.helpful_count), " · harmful ", num(x.harmful_count)),
    (x.status_history || []).map((s) => el("div", { class: "muted" }, (s.at || "") + " " + (s.from || "") + " → " + (s.to || s.status || "") +
      (s.reason ? " (" + s.reason + ")" : ""))));
}

async function runSummary(ns) {
  const s = (await call("timeline", { ns, view: "summary" })).summary;
  return table("run-summary", ["runs", "passed", "pass rate", "mean score", "lesson activations", "promoted", "suppressed"],
    [el("tr", {}, [s.runs, s.passed, num(s.pass_rate, 2), num(s.mean_score, 3), s.lesson_activations, s.promoted, s.suppressed]
      .map((v) => el("td", { class: "num" }, num(v))))]);
}

async function runTimeline(ns, run) {
  const [a, d] = await Promise.all([call("timeline", { ns, run, view: "attempts" }), call("timeline", { ns, run, view: "decisions" })]);
  return el("div", { id: "run" }, el("h3", {}, "Run " + run), el("pre", { class: "formula" }, a.text),
    el("h3", {}, "Decisions"), el("pre", { class: "formula" }, d.text));
}

async function viewMaintenance(params) {
  const { ns, names } = await pickNs(params);
  const [s, ar, pr, all, metrics] = await Promise.all([call("stats", { ns }), call("archive.list", { ns }),
    call("prune.reports", { ns, limit: 5 }), call("stats", {}).catch((e) => e), api("GET", "/metrics").catch((e) => e)]);
  const files = ar.files.map((f) => el("tr", {}, el("td", {}, f.file || f.path || ""), el("td", { class: "num" }, num(f.records)),
    el("td", {}, f.checksum || f.status || "")));
  show(el("h2", {}, "Maintenance of " + ns), el("form", { class: "bar" }, nsPicker("maintenance", ns, names)),
    el("div", { class: "kv", id: "maint" }, el("span", { class: "muted" }, "pending embeddings"),
      el("span", { "data-field": "pending" }, num(s.pending_embeddings)),
      el("span", { class: "muted" }, "archive folder"), el("span", {}, ar.archiveLocation || "")),
    el("h3", {}, "Archive files"), table("archive", ["file", "records", "checksum"], files),
    el("h3", {}, "Last prune reports"), reportsTable(pr.reports),
    el("h3", {}, "Cache"), cacheTable(all),
    el("h3", {}, "LLM tokens"), metricsTable(metrics, /^remem_llm_|^memory_llm_/));
}

function reportsTable(reports) {
  const rows = reports.map((r) => el("tr", { "data-report": r.report }, el("td", {}, r.timestamp),
    [r.removedCount, r.reasons.age, r.reasons.count, r.reasons.cluster, r.clustersCreated, num(r.durationMs, 1)]
      .map((v) => el("td", { class: "num" }, num(v))), el("td", {}, r.dryRun ? "dry run" : "")));
  return table("prune-reports", ["at", "removed", "by age", "by count", "in clusters", "clusters made", "ms", ""], rows);
}

function cacheTable(all) {
  if (all instanceof Error) return el("p", { class: "muted", id: "cache-refused" }, "store-wide figures need a key over every namespace (" + all.message + ")");
  const c = all.cache || {};
  return table("cache", ["namespaces cached", "bytes", "budget", "loads", "hits", "misses", "evictions", "loads over the budget"],
    [el("tr", {}, ["namespaces", "bytes", "budget", "loads", "hits", "misses", "evictions", "oversized_loads"].map((k) => el("td", { class: "num", "data-field": k }, num(c[k]))))]);
}

// The /metrics lines whose names match, as the server wrote them.
function metricsTable(text, re) {
  if (text instanceof Error) return el("p", { class: "muted" }, text.message);
  const rows = text.split("\n").filter((l) => l && !l.startsWith("#") && re.test(l)).map((l) => {
    const i = l.lastIndexOf(" ");
    return el("tr", {}, el("td", {}, l.slice(0, i)), el("td", { class: "num" }, l.slice(i + 1)));
  });
  return rows.length ? table("llm", ["metric", "value"], rows) : el("p", { class: "muted", id: "no-llm" }, "no LLM call yet");
}

// ---- start ----

const VIEWS = { namespaces: viewNamespaces, timeline: viewTimeline, memory: viewMemory, recall: viewRecall,
  lessons: viewLessons, maintenance: viewMaintenance };

async function render() {
  const { view, params } = route();
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("on", a.dataset.view === view);
  say("");
  document.body.dataset.ready = "";
  try {
    await (VIEWS[view] || viewNamespaces)(params);
  } catch (e) {
    say(e.status === 401 ? "This server needs a key: type it above." : e.message);
  }
  // ms since navigation began: bench/bench_inspector.sh reads it
  document.body.dataset.readyMs = performance.now().toFixed(1);
  document.body.dataset.ready = view;
}

document.getElementById("keyform").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("remem.key", document.getElementById("key").value);
  document.getElementById("key").value = "";
  known = null;
  render();
});
window.addEventListener("hashchange", render);
render();
