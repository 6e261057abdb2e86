/* prune.c: placeholder table until prune lands. */
#include "maintenance/maintenance.h"
const engine_op maintenance_ops[] = {{{0}, 0}};
const size_t maintenance_ops_n = 0;
