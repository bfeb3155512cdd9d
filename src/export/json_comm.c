/* json_comm.c: writes what a collective did as args of its Communication
 * range, under the names Kineto gives record_param_comms' ("Collective
 * name", "Process Group Name", "Group size") and stepprof's own "bytes" and
 * "seq" (trace-format.md, "Collectives"). A range with several records
 * takes the last, as "Input Dims" takes its last op's. */
#include "json_comm.h"
#include "json_escape.h"

#include <string.h>

int32_t *sp__json_comm_index(const sp__thread *t)
{
    if (t->comm_count == 0 || t->count == 0) return NULL;
    int32_t *of = sp__alloc(sizeof *of * t->count);
    if (!of) return NULL;
    for (size_t i = 0; i < t->count; i++)
        of[i] = -1;
    for (size_t k = 0; k < t->comm_count; k++) {
        int32_t h = t->comms[k].host;
        if (h >= 0 && (size_t)h < t->count) of[h] = (int32_t)k;
    }
    return of;
}

static void put_key_str(sp__buf *b, const char *key, const char *s)
{
    sp__buf_puts(b, key);
    sp__json_put_string(b, s, strlen(s));
    sp__buf_putc(b, ',');
}

void sp__json_put_comm_args(sp__buf *b, const sp_result *r, const sp__comm *c)
{
    const char *coll = sp__result_name(r, c->collective), *group = sp__result_name(r, c->group);
    if (coll && *coll) put_key_str(b, "\"Collective name\":", coll);
    if (group && *group) put_key_str(b, "\"Process Group Name\":", group);
    if (c->group_size > 0) sp__buf_printf(b, "\"Group size\":%lld,", (long long)c->group_size);
    if (c->bytes >= 0) sp__buf_printf(b, "\"bytes\":%lld,", (long long)c->bytes);
    if (c->seq >= 0) sp__buf_printf(b, "\"seq\":%lld,", (long long)c->seq);
}
