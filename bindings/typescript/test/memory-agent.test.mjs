// memory-agent.test.mjs: seed 003's MemoryAgent on a real `remem serve`,
// the seed document's interfaces, configuration and workflows as tests:
// the interfaces are the seed's (a type-level test), the seed's
// `memoryAgent` block is accepted as written and its defaults apply,
// episodes are stored with the id projectID_taskID_timestamp, duplicates
// update the stored episode, retrieval is strictly per project (failure
// mode 6), filters by language and minSimilarity, logs too few matches
// (mode 3) and gives a summary per episode, prune and retention give the
// seed's PruneReport, and a store past maxEpisodesPerProject prunes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MemoryAgent, RememClient, DEFAULT_MEMORY_AGENT_CONFIG } from "../dist/index.js";
import { SKIP, startServer } from "./server.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");

// The seed's configuration block, verbatim (JSON with trailing commas).
const SEED_CONFIG = `{
  "memoryAgent": {
    "maxEpisodesPerProject": 1000,
    "similarityThreshold": 0.7,
    "embeddingModel": "openai-ada-002",
    "summarizationStrategy": "llm",
    "pruneIntervalHours": 24,
    "retentionDays": 90,
    "archiveLocation": "~/.nootropic/archive/",
    "feedbackWeightFactor": 1.5,
  },
}
`;
const jsonc = (t) => JSON.parse(t.replace(/,(\s*[}\]])/g, "$1"));

const DAY = 86400000;
const iso = (ms) => new Date(ms).toISOString();

function meta(projectID, taskID, extra = {}) {
  return {
    taskID,
    timestamp: iso(Date.now() - 60000),
    modelUsed: "qwen2.5-coder",
    tokensIn: 812,
    tokensOut: 64,
    generationOutcome: "accepted",
    language: "python",
    projectID,
    filesChanged: ["io/load.py"],
    ...extra,
  };
}

let srv;
let n = 0;
const agentOn = (config, log) =>
  new MemoryAgent({ baseUrl: srv.url, namespace: `coder${++n}`, config, log: log ?? (() => {}) });

before(async () => {
  if (SKIP) return;
  srv = await startServer();
});
after(async () => srv && (await srv.stop()));

test("the package's interfaces are the seed's, exactly", () => {
  const tsc = join(pkg, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", join(pkg, "test", "types", "tsconfig.json")], {
    stdio: "pipe",
  });
});

test("the seed's configuration block: accepted as written, its defaults apply", { skip: SKIP }, async () => {
  // a server configured with the seed's block, verbatim
  const s = await startServer({ config: SEED_CONFIG });
  try {
    const c = new RememClient({ baseUrl: s.url });
    const sched = await c.maintainSchedule();
    assert.equal(sched.pruneIntervalHours, 24);
  } finally {
    await s.stop();
  }
  // a block that omits them: the seed's 1000 episodes, 90 days, 24 hours
  const s2 = await startServer({ config: '{"memoryAgent": {"similarityThreshold": 0.8}}\n' });
  try {
    const sched = await new RememClient({ baseUrl: s2.url }).maintainSchedule();
    assert.equal(sched.pruneIntervalHours, 24);
  } finally {
    await s2.stop();
  }
  // the agent's own config: the block as given, the seed's defaults for the rest
  const given = jsonc(SEED_CONFIG).memoryAgent;
  assert.deepEqual({ ...new MemoryAgent({ config: given }).config }, given);
  // an agent with the seed's block verbatim runs against the server
  // (archiveLocation, a path of the server's machine, is never sent)
  const seeded = new MemoryAgent({ baseUrl: srv.url, namespace: "seeded", config: given });
  await seeded.storeEpisode("parse a CSV file into rows", "rows = list(csv.reader(f))", meta("acme", "T-1"));
  const rep = await seeded.prune({ dryRun: true });
  assert.deepEqual(rep.episodesRemoved, []);
  const dflt = new MemoryAgent({}).config;
  assert.equal(dflt.maxEpisodesPerProject, 1000);
  assert.equal(dflt.retentionDays, 90);
  assert.equal(dflt.pruneIntervalHours, 24);
  assert.equal(dflt.similarityThreshold, 0.7);
  assert.equal(dflt.feedbackWeightFactor, 1.5);
  assert.equal(dflt.summarizationStrategy, "llm");
  assert.deepEqual(DEFAULT_MEMORY_AGENT_CONFIG, dflt);
});

test("storing completed episodes: id, metadata, duplicates", { skip: SKIP }, async () => {
  const agent = agentOn();
  const ts = Date.UTC(2026, 0, 2, 3, 4, 5);
  const md = meta("acme", "T-42", { timestamp: iso(ts) });
  const stored = await agent.storeEpisode("parse a CSV file into rows", "rows = list(csv.reader(f))", md);
  assert.equal(stored.id, `acme_T-42_${ts}`); // projectID_taskID_timestamp
  assert.equal(stored.outcome, "added");
  assert.deepEqual(stored.metadata, { ...md, timestamp: "2026-01-02T03:04:05.000Z" });
  assert.equal(stored.prompt, "parse a CSV file into rows");
  assert.equal(stored.output, "rows = list(csv.reader(f))");
  // the same pair again: timestamp and metadata updated, duplicateCount + 1
  const again = await agent.storeEpisode("parse a CSV file into rows", "rows = list(csv.reader(f))", {
    ...md,
    taskID: "T-43",
    timestamp: iso(ts + DAY),
    generationOutcome: "fixed",
  });
  assert.equal(again.outcome, "duplicate");
  assert.equal(again.id, stored.id);
  assert.equal(again.duplicateCount, 1);
  assert.equal(again.metadata.generationOutcome, "fixed");
  assert.equal(again.metadata.timestamp, iso(ts + DAY));
  const got = await agent.getEpisode(stored.id);
  assert.equal(got.metadata.taskID, "T-43");
  assert.equal(await agent.getEpisode("acme_nothing_1"), null);
});

test("cross-project pollution: strict projectID filtering", { skip: SKIP }, async () => {
  const agent = agentOn();
  const a = await agent.storeEpisode("sort a list of numbers", "sorted(xs)", meta("acme", "t1"));
  // the same prompt/output in another project is that project's own episode
  const b = await agent.storeEpisode("sort a list of numbers", "sorted(xs)", meta("beta", "t2"));
  assert.equal(b.outcome, "added");
  assert.notEqual(b.id, a.id);
  assert.match(b.id, /^beta_t2_/);
  const q = { queryPrompt: "sort a list of numbers", maxResults: 5, minSimilarity: 0 };
  const acme = await agent.retrieveEpisodes({ ...q, projectID: "acme" });
  assert.deepEqual(acme.map((e) => e.id), [a.id]);
  const beta = await agent.retrieveEpisodes({ ...q, projectID: "beta" });
  assert.deepEqual(beta.map((e) => e.id), [b.id]);
  // without a projectID the retrieval is cross-project
  const all = await agent.retrieveEpisodes(q);
  assert.deepEqual(all.map((e) => e.id).sort(), [a.id, b.id].sort());
});

test("few-shot retrieval: filters, threshold, order, summaries, too few matches logged", { skip: SKIP }, async () => {
  const events = [];
  const agent = agentOn({}, (e) => events.push(e));
  await agent.storeEpisode("parse a csv file into rows", "csv.reader(f)", meta("alpha", "a1"));
  await agent.storeEpisode("parse a csv file into records", "csv.NewReader(f)", meta("alpha", "a2", { language: "go" }));
  await agent.storeEpisode("send an email with smtp", "smtplib.SMTP(host)", meta("alpha", "a3"));
  const q = { queryPrompt: "parse a csv file", projectID: "alpha", maxResults: 3, minSimilarity: 0 };
  const eps = await agent.retrieveEpisodes(q);
  assert.ok(eps.length >= 2);
  for (let i = 1; i < eps.length; i++) assert.ok(eps[i - 1].similarity >= eps[i].similarity, "sorted by similarity");
  for (const e of eps) {
    assert.equal(typeof e.summary, "string");
    assert.ok(e.summary.startsWith(e.prompt), e.summary);
    assert.equal(e.metadata.projectID, "alpha");
  }
  const go = await agent.retrieveEpisodes({ ...q, languageFilter: "go" });
  assert.deepEqual(go.map((e) => e.metadata.language), ["go"]);
  // a threshold only some pass: only those, and the event is logged
  const before = events.length;
  const strict = await agent.retrieveEpisodes({ ...q, maxResults: 3, minSimilarity: 0.99 });
  assert.ok(strict.every((e) => e.similarity >= 0.99));
  assert.equal(events.length, before + 1);
  assert.equal(events.at(-1).event, "too_few_matches");
  assert.equal(events.at(-1).numResults, strict.length);
  assert.match(events.at(-1).message, /too few matches/);
});

test("feedback weighs retrieval by feedbackWeightFactor", { skip: SKIP }, async () => {
  const agent = agentOn({ feedbackWeightFactor: 2 });
  const e = await agent.storeEpisode("read a json file", "json.load(f)", meta("p", "f1"));
  await agent.recordFeedback(e.id, 1);
  const [r] = await agent.retrieveEpisodes({ queryPrompt: "read a json file", projectID: "p", maxResults: 1, minSimilarity: 0 });
  assert.equal(r.id, e.id);
  assert.ok(Math.abs(r.score - 2 * r.similarity) < 1e-9, `${r.score} vs ${r.similarity}`);
  await assert.rejects(agent.recordFeedback(e.id, 3), /feedback/);
});

test("summarization & pruning, aging & retention: the seed's PruneReport", { skip: SKIP }, async () => {
  const agent = agentOn({ maxEpisodesPerProject: 2, retentionDays: 30, summarizationStrategy: "none" });
  const now = Date.now();
  const old = await agent.storeEpisode("an old prompt", "an old output", meta("q", "o1", { timestamp: iso(now - 40 * DAY) }));
  const dry = await agent.enforceRetention({ dryRun: true });
  assert.deepEqual(Object.keys(dry).sort(), ["clustersCreated", "durationMs", "episodesArchived", "episodesRemoved", "timestamp"]);
  assert.deepEqual(dry.episodesRemoved, [old.id]);
  assert.ok(await agent.getEpisode(old.id), "a dry run changes nothing");
  const rep = await agent.prune();
  assert.deepEqual(rep.episodesRemoved, [old.id]);
  assert.deepEqual(rep.episodesArchived, rep.episodesRemoved);
  assert.equal(rep.clustersCreated, 0);
  assert.equal(typeof rep.durationMs, "number");
  assert.ok(!Number.isNaN(Date.parse(rep.timestamp)));
  assert.equal(await agent.getEpisode(old.id), null);
  // the count: a store that takes a project past maxEpisodesPerProject prunes its oldest
  const ids = [];
  for (let i = 1; i <= 3; i++) {
    const s = await agent.storeEpisode(`prompt number ${i}`, `output number ${i}`, meta("r", `r${i}`, { timestamp: iso(now - (10 - i) * 60000) }));
    ids.push(s.id);
    if (i < 3) assert.equal(s.prune, undefined);
    else assert.deepEqual(s.prune.episodesRemoved, [ids[0]]);
  }
  const left = await agent.retrieveEpisodes({ queryPrompt: "prompt number", projectID: "r", maxResults: 10, minSimilarity: -1 });
  assert.deepEqual(left.map((e) => e.id).sort(), ids.slice(1).sort());
});
