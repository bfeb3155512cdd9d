/* json_comm.h: a collective's args in stepprof's Chrome-trace JSON
 * (json_comm.c), for chrome_json.c. */
#ifndef SP_JSON_COMM_H
#define SP_JSON_COMM_H

#include "collect.h"

/* For each event of t, the index of the collective record attached to it,
 * or -1; NULL when t has none (or no memory: the args are then left out,
 * the trace is still whole). Free with sp__free. */
int32_t *sp__json_comm_index(const sp__thread *t);

/* Appends `"Collective name": ..., ` and the rest of the record's known
 * fields, each followed by a comma. */
void sp__json_put_comm_args(sp__buf *b, const sp_result *r, const sp__comm *c);

#endif
