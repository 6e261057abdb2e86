// client.ts: RememClient, the HTTP client of `remem serve` (docs/server.md):
// every operation of remem's table as a typed method (generated into
// src/generated/operations.ts from docs/openapi.json), sent as
// POST /v1/<operation> with the arguments as the JSON body and the API key
// as a bearer token. An error answer ({"error":{"code","message"}}) is
// thrown as a RememError carrying the server's code, message and HTTP
// status. No runtime dependency: Node 18's global fetch.
import { type Answer, type OperationName, OperationsClient } from "./generated/operations.js";

/** How to reach the server. */
export interface RememClientOptions {
  /** The server's base URL (default http://127.0.0.1:8077, `remem serve`'s). */
  baseUrl?: string;
  /** An API key of the server's --keys file, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Time limit of one request in ms (default 60000). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

/** An error answer of the server, or a failure to reach it (code REMEM_ENETWORK). */
export class RememError extends Error {
  /** The server's code: a REMEM_E* status name (REMEM_EINVAL, REMEM_EAUTH, ...). */
  readonly code: string;
  /** The HTTP status (0 when the server could not be reached). */
  readonly status: number;
  /** Batch adds only: the memory at fault. */
  readonly index?: number;

  constructor(code: string, message: string, status: number, index?: number) {
    super(message);
    this.name = "RememError";
    this.code = code;
    this.status = status;
    if (index !== undefined) this.index = index;
  }
}

/** The client of one `remem serve`. */
export class RememClient extends OperationsClient {
  readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: RememClientOptions = {}) {
    super();
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8077").replace(/\/+$/, "");
    if (options.apiKey) this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 60000;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof this.fetchFn !== "function")
      throw new Error("RememClient needs a global fetch (Node 18 or later) or options.fetch");
  }

  /** Run an operation by name (what every typed method calls). */
  async call<T = Answer>(operation: OperationName, args: object): Promise<T> {
    const path = "/v1/" + operation.replaceAll(".", "/");
    return (await this.request("POST", path, args)) as T;
  }

  /** GET /healthz: {"status":"ok",...} while the server runs. */
  async health(): Promise<Answer> {
    return (await this.request("GET", "/healthz")) as Answer;
  }

  /** GET /v1/operations: the operations this key may run, with their schemas. */
  async operations(): Promise<Answer> {
    return (await this.request("GET", "/v1/operations")) as Answer;
  }

  private async request(method: string, path: string, body?: object): Promise<unknown> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.apiKey) headers["Authorization"] = `Bearer ${this.apiKey}`;
    let res: Response;
    try {
      res = await this.fetchFn(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new RememError("REMEM_ENETWORK", `${method} ${this.baseUrl}${path}: ${why}`, 0);
    }
    const text = await res.text();
    let data: unknown = undefined;
    try {
      data = text ? JSON.parse(text) : {};
    } catch {
      if (res.ok) throw new RememError("REMEM_EPROTO", `${path}: the answer is not JSON`, res.status);
    }
    if (!res.ok) {
      const err = (data as { error?: { code?: string; message?: string; index?: number } })?.error;
      throw new RememError(
        err?.code ?? `HTTP_${res.status}`,
        err?.message ?? (text.trim() || res.statusText),
        res.status,
        err?.index,
      );
    }
    return data;
  }
}
