// drive.mjs: Debian's chromium, headless through puppeteer-core, against a
// running remem serve's /ui (tests/e2e/inspector.sh starts the server and
// fills the store). Each view is opened as a person would, and what it shows
// is read from the DOM and compared with what the JSON API answers the same
// key: namespaces and their counts, the timeline's pages and filter, a
// memory's history and links both ways, recall explained (each hit's bars
// sum to its score), the lessons board, maintenance; then a read key scoped
// to one namespace sees no other. Screenshots of each view at 1280x800 go
// to OUT/inspector-<view>.png.
//   node drive.mjs URL ADMIN_KEY SCOPED_KEY SCOPED_NS OTHER_NS OUT CHROMIUM
import puppeteer from "puppeteer-core";

const [url, adminKey, scopedKey, scopedNs, otherNs, out, chromium] = process.argv.slice(2);
let fails = 0;
function check(ok, what) {
  if (ok) console.log("ok - " + what);
  else { console.log("FAIL: " + what); fails++; }
}

async function api(key, op, args) {
  const r = await fetch(url + "/v1/" + op.replace(/\./g, "/"), {
    method: "POST", headers: { Authorization: "Bearer " + key, "Content-Type": "application/json" },
    body: JSON.stringify(args) });
  return r.json();
}

const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 800 });
page.on("pageerror", (e) => { console.log("FAIL: page error: " + e.message); fails++; });

// Open a view and wait until it says it is drawn (body[data-ready]).
async function open(hash) {
  await page.evaluate(() => { document.body.dataset.ready = ""; });
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 15000 });
}
const texts = (sel) => page.$$eval(sel, (es) => es.map((e) => e.textContent.trim()));
const shot = (name) => page.screenshot({ path: `${out}/inspector-${name}.png` });
const status = () => page.$eval("#status", (e) => e.textContent);

async function useKey(key) {
  await page.evaluate(() => { document.body.dataset.ready = ""; });
  await page.type("#key", key);
  await page.click("#keyform button");
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 15000 });
}

try {
  // ---- no key yet: the page says one is needed, shows nothing ----
  await page.goto(url + "/ui#/namespaces", { waitUntil: "load" });
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 15000 });
  check(/needs a key/.test(await status()), "without a key the page asks for one: " + (await status()));
  check((await page.$$("table.namespaces tr[data-ns]")).length === 0, "without a key no namespace shows");

  // ---- namespaces ----
  await useKey(adminKey);
  const nsList = (await (await fetch(url + "/v1/namespaces", { headers: { Authorization: "Bearer " + adminKey } })).json())
    .namespaces.map((n) => n.ns);
  const shown = await texts("table.namespaces td[data-col=ns]");
  check(JSON.stringify(shown) === JSON.stringify(nsList), "namespaces view lists " + nsList.join(", ") + " (shows " + shown.join(", ") + ")");
  for (const ns of nsList) {
    const s = await api(adminKey, "stats", { ns });
    const row = await page.$eval(`tr[data-ns="${ns}"]`, (tr) => Object.fromEntries([...tr.cells].map((c) => [c.dataset.col, c.textContent])));
    check(row.memories === String(s.memories), `${ns}: ${s.memories} memories (shows ${row.memories})`);
    const kinds = Object.entries(s.by_kind).map(([k, v]) => k + " " + v).join(", ");
    check(row.by_kind === kinds, `${ns}: by kind "${kinds}" (shows "${row.by_kind}")`);
    check(row.pending === String(s.pending_embeddings), `${ns}: pending embeddings ${s.pending_embeddings}`);
    check(row.bytes === (s.cache ? String(s.cache.bytes) : "not loaded"), `${ns}: bytes in memory ${row.bytes}`);
  }
  check(await page.$eval("#tiers-chart", (c) => !!window.Chart && !!window.Chart.getChart(c)), "the tier chart is drawn by Chart.js");
  await shot("namespaces");

  // ---- timeline: pages of 50, the filter ----
  const ns = otherNs;
  const total = (await api(adminKey, "memory.list", { ns, limit: 1000 })).memories.length;
  await open(`#/timeline?ns=${encodeURIComponent(ns)}`);
  let rows = (await page.$$("table.timeline tbody tr")).length;
  check(rows === Math.min(50, total), `timeline page 1 has ${Math.min(50, total)} rows (shows ${rows})`);
  const first = await api(adminKey, "memory.list", { ns, order: "created", desc: true, limit: 50 });
  const ids1 = await page.$$eval("table.timeline tbody tr", (trs) => trs.map((t) => t.dataset.id));
  check(JSON.stringify(ids1) === JSON.stringify(first.memories.map((m) => m.id)), "timeline page 1 is memory.list's first page, newest first");
  await shot("timeline");
  await page.evaluate(() => { document.body.dataset.ready = ""; });
  await page.click("#next");
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 15000 });
  rows = (await page.$$("table.timeline tbody tr")).length;
  check(rows === total - 50, `timeline page 2 has the other ${total - 50} rows (shows ${rows})`);
  check((await texts("#page"))[0] === "page 2", "the pager says page 2");
  const refl = (await api(adminKey, "stats", { ns })).by_kind.reflection;
  await open(`#/timeline?ns=${encodeURIComponent(ns)}&kinds=reflection`);
  const kinds = await texts("table.timeline td[data-col=kind]");
  check(kinds.length === refl && kinds.every((k) => k === "reflection"), `kinds=reflection shows the ${refl} reflections (shows ${kinds.length})`);
  await open(`#/timeline?ns=${encodeURIComponent(ns)}&filter=${encodeURIComponent('{"metadata.room":"kitchen"}')}`);
  const kitchen = await api(adminKey, "memory.list", { ns, filter: { "metadata.room": "kitchen" }, limit: 100 });
  rows = (await page.$$("table.timeline tbody tr")).length;
  check(rows === kitchen.memories.length && rows > 0, `the filter language: ${kitchen.memories.length} kitchen memories (shows ${rows})`);

  // ---- a memory: history and links both ways ----
  const reflection = (await api(adminKey, "memory.list", { ns, kinds: ["reflection"], limit: 1 })).memories[0];
  await open(`#/memory?ns=${encodeURIComponent(ns)}&id=${reflection.id}`);
  const linksTo = await page.$$eval("table.links-to tbody tr", (trs) => trs.map((t) => t.dataset.id));
  check(JSON.stringify(linksTo) === JSON.stringify(reflection.links), `the reflection links to its ${reflection.links.length} evidence memories`);
  const evidence = reflection.links[0];
  await open(`#/memory?ns=${encodeURIComponent(ns)}&id=${evidence}`);
  const from = await page.$$eval("table.linked-from tbody tr", (trs) => trs.map((t) => t.dataset.id));
  check(from.includes(reflection.id), "its evidence shows the reflection under linked from");
  const hist = await api(adminKey, "memory.history", { ns, id: evidence });
  const ops = await page.$$eval("table.history tbody tr", (trs) => trs.map((t) => t.dataset.op));
  check(JSON.stringify(ops) === JSON.stringify(hist.history.map((h) => h.op)) && ops.length >= 2,
    "the memory's history: " + ops.join(", "));
  check((await texts("[data-field=text]"))[0] === (await api(adminKey, "memory.get", { ns, id: evidence })).memory.text, "the memory's text");
  await shot("memory");

  // ---- recall explained ----
  await open(`#/recall?ns=${encodeURIComponent(ns)}&query=kettle%20kitchen&profile=default&k=3`);
  const expl = await api(adminKey, "recall.explain", { ns: [ns], query: "kettle kitchen", profile: "default", k: 3, near: 5 });
  const hits = await page.$$eval("table.hits tr.hit", (trs) => trs.map((t) => ({ id: t.dataset.id, score: Number(t.dataset.score),
    parts: [...t.querySelectorAll("[data-part]")].map((s) => Number(s.dataset.value)),
    widths: [...t.querySelectorAll("[data-part]")].map((s) => parseFloat(s.style.width)) })));
  check(hits.length === 3, `recall shows 3 hits (shows ${hits.length})`);
  check(JSON.stringify(hits.map((h) => h.id)) === JSON.stringify(expl.hits.map((h) => h.id)), "the hits in recall.explain's order");
  for (const h of hits) {
    const sum = h.parts.reduce((a, b) => a + b, 0);
    check(h.parts.length === 5 && Math.abs(sum - h.score) < 1e-5, `hit ${h.id}: bars sum to ${sum.toFixed(6)}, the score ${h.score}`);
    const w = h.widths.reduce((a, b) => a + b, 0);
    check(Math.abs(w - 100) < 0.01, `hit ${h.id}: the bar's parts fill it (${w.toFixed(3)}%)`);
  }
  const near = (await page.$$("table.near-misses tr.hit")).length;
  check(near === expl.near_misses.length && near > 0, `${expl.near_misses.length} near misses shown (shows ${near})`);
  check((await texts("#formula"))[0] === expl.formula, "the profile's formula: " + expl.formula);
  await shot("recall");

  // ---- lessons ----
  const lessons = (await api(adminKey, "lesson.list", { ns })).lessons;
  await open(`#/lessons?ns=${encodeURIComponent(ns)}`);
  for (const l of lessons) {
    const card = await page.$eval(`[data-lesson="${l.lesson_id}"]`, (c) => ({ status: c.closest("[data-status]").dataset.status,
      utility: c.querySelector("[data-field=utility]").textContent, runs: c.querySelector("[data-field=runs]").textContent }));
    check(card.status === l.status, `lesson ${l.lesson_id} in the ${l.status} column`);
    check(card.utility === (l.utility === null ? "–" : l.utility.toFixed(3)) && card.runs === String((l.relevant_runs || {}).with ?? ""),
      `lesson ${l.lesson_id}: utility ${card.utility}, runs ${card.runs}`);
  }
  const summary = (await api(adminKey, "timeline", { ns, view: "summary" })).summary;
  const cells = await texts("table.run-summary td");
  check(cells[0] === String(summary.runs) && cells[1] === String(summary.passed), `the runs' summary: ${summary.runs} runs, ${summary.passed} passed`);
  await open(`#/lessons?ns=${encodeURIComponent(ns)}&run=run-2`);
  const runText = (await api(adminKey, "timeline", { ns, run: "run-2", view: "attempts" })).text;
  check((await page.$eval("#run pre", (p) => p.textContent)) === runText, "a run's timeline");
  await shot("lessons");

  // ---- maintenance ----
  await open(`#/maintenance?ns=${encodeURIComponent(ns)}`);
  const st = await api(adminKey, "stats", { ns });
  check((await texts("[data-field=pending]"))[0] === String(st.pending_embeddings), `pending embeddings: ${st.pending_embeddings}`);
  const ar = await api(adminKey, "archive.list", { ns });
  const arRows = (await page.$$("table.archive tbody tr")).length;
  check(arRows === ar.files.length && arRows > 0, `archive files: ${ar.files.length} (shows ${arRows})`);
  const reports = (await api(adminKey, "prune.reports", { ns, limit: 5 })).reports;
  const repRows = await page.$$eval("table.prune-reports tbody tr", (trs) => trs.map((t) => t.dataset.report));
  check(JSON.stringify(repRows) === JSON.stringify(reports.map((r) => r.report)) && repRows.length > 0,
    `the last prune reports: ${reports.length} (shows ${repRows.length})`);
  const cached = Number((await texts("table.cache [data-field=namespaces]"))[0]);
  check(cached >= 1, `the cache holds ${cached} namespaces`);
  const llm = await page.$$eval("table.llm tbody tr", (trs) => trs.map((t) => t.cells[0].textContent));
  check(llm.some((m) => m.startsWith("remem_llm_input_tokens")), "LLM token counts: " + llm.join(" "));
  await shot("maintenance");

  // ---- the namespaces view again: the recalls above loaded one ----
  await open("#/namespaces");
  const loaded = await api(adminKey, "stats", { ns });
  const bytes = await page.$eval(`tr[data-ns="${ns}"] td[data-col=bytes]`, (td) => td.textContent);
  check(loaded.cache && bytes === String(loaded.cache.bytes), `${ns}: ${bytes} bytes in memory once loaded`);

  // ---- a read key scoped to one namespace sees no other ----
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(url + "/ui#/namespaces", { waitUntil: "load" });
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 15000 });
  await useKey(scopedKey);
  const seen = await texts("table.namespaces td[data-col=ns]");
  check(JSON.stringify(seen) === JSON.stringify([scopedNs]), `the scoped key sees only ${scopedNs} (sees ${seen.join(", ")})`);
  const options = await page.$$eval("#view", (v) => v.map((x) => x.textContent));
  check(!options.join().includes(otherNs), `${otherNs} appears nowhere on its page`);
  await open(`#/timeline?ns=${encodeURIComponent(otherNs)}`);
  check((await page.$$("table.timeline tbody tr")).length === 0 && /403|may not|not allowed|forbidden/i.test(await status()),
    `asking for ${otherNs} by hand is refused: ${await status()}`);
  await open(`#/maintenance?ns=${encodeURIComponent(scopedNs)}`);
  check((await page.$$("#cache-refused")).length === 1, "the store-wide cache figures are refused to the scoped key");
  await open(`#/recall?ns=${encodeURIComponent(otherNs)}&query=kettle&profile=default&k=3`);
  check((await page.$$("table.hits tr.hit")).length === 0, `no recall over ${otherNs} with the scoped key`);
} catch (e) {
  console.log("FAIL: " + e.stack);
  fails++;
} finally {
  await browser.close();
}
process.exit(fails ? 1 : 0);
