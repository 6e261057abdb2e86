// memory-agent.ts: seed 003's MemoryAgent (nootropic's episodic memory for
// coding agents) on remem serve, with the seed's interfaces exactly as the
// seed writes them (EpisodeMetadata, EpisodeRecord, RetrievalQuery,
// PruneReport) and its configuration keys (the `memoryAgent` block). It is
// a thin layer: every method is one operation of remem (episode.add,
// episode.recall, prune, memory.get, memory.update); the names and shapes
// are the seed's, the behaviour is remem's (docs/episodes.md,
// docs/maintenance.md, docs/compat-typescript.md).
import { RememClient, RememError, type RememClientOptions } from "./client.js";

// ---- seed 003's data structures, as the seed writes them ----

export interface EpisodeMetadata {
  taskID: string;
  timestamp: string;
  modelUsed: string;
  tokensIn: number;
  tokensOut: number;
  generationOutcome: "accepted" | "fixed" | "failed";
  language: string;
  projectID: string;
  filesChanged: string[];
}

export interface EpisodeRecord {
  id: string;
  prompt: string;
  output: string;
  metadata: EpisodeMetadata;
  embedding?: number[];
  summary?: string;
}

export interface RetrievalQuery {
  queryPrompt: string;
  projectID?: string;
  languageFilter?: string;
  maxResults: number;
  minSimilarity?: number;
}

export interface PruneReport {
  timestamp: string;
  episodesRemoved: string[];
  episodesArchived: string[];
  clustersCreated: number;
  durationMs: number;
}

// ---- the configuration: seed 003's `memoryAgent` block ----

/** The keys of seed 003's `memoryAgent` configuration block. */
export interface MemoryAgentConfig {
  maxEpisodesPerProject: number;
  similarityThreshold: number;
  embeddingModel?: string;
  summarizationStrategy: "none" | "heuristic" | "llm";
  pruneIntervalHours: number;
  retentionDays: number;
  archiveLocation?: string;
  feedbackWeightFactor: number;
}

/** Seed 003's defaults: what a config given to MemoryAgent omits. */
export const DEFAULT_MEMORY_AGENT_CONFIG: Readonly<MemoryAgentConfig> = Object.freeze({
  maxEpisodesPerProject: 1000,
  similarityThreshold: 0.7,
  summarizationStrategy: "llm",
  pruneIntervalHours: 24,
  retentionDays: 90,
  feedbackWeightFactor: 1.5,
});

/** What a retrieval returns per episode: the record, its similarity and
 * remem's additions (the score after the feedback weight, the duplicate
 * count). A pruned cluster comes back as its summary (kind "summary",
 * prompt and output empty, links naming its archived members). */
export interface RetrievedEpisode extends EpisodeRecord {
  similarity: number;
  score: number;
  duplicateCount: number;
  kind: "episode" | "summary";
  links?: string[];
}

/** What storeEpisode returns: the stored record and what became of it. */
export interface StoredEpisode extends EpisodeRecord {
  /** "added", or "duplicate" when the project already held this prompt/output. */
  outcome: string;
  duplicateCount: number;
  /** The retention run an add past maxEpisodesPerProject started, if any. */
  prune?: PruneReport;
}

/** An event the agent logs (seed 003: "too few matches: log event"). */
export interface MemoryAgentEvent {
  event: "too_few_matches";
  message: string;
  query: RetrievalQuery;
  numResults: number;
}

export interface MemoryAgentOptions extends RememClientOptions {
  /** A client to use (else one is made from baseUrl/apiKey). */
  client?: RememClient;
  /** The remem namespace the episodes live in (default "memoryAgent"). */
  namespace?: string;
  /** Seed 003's `memoryAgent` block; omitted keys take the seed's defaults. */
  config?: Partial<MemoryAgentConfig>;
  /** Where events go (default: console.warn of the message). */
  log?: (e: MemoryAgentEvent) => void;
}

type Json = Record<string, unknown>;

const str = (v: unknown, d = ""): string => (typeof v === "string" ? v : d);
const num = (v: unknown, d = 0): number => (typeof v === "number" ? v : d);

function toMetadata(m: Json | undefined): EpisodeMetadata {
  const o = m ?? {};
  const outcome = str(o.generationOutcome, "accepted");
  return {
    taskID: str(o.taskID),
    timestamp: str(o.timestamp),
    modelUsed: str(o.modelUsed),
    tokensIn: num(o.tokensIn),
    tokensOut: num(o.tokensOut),
    generationOutcome: (["accepted", "fixed", "failed"].includes(outcome)
      ? outcome
      : "accepted") as EpisodeMetadata["generationOutcome"],
    language: str(o.language),
    projectID: str(o.projectID),
    filesChanged: Array.isArray(o.filesChanged) ? o.filesChanged.map(String) : [],
  };
}

function toPruneReport(a: Json): PruneReport {
  const ids = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  return {
    timestamp: str(a.timestamp),
    episodesRemoved: ids(a.episodesRemoved),
    episodesArchived: ids(a.episodesArchived),
    clustersCreated: num(a.clustersCreated),
    durationMs: num(a.durationMs),
  };
}

/** Seed 003's MemoryAgent over a remem server. */
export class MemoryAgent {
  readonly client: RememClient;
  readonly namespace: string;
  readonly config: Readonly<MemoryAgentConfig>;
  private readonly log: (e: MemoryAgentEvent) => void;

  constructor(options: MemoryAgentOptions = {}) {
    this.client = options.client ?? new RememClient(options);
    this.namespace = options.namespace ?? "memoryAgent";
    this.config = Object.freeze({ ...DEFAULT_MEMORY_AGENT_CONFIG, ...(options.config ?? {}) });
    this.log = options.log ?? ((e) => console.warn(`MemoryAgent: ${e.message}`));
  }

  /** Store a completed episode (id projectID_taskID_timestamp). A prompt/
   * output pair the project already holds updates that episode (timestamp,
   * metadata, duplicateCount) instead of adding a second one. */
  async storeEpisode(
    prompt: string,
    output: string,
    metadata: Partial<EpisodeMetadata> & Pick<EpisodeMetadata, "taskID" | "projectID">,
  ): Promise<StoredEpisode> {
    const meta: Json = { ...metadata };
    if (!meta.timestamp) delete meta.timestamp; // the server's now
    const a = (await this.client.episodeAdd({
      ns: this.namespace,
      prompt,
      output,
      meta: meta as never,
      max_episodes_per_project: this.config.maxEpisodesPerProject,
      retention_days: this.config.retentionDays,
    })) as Json;
    const id = str(a.id);
    const stored = await this.getEpisode(id);
    const out: StoredEpisode = {
      ...(stored ?? { id, prompt, output, metadata: toMetadata(meta) }),
      outcome: str(a.outcome),
      duplicateCount: num(a.duplicateCount),
    };
    if (a.prune && typeof a.prune === "object") out.prune = toPruneReport(a.prune as Json);
    return out;
  }

  /** Few-shot retrieval: the episodes most similar to queryPrompt above
   * minSimilarity (default similarityThreshold), best first, at most
   * maxResults, strictly within projectID; a query without projectID asks
   * for cross-project retrieval. Too few matches return what passed and
   * are logged. */
  async retrieveEpisodes(query: RetrievalQuery): Promise<RetrievedEpisode[]> {
    const args: Json = {
      ns: this.namespace,
      query: query.queryPrompt,
      max: query.maxResults,
      min_similarity: query.minSimilarity ?? this.config.similarityThreshold,
      feedback_weight_factor: this.config.feedbackWeightFactor,
    };
    if (query.projectID !== undefined) args.project = query.projectID;
    else args.cross_project = true;
    if (query.languageFilter !== undefined) args.language = query.languageFilter;
    const a = (await this.client.episodeRecall(args as never)) as Json;
    const eps = (Array.isArray(a.episodes) ? a.episodes : []) as Json[];
    if (a.tooFewMatches === true)
      this.log({ event: "too_few_matches", message: str(a.text), query, numResults: eps.length });
    return eps.map((e) => {
      const r: RetrievedEpisode = {
        id: str(e.id),
        prompt: str(e.prompt),
        output: str(e.output),
        metadata: toMetadata(e.metadata as Json),
        similarity: num(e.similarity),
        score: num(e.score),
        duplicateCount: num(e.duplicateCount),
        kind: e.kind === "summary" ? "summary" : "episode",
      };
      if (typeof e.summary === "string") r.summary = e.summary;
      if (Array.isArray(e.links)) r.links = e.links.map(String);
      return r;
    });
  }

  /** Summarization & pruning: age (retentionDays), count per project
   * (maxEpisodesPerProject), clusters of near-duplicates (cosine >=
   * similarityThreshold) summarised by summarizationStrategy. Everything
   * removed is archived (episodesRemoved and episodesArchived name the
   * same ids); remem's `restore` brings it back. */
  async prune(options: { dryRun?: boolean } = {}): Promise<PruneReport> {
    return toPruneReport((await this.client.prune(this.policyArgs(options.dryRun))) as Json);
  }

  /** Aging & retention alone: the age and count rules, no clustering. */
  async enforceRetention(options: { dryRun?: boolean } = {}): Promise<PruneReport> {
    const args = { ...this.policyArgs(options.dryRun), strategy: "none" as const };
    return toPruneReport((await this.client.prune(args)) as Json);
  }

  /** Run prune every pruneIntervalHours until the returned function is
   * called (the timer does not keep the process alive); each report goes
   * to onReport. A failed run is skipped; the next one tries again. */
  schedulePruning(onReport?: (r: PruneReport) => void): () => void {
    const ms = this.config.pruneIntervalHours * 3600_000;
    if (!(ms > 0)) return () => {};
    const t = setInterval(() => {
      this.prune().then(onReport, () => {});
    }, ms);
    t.unref?.();
    return () => clearInterval(t);
  }

  /** One episode by id, with its metadata (null when there is none). */
  async getEpisode(id: string): Promise<EpisodeRecord | null> {
    let a: Json;
    try {
      a = (await this.client.memoryGet({ ns: this.namespace, id })) as Json;
    } catch (e) {
      if (e instanceof RememError && e.code === "REMEM_ENOTFOUND") return null;
      throw e;
    }
    const m = (a.memory ?? a) as Json;
    const md = (m.metadata ?? {}) as Json;
    // promptBytes counts UTF-8 bytes: the prompt ends there, then "\n\n"
    const bytes = Buffer.from(str(m.text), "utf8");
    const pb = Math.min(num(md.promptBytes, bytes.length), bytes.length);
    return {
      id: str(m.id),
      prompt: bytes.subarray(0, pb).toString("utf8"),
      output: bytes.subarray(Math.min(pb + 2, bytes.length)).toString("utf8"),
      metadata: toMetadata(md),
    };
  }

  /** FeedbackAgent's score of an episode, in [-1, 1]: episodes with
   * positive feedback weigh feedbackWeightFactor in retrieval. */
  async recordFeedback(id: string, feedback: number): Promise<void> {
    if (!(feedback >= -1 && feedback <= 1))
      throw new RememError("REMEM_EINVAL", `feedback must be in [-1, 1], got ${feedback}`, 0);
    const a = (await this.client.memoryGet({ ns: this.namespace, id })) as Json;
    const m = (a.memory ?? a) as Json;
    const md = { ...((m.metadata ?? {}) as Json), feedback };
    await this.client.memoryUpdate({ ns: this.namespace, id, metadata: md });
  }

  private policyArgs(dryRun?: boolean) {
    const c = this.config;
    const args = {
      ns: this.namespace,
      max_episodes_per_project: c.maxEpisodesPerProject,
      retention_days: c.retentionDays,
      similarity_threshold: c.similarityThreshold,
      strategy: c.summarizationStrategy,
      dry_run: dryRun === true,
    };
    // archiveLocation names a folder of the server's machine: the server
    // takes it from its own configuration only (docs/operations.md,
    // "Local-only arguments"), so the agent never sends it.
    return args;
  }
}
