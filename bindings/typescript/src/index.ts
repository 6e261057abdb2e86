// index.ts: the package's exports: RememClient (every operation of remem
// serve as a typed method), RememError, the generated argument types, and
// seed 003's MemoryAgent with its interfaces.
export { RememClient, RememError, type RememClientOptions } from "./client.js";
export * from "./generated/operations.js";
export * from "./memory-agent.js";
