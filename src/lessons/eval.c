#include "lessons/lessons.h"
int lsn_op_eval(remem *db, json_t *args, json_t **result) {
    (void)args;
    (void)result;
    return eng_fail(db, REMEM_EUNSUPPORTED, "todo");
}
