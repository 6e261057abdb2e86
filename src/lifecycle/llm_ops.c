/*
 * llm_ops.c: the table of the LLM operations (listed in
 * src/engine/ops.h's ENGINE_OP_TABLES): names, rights, summaries and
 * argument schemas. Alone in its file so that ops.c, which lists it, and
 * the operations, which call the engine, never form a circle of calls.
 */
#include "engine/ops.h"
#include "lifecycle/llm_ops.h"

const engine_op llm_ops[] = {
    {{"llm.check", "admin",
      "Whether the configured LLM endpoint answers, and how fast (one tiny chat completion).",
      "{\"type\":\"object\",\"properties\":{}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_llm_check},
    {{"rate", "write",
      "Rate a memory's importance with the LLM on a poignancy scale (1-10, stored as importance "
      "= rating/10, the explanation in metadata.rating); no LLM: the kind's default or the "
      "given importance.",
      "{\"type\":\"object\",\"x-positional\":[\"id\"],\"properties\":{"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace of the memory "
      "(required with id)\"},"
      "\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a stored memory to rate: "
      "its importance becomes rating/10\"},"
      "\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,\"description\":\"a "
      "text to rate without storing anything (instead of id)\"},"
      "\"kind\":{\"type\":\"string\",\"minLength\":1,\"description\":\"with text and no LLM: "
      "the kind whose default importance is answered (observation)\"},"
      "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"with "
      "no LLM configured: the importance to use instead of the kind's default\"}}}", REMEM_OP_DESTRUCTIVE, "lifecycle"},
     op_rate},
    {{"consolidate", "write",
      "Add a text after checking it against the most similar memories: exact duplicates fold "
      "without the LLM; otherwise the LLM says per memory UPDATE (merge), INVALIDATE "
      "(superseded by the new one), NOOP, and whether to ADD the new text.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"text\"],\"properties\":{"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"},"
      "\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,\"description\":\"the "
      "new fact\"},"
      "\"kind\":{\"type\":\"string\",\"minLength\":1,\"description\":\"kind of the new memory "
      "(observation)\"},"
      "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":"
      "\"importance of the new memory (the kind's default)\"},"
      "\"metadata\":{\"type\":\"object\",\"description\":\"metadata of the new memory\"},"
      "\"threshold\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"cosine "
      "similarity from which a stored memory is shown to the LLM (0.5)\"},"
      "\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":\"at most this "
      "many similar memories are shown (5)\"}}}", REMEM_OP_DESTRUCTIVE, "lifecycle"},
     op_consolidate},
};
const size_t llm_ops_n = sizeof llm_ops / sizeof llm_ops[0];
