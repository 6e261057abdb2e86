/*
 * ops.c: the experience operations (seed 000) as rows of the engine's
 * operation table (src/engine/ops.h): each row names the operation, the
 * right an API key needs, a one-line summary and the JSON Schema of its
 * arguments, which every face turns into flags, a request body or a tool.
 * The property names are chosen so that the CLI's generic mapping gives
 * the flags exactly (--title --action --domain --reward --metrics
 * --reasoning --episode --n --task --route --summary --world --rating
 * --improved --worsened --notes --hours; hydrate takes FILE... as its
 * positional "files", each read as JSON). The schemas were generated once
 * from a readable form and are kept here as text (the checker parses them
 * per call, like every other table's).
 */
#include "engine/ops.h"
#include "experience/experience.h"

/* Every experience operation first gives its namespace the first-use
 * hydration its policy asks for (firstuse.c). */
#define FIRST_USE(op)                                                 \
    static int first_##op(remem *db, json_t *args, json_t **result) { \
        int rc = exp_first_use(db, op_str(args, "ns", NULL));         \
        return rc ? rc : exp_op_##op(db, args, result);               \
    }
FIRST_USE(decision_add)
FIRST_USE(decision_similar)
FIRST_USE(trajectory_add)
FIRST_USE(trajectory_similar)
FIRST_USE(feedback_add)
FIRST_USE(feedback_similar)
FIRST_USE(fewshot)
FIRST_USE(hydrate)

const engine_op experience_ops[] = {
    {{"decision.add", "write",
      "Store a decision an agent took in a situation, with its reward: its text is `{title} Action: {action} Domain: {domain} Reward: "
      "{reward:.2f} {reasoning[:100]}`, its metadata the whole record.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"title\",\"action\",\"domain\","
      "\"reward\"],\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":256,\"description\":\"namespace\"},\"title\":{\"type\":\"string\","
      "\"minLength\":1,\"maxLength\":4096,"
      "\"x-aliases\":[\"conflict_title\"],\"description\":\"the conflict or situation title\"},"
      "\"action\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"x-aliases\":[\"action_type\"],\"description\":\"the action type taken (communicate, rest, ...)\"},"
      "\"domain\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"x-aliases\":[\"target_domain\"],\"description\":\"the target domain (relationships, career, ...)\"},"
      "\"reward\":{\"type\":\"number\",\"minimum\":-1e9,\"maximum\":1e9,"
      "\"description\":\"the reward the decision earned, within +-1e9 (stats average "
      "them)\"},"
      "\"metrics\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"},"
      "\"x-aliases\":[\"metrics_snapshot\"],\"description\":\"the metrics snapshot when the decision was taken (a JSON object of "
      "numbers)\"},"
      "\"reasoning\":{\"type\":\"string\",\"maxLength\":65536,"
      "\"description\":\"the agent's reasoning (the stored text keeps its first 100 characters,"
      " the metadata all of it)\"},\"episode\":{\"type\":\"string\",\"maxLength\":253,"
      "\"x-aliases\":[\"episode_id\"],\"description\":\"the episode id (links the decision to its human feedback)\"}}}", 0, "experience"},
     first_decision_add},
    {{"decision.similar", "read",
      "Past decisions like the current situation: the title plus the three most stressed metrics "
      "as the query, 2n candidates, reward >= 0.05, the best n by cosine similarity.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"title\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"title\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":4096,\"x-aliases\":[\"conflict_title\"],\"description\":\"the current conflict or situation title\"},"
      "\"metrics\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"},"
      "\"x-aliases\":[\"current_metrics\"],\"description\":\"the situation's metrics as a JSON object of numbers (lower = more "
      "stressed),"
      " e.g. {\\\"career.workload\\\": 90}\"},\"n\":{\"type\":\"integer\",\"minimum\":1,"
      "\"maximum\":100,\"description\":\"how many to return (default 3)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "experience"},
     first_decision_similar},
    {{"trajectory.add", "write",
      "Store an episode's trajectory: task id, route taken, total reward and a summary "
      "object.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"task\",\"route\",\"reward\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"task\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":4096,\"x-aliases\":[\"task_id\"],\"description\":\"the task id\"},\"route\":{\"type\":\"string\","
      "\"minLength\":1,\"maxLength\":4096,\"x-aliases\":[\"route_taken\"],\"description\":\"the route taken\"},"
      "\"reward\":{\"type\":\"number\",\"minimum\":-1e9,\"maximum\":1e9,"
      "\"x-aliases\":[\"total_reward\"],\"description\":\"the episode's total reward, within +-1e9\"},"
      "\"summary\":{\"type\":\"object\","
      "\"x-aliases\":[\"trajectory_summary\"],\"description\":\"the trajectory summary as a JSON object (milestones_hit, steps,"
      " ...)\"}}}", 0, "experience"},
     first_trajectory_add},
    {{"trajectory.similar", "read",
      "Past trajectories like the current world: `TaskDomain: {domain}` plus the three most "
      "stressed world values, the best n by cosine similarity.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"domain\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"domain\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":4096,\"x-aliases\":[\"task_domain\"],\"description\":\"the task domain\"},"
      "\"world\":{\"type\":\"object\","
      "\"x-aliases\":[\"current_world\"],\"description\":\"the current world state as a JSON object (numbers, booleans,"
      " strings; lower numbers and false are more stressed)\"},\"n\":{\"type\":\"integer\","
      "\"minimum\":1,\"maximum\":100,\"description\":\"how many to return (default 3)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "experience"},
     first_trajectory_similar},
    {{"feedback.add", "write",
      "Store human feedback on an episode at id fb_{episode}; a second feedback for the episode "
      "replaces the first (history keeps it).",
      "{\"type\":\"object\",\"required\":[\"ns\",\"episode\",\"rating\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"episode\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":253,\"x-aliases\":[\"episode_id\"],\"description\":\"the episode id\"},"
      "\"rating\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10,"
      "\"x-aliases\":[\"overall_effectiveness\"],\"description\":\"overall effectiveness, 1 to 10\"},"
      "\"improved\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":256},"
      "\"x-aliases\":[\"domains_improved\"],\"description\":\"domains that improved (comma-separated on the command line)\"},"
      "\"worsened\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":256},"
      "\"x-aliases\":[\"domains_worsened\"],\"description\":\"domains that worsened (comma-separated on the command line)\"},"
      "\"notes\":{\"type\":\"string\",\"maxLength\":65536,"
      "\"x-aliases\":[\"unexpected_effects\"],\"description\":\"unexpected effects, in the human's words\"},"
      "\"hours\":{\"type\":\"number\",\"minimum\":0,"
      "\"x-aliases\":[\"resolution_time_hours\"],\"description\":\"resolution time in hours\"}}}", REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "experience"},
     first_feedback_add},
    {{"feedback.similar", "read",
      "Human feedback whose text is most like the given text, by cosine similarity.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"text\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"text\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":32768,\"description\":\"the text to compare with\"},"
      "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,"
      "\"description\":\"how many to return (default 3)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "experience"},
     first_feedback_similar},
    {{"fewshot", "read",
      "A few-shot prompt block for a situation: the similar decisions, each with its episode's "
      "human feedback (--- PAST EXPERIENCE & HUMAN VERIFICATION ---).",
      "{\"type\":\"object\",\"required\":[\"ns\",\"title\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"title\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":4096,\"x-aliases\":[\"conflict_title\"],\"description\":\"the current conflict or situation title\"},"
      "\"metrics\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"},"
      "\"x-aliases\":[\"current_metrics\"],\"description\":\"the situation's metrics as a JSON object of numbers (lower = more "
      "stressed),"
      " e.g. {\\\"career.workload\\\": 90}\"},\"n\":{\"type\":\"integer\",\"minimum\":1,"
      "\"maximum\":100,\"description\":\"how many to return (default 3)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "experience"},
     first_fewshot},
    {{"hydrate", "write",
      "Load prepared decision files (the hydrate list of the configuration) into a namespace that "
      "holds no decision yet; otherwise add nothing.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"files\"],\"x-positional\":[\"files\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
      "\"description\":\"namespace\"},\"files\":{\"type\":\"array\",\"x-file\":true,"
      "\"items\":{\"type\":[\"object\",\"array\"]},"
      "\"description\":\"the files' contents (on the command line: FILE... paths,"
      " each read as JSON)\"}}}", REMEM_OP_IDEMPOTENT, "experience"},
     first_hydrate},
};
const size_t experience_ops_n = sizeof experience_ops / sizeof experience_ops[0];
