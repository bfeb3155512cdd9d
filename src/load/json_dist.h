/* json_dist.h: what load_json.c needs to read back a distributed run's
 * marks in stepprof's Chrome-trace JSON (json_dist.c): the top-level
 * distributedInfo and a collective's args on its Communication range. */
#ifndef SP_JSON_DIST_H
#define SP_JSON_DIST_H

#include "json_lex.h"
#include "load.h"

/* Reads the "distributedInfo" object into r's meta; keys left out keep
 * their defaults (sp__dist_meta_default). -1 on a syntax error. */
int sp__json_read_dist(sp__jlex *lx, sp_result *r);

/* A collective's args as read from one event; all zero is a valid
 * start, reset before each event. */
typedef struct sp__comm_args {
    int any; /* one of the keys below was read */
    sp__buf collective, group;
    int64_t group_size, bytes, seq;
} sp__comm_args;

void sp__comm_args_fini(sp__comm_args *a);
void sp__comm_args_reset(sp__comm_args *a);
/* Takes a numeric or string arg by key; other keys are ignored. A string
 * that is not kept (out of memory) returns -1. */
void sp__comm_arg_number(sp__comm_args *a, const char *key, int64_t v);
int sp__comm_arg_string(sp__comm_args *a, const char *key, const char *v, size_t len);
/* Adds the record of a Communication range of t starting at start_ns when
 * the args named a collective; 0, or -1 when out of memory. */
int sp__comm_args_add(sp__builder *b, sp__thread *t, const sp__comm_args *a, int64_t start_ns);

#endif
