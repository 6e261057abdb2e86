// server.mjs: what the tests share: a real `remem serve` started on a free
// loopback port with a fresh SQLite store in a temporary folder, and
// stopped (SIGTERM) after. The binary is $REMEM_BIN (set by
// tests/e2e/typescript_client.sh), else the repository's build/remem.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const REMEM_BIN = process.env.REMEM_BIN || join(here, "..", "..", "..", "build", "remem");
/** Why the tests cannot run here, or false (node --test then skips them). */
export const SKIP = existsSync(REMEM_BIN) ? false : `no remem binary at ${REMEM_BIN} (set REMEM_BIN)`;

/** Start `remem serve`. opts.config: a remem.yaml text; opts.keys: a keys
 * file's JSON object; opts.env: extra environment. Resolves to
 * {url, dir, stop()}. */
export async function startServer(opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), "remem-ts-"));
  const args = ["--db", join(dir, "store.db"), "--embedder", "hash"];
  if (opts.config) {
    writeFileSync(join(dir, "remem.yaml"), opts.config);
    args.push("--config", join(dir, "remem.yaml"));
  }
  args.push("serve", "--listen", "127.0.0.1:0");
  if (opts.keys) {
    writeFileSync(join(dir, "keys.json"), JSON.stringify(opts.keys));
    args.push("--keys", join(dir, "keys.json"));
  }
  const env = { ...process.env, HOME: dir, ...(opts.env || {}) };
  delete env.REMEM_DB;
  delete env.REMEM_CONFIG;
  const proc = spawn(REMEM_BIN, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("remem serve did not start: " + out + stderr)), 30000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`remem serve exited (${code}): ${stderr}`));
    });
  });
  proc.stdout.resume();
  return {
    url,
    dir,
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode === null) {
        const done = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await done;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The keys-file entry of a secret, as `remem serve --hash-key` prints it. */
export async function keyEntry(secret, extra = []) {
  const proc = spawn(REMEM_BIN, ["serve", "--hash-key", secret, ...extra], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout.on("data", (d) => (out += d));
  await new Promise((r) => proc.on("exit", r));
  return JSON.parse(out);
}
