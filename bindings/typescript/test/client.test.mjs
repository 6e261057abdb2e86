// client.test.mjs: RememClient against a real `remem serve` (test/server.mjs):
// every operation of the table is a method, calls reach the server and
// come back as its answers, errors come back as RememError with the
// server's code, message and status, the API key is sent, and the
// generated file is what docs/openapi.json gives.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RememClient, RememError, OPERATIONS } from "../dist/index.js";
import { SKIP, startServer, keyEntry } from "./server.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
let srv, client;
before(async () => {
  if (SKIP) return;
  srv = await startServer();
  client = new RememClient({ baseUrl: srv.url });
});
after(async () => srv && (await srv.stop()));

test("the generated operations are up to date with docs/openapi.json", () => {
  const out = execFileSync(process.execPath, [join(pkg, "scripts", "generate.mjs"), "--check"], {
    encoding: "utf8",
  });
  assert.match(out, /up to date/);
});

test("every operation of the server is a typed method", { skip: SKIP }, async () => {
  const listed = await client.operations();
  const names = (listed.operations ?? []).map((o) => o.name);
  assert.ok(names.length > 10, "GET /v1/operations lists the operations");
  for (const name of names) {
    assert.ok(OPERATIONS.includes(name), `${name} is in the generated table`);
    const method = name.replace(/[._]([a-z0-9])/g, (_, c) => c.toUpperCase());
    assert.equal(typeof client[method], "function", `RememClient.${method}`);
  }
});

test("a write and a recall go through", { skip: SKIP }, async () => {
  const added = await client.memoryAdd({ ns: "agent:ada", text: "the kettle is in the left cupboard" });
  assert.equal(added.outcome, "added");
  assert.equal(typeof added.id, "string");
  const got = await client.memoryGet({ ns: "agent:ada", id: added.id });
  assert.equal(got.memory.text, "the kettle is in the left cupboard");
  const r = await client.recall({ ns: "agent:ada", query: "where is the kettle?" });
  assert.equal(r.hits?.[0]?.id ?? r.memories?.[0]?.id, added.id);
  const health = await client.health();
  assert.equal(health.status, "ok");
});

test("a refused call is a RememError with the server's code and message", { skip: SKIP }, async () => {
  await assert.rejects(
    client.episodeAdd({
      ns: "c",
      prompt: "p",
      output: "o",
      meta: { taskID: "t", projectID: "p", generationOutcome: "great" },
    }),
    (e) => {
      assert.ok(e instanceof RememError);
      assert.equal(e.code, "REMEM_EINVAL");
      assert.equal(e.status, 400);
      assert.match(e.message, /generationOutcome/);
      return true;
    },
  );
  // nothing was written
  const l = await client.memoryList({ ns: "c" });
  assert.equal(l.count, 0);
  await assert.rejects(client.memoryGet({ ns: "c", id: "nope" }), (e) => {
    assert.equal(e.code, "REMEM_ENOTFOUND");
    assert.equal(e.status, 404);
    return true;
  });
});

test("a server that is not there is a RememError too", async () => {
  const c = new RememClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 3000 });
  await assert.rejects(c.stats(), (e) => e instanceof RememError && e.code === "REMEM_ENETWORK" && e.status === 0);
});

test("the API key is sent as a bearer token", { skip: SKIP }, async () => {
  const entry = await keyEntry("s3cret-key", ["--name", "t", "--rights", "read,write,embed,admin"]);
  const keyed = await startServer({ keys: { keys: [entry] } });
  try {
    const anon = new RememClient({ baseUrl: keyed.url });
    await assert.rejects(anon.memoryList({ ns: "x" }), (e) => e.code === "REMEM_EAUTH" && e.status === 401);
    const wrong = new RememClient({ baseUrl: keyed.url, apiKey: "not-the-key" });
    await assert.rejects(wrong.memoryList({ ns: "x" }), (e) => e.code === "REMEM_EAUTH");
    const c = new RememClient({ baseUrl: keyed.url, apiKey: "s3cret-key" });
    const l = await c.memoryList({ ns: "x" });
    assert.equal(l.count, 0);
  } finally {
    await keyed.stop();
  }
});
