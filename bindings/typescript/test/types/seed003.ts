// seed003.ts: type-level test. The four interfaces below are copied
// verbatim from seed 003's "Data Structures" (the MemoryAgent document);
// the assertions at the end fail to compile unless the package exports
// exactly the same types. test/memory-agent.test.mjs compiles this file
// with tsc --noEmit.
import type * as pkg from "../../src/index.js";

namespace Seed {
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
}

type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const checks: [
  Equals<pkg.EpisodeMetadata, Seed.EpisodeMetadata>,
  Equals<pkg.EpisodeRecord, Seed.EpisodeRecord>,
  Equals<pkg.RetrievalQuery, Seed.RetrievalQuery>,
  Equals<pkg.PruneReport, Seed.PruneReport>,
] = [true, true, true, true];

// What the seed's methods take and give: a retrieval takes a
// RetrievalQuery and gives EpisodeRecords; prune gives a PruneReport.
export async function usage(agent: pkg.MemoryAgent): Promise<void> {
  const q: Seed.RetrievalQuery = { queryPrompt: "read a CSV file", projectID: "acme", maxResults: 3 };
  const eps: Seed.EpisodeRecord[] = await agent.retrieveEpisodes(q);
  const rep: Seed.PruneReport = await agent.prune();
  void eps;
  void rep;
}
