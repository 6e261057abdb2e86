// client.mjs: drives remem's MCP server with the official MCP TypeScript SDK
// client, the way an agent framework would, over either transport:
//
//   node client.mjs stdio REMEM_BIN DB_PATH   spawns `REMEM_BIN mcp --db DB_PATH`
//   node client.mjs http URL                  connects to URL (.../mcp)
//
// It lists the tools and checks their schemas, remembers three memories,
// recalls and checks which comes first, filters, updates, invalidates,
// forgets, lists namespaces, and checks that a malformed filter and an
// unknown tool fail the way the MCP spec says. The SDK validates every
// response against the protocol's schemas and every structuredContent
// against the tool's outputSchema, so a protocol mistake fails here too.
// Prints one line per check; exits 1 on the first failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, target, dbPath] = process.argv.slice(2);
let checks = 0;

function check(cond, what, detail) {
  checks++;
  if (!cond) {
    console.error(`not ok ${checks} - ${what}`);
    if (detail !== undefined) console.error('  ' + JSON.stringify(detail, null, 1).slice(0, 2000));
    process.exit(1);
  }
  console.log(`ok ${checks} - ${what}`);
}

function text(result) {
  return (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

async function main() {
  let transport;
  if (mode === 'stdio') {
    transport = new StdioClientTransport({
      command: target,
      args: ['mcp', '--db', dbPath, '--tools', 'memory'],
      stderr: 'inherit',
    });
  } else if (mode === 'http') {
    transport = new StreamableHTTPClientTransport(new URL(target));
  } else {
    console.error('usage: node client.mjs stdio REMEM_BIN DB | http URL');
    process.exit(2);
  }

  const client = new Client({ name: 'remem-e2e', version: '1.0.0' });
  await client.connect(transport);
  const info = client.getServerVersion();
  check(info?.name === 'remem', 'server says it is remem', info);
  check(typeof info?.version === 'string' && info.version.length > 0, 'server has a version');
  check(client.getServerCapabilities()?.tools !== undefined, 'server offers tools');
  check((client.getInstructions() ?? '').includes('recall'), 'server gives instructions for models');

  // Tools and their schemas.
  const { tools } = await client.listTools();
  const names = tools.map(t => t.name).sort();
  // The server runs with --tools memory: the core tools and the memory group.
  const want = ['context', 'memory_add', 'memory_forget', 'memory_get', 'memory_invalidate', 'memory_list', 'memory_update',
                'namespaces', 'recall'];
  check(want.every(n => names.includes(n)), 'tools/list names the memory tools', names);
  check(!names.includes('get') && !names.includes('remember') && !names.includes('repair') && !names.includes('decision_add'),
        'one get, one add, and no tool of a group not asked for', names);
  check(names.every(n => /^[a-z][a-z0-9_]*$/.test(n)), 'tool names are identifiers', names);
  for (const t of tools) {
    check(t.inputSchema?.type === 'object' && typeof t.inputSchema.properties === 'object',
          `${t.name} has an input schema`);
    check(typeof t.description === 'string' && t.description.length > 30 && !/seed/i.test(t.description),
          `${t.name} has a description for a model`);
    check(typeof t.annotations?.readOnlyHint === 'boolean' && t.annotations.openWorldHint === false,
          `${t.name} has annotations`);
  }
  const byName = Object.fromEntries(tools.map(t => [t.name, t]));
  check(JSON.stringify(byName.memory_add.inputSchema.required) === '["ns","text"]', 'memory_add requires ns and text');
  check(byName.recall.annotations.readOnlyHint === true && byName.memory_forget.annotations.destructiveHint === true &&
        byName.memory_add.annotations.destructiveHint === false, 'the annotations say what each tool does');

  // Remember.
  const ns = 'agent:e2e';
  const mem = {};
  const facts = {
    tea: ['The user drinks green tea every morning and never coffee', { topic: 'drinks' }, 0.4],
    deploy: ['Production deploys happen on Tuesdays after the standup', { topic: 'ops' }, 0.9],
    password: ['The staging database password rotates every thirty days', { topic: 'ops' }, 0.6],
  };
  for (const [key, [t, metadata, importance]] of Object.entries(facts)) {
    const r = await call(client, 'memory_add', { ns, text: t, metadata, importance });
    check(!r.isError && typeof r.structuredContent?.id === 'string', `memory_add ${key}`, r);
    check(r.structuredContent.outcome === 'added', `${key} was added`, r.structuredContent);
    mem[key] = r.structuredContent.id;
  }
  const dup = await call(client, 'memory_add', { ns, text: facts.tea[0] });
  check(dup.structuredContent?.outcome === 'duplicate' && dup.structuredContent.id === mem.tea,
        'the same text again is a duplicate of the first', dup.structuredContent);

  // Recall: the tea memory answers a drinks question.
  let r = await call(client, 'recall', { query: 'what does the user drink in the morning? green tea or coffee', ns, k: 3 });
  check(!r.isError, 'recall succeeds', r);
  const hits = r.structuredContent.hits;
  check(hits.length >= 1 && hits[0].id === mem.tea, 'the tea memory comes first', hits.map(h => [h.id, h.text, h.score]));
  check(typeof hits[0].score === 'number' && typeof hits[0].components?.relevance === 'number' &&
        typeof hits[0].components?.recency === 'number', 'hits carry their score components', hits[0]);
  check(text(r).includes('green tea') && text(r).includes('score'), 'the text rendering shows memory and score', text(r));

  // A filter narrows to ops memories.
  r = await call(client, 'recall', { query: 'when do production deploys happen', ns: [ns], filter: { topic: 'ops' } });
  const ids = r.structuredContent.hits.map(h => h.id);
  check(ids[0] === mem.deploy && !ids.includes(mem.tea), 'a metadata filter narrows the recall', ids);

  // Update.
  r = await call(client, 'memory_update', { ns, id: mem.tea, text: 'The user drinks jasmine green tea every morning', importance: 0.8 });
  check(!r.isError && r.structuredContent.outcome === 'updated' && r.structuredContent.id === mem.tea &&
        r.structuredContent.text === undefined, 'memory_update answers id and outcome, no content', r);
  r = await call(client, 'memory_get', { ns, id: mem.tea });
  check(r.structuredContent.memory.text.includes('jasmine'), 'update changes the text', r);
  check(Math.abs(r.structuredContent.memory.importance - 0.8) < 1e-9, 'update changes the importance', r.structuredContent);
  r = await call(client, 'recall', { query: 'jasmine tea', ns });
  check(r.structuredContent.hits[0]?.id === mem.tea, 'recall finds the updated text', r.structuredContent.hits);

  // Invalidate and forget take memories out of recall.
  r = await call(client, 'memory_invalidate', { ns, id: mem.password, reason: 'rotation policy changed' });
  check(!r.isError && r.structuredContent.outcome === 'invalidated', 'invalidate', r);
  r = await call(client, 'memory_forget', { ns, id: mem.deploy });
  check(!r.isError && r.structuredContent.outcome === 'archived' && r.structuredContent.purged === false, 'forget archives', r);
  r = await call(client, 'recall', { query: 'production deploys staging database password', ns });
  const left = r.structuredContent.hits.map(h => h.id);
  check(!left.includes(mem.deploy) && !left.includes(mem.password), 'forgotten and invalidated memories leave recall', left);
  r = await call(client, 'memory_get', { ns, id: mem.deploy });
  check(r.structuredContent?.memory?.tier === 'archived', 'an archived memory is still there', r);
  r = await call(client, 'memory_forget', { ns, id: mem.deploy, purge: true });
  check(!r.isError && r.structuredContent.purged === true, 'forget with purge', r);
  r = await call(client, 'memory_get', { ns, id: mem.deploy });
  check(r.isError === true && text(r).includes('REMEM_ENOTFOUND'), 'a purged memory is gone', r);

  // Namespaces.
  r = await call(client, 'namespaces', {});
  const listed = r.structuredContent.namespaces.map(n => n.ns);
  check(listed.includes(ns), 'namespaces shows the namespace', r.structuredContent);

  // Errors: a tool failure is a result with isError; an unknown tool is a
  // protocol error.
  r = await call(client, 'recall', { query: 'x', ns, filter: { kind: { $regexx: 'x' } } });
  check(r.isError === true && text(r).includes('$regexx'), 'a malformed filter is an isError result naming the fault', r);
  r = await call(client, 'memory_add', { ns, importance: 0.5 });
  check(r.isError === true && text(r).includes('text'), 'a missing argument is an isError result', r);
  let threw = null;
  try {
    await call(client, 'levitate', {});
  } catch (e) {
    threw = e;
  }
  check(threw !== null && threw.code === -32602, 'an unknown tool is a JSON-RPC error -32602', String(threw));
  await client.ping();
  check(true, 'ping');

  await client.close();
  console.log(`${checks} checks passed (${mode})`);
}

main().catch(e => {
  console.error('client failed:', e?.stack ?? e);
  process.exit(1);
});
