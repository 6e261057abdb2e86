/*
 * toolset.c: which tools an MCP server offers. A model reads every tool's
 * name, description and schema before its first word, so the default is
 * the few tools it needs to remember and recall (the operations whose
 * group is "core", remem_op_info.group); the other groups (memory,
 * lifecycle, lessons, experience, episodes, admin) are added by name with
 * `remem mcp --tools ...`, `remem serve --mcp-tools ...` or the config's
 * mcp.tools. Admin tools (store upkeep, benchmarks) are never offered
 * unless asked for. A call to a tool outside the set is refused as an
 * unknown tool, naming the group that would offer it.
 *
 * Every tool is an operation of the library's table; an operation whose
 * row names no group is offered in no set.
 */
#include <stdio.h>
#include <string.h>
#include "mcpInt.h"

static const char *const group_names[] = {"core",       "memory",   "lifecycle", "lessons",
                                          "experience", "episodes", "admin"};
#define N_GROUPS (sizeof group_names / sizeof group_names[0])

unsigned mcp_group_bit(const char *group) {
    for (size_t i = 0; group && i < N_GROUPS; i++)
        if (!strcmp(group, group_names[i])) return 1u << i;
    return 0;
}

int mcp_groups_parse(const char *list, unsigned *mask, char *err, size_t cap) {
    unsigned m = MCP_GROUP_CORE;
    const char *p = list ? list : "";
    while (*p) {
        size_t n = strcspn(p, ",");
        char word[32];
        size_t s = 0, e = n;
        while (s < e && p[s] == ' ') s++;
        while (e > s && p[e - 1] == ' ') e--;
        if (e - s >= sizeof word) e = s + sizeof word - 1;
        memcpy(word, p + s, e - s);
        word[e - s] = 0;
        unsigned bit = !strcmp(word, "all") ? MCP_GROUP_ALL : mcp_group_bit(word);
        if (!bit && word[0]) {
            snprintf(err, cap,
                     "unknown tool group \"%s\" (the groups: core, memory, lifecycle, lessons, "
                     "experience, episodes, admin, or all)",
                     word);
            return -1;
        }
        m |= bit;
        p += n;
        if (*p == ',') p++;
    }
    *mask = m;
    return 0;
}

json_t *mcp_tools_list(unsigned groups) {
    json_t *list = json_array();
    size_t i, n;
    if (!list) return NULL;
    const remem_op_info *ops = remem_ops(&n);
    for (i = 0; i < n; i++)
        if (groups & mcp_group_bit(ops[i].group))
            json_array_append_new(list, mcp_op_tool_json(&ops[i]));
    return list;
}

int mcp_tool_find(const char *name, unsigned groups, const remem_op_info **op, char *err,
                  size_t cap) {
    const char *group = (*op = mcp_op_for_tool(name)) ? (*op)->group : NULL;
    if (!group) {
        snprintf(err, cap, "unknown tool: %s", name);
        *op = NULL;
        return -1;
    }
    if (!(groups & mcp_group_bit(group))) {
        snprintf(err, cap,
                 "unknown tool: %s (it is in the tool group \"%s\", which this server does not "
                 "offer; add it with --tools %s)",
                 name, group, group);
        *op = NULL;
        return -1;
    }
    return 0;
}
