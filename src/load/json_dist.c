/* json_dist.c: reads back what stepprof's JSON says of a distributed run
 * (trace-format.md): distributedInfo's rank, world size, local rank and
 * size, host, backend and job, and the args of a collective's
 * Communication range ("Collective name", "Process Group Name", "Group
 * size", "bytes", "seq", the names Kineto writes for record_param_comms).
 * Values of the wrong type are skipped: a key keeps its default. */
#include "json_dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the string just read into dst (size bytes) when it fits whole. */
static void take_text(const sp__jlex *lx, char *dst, size_t size)
{
    if (lx->tok.len < size && !memchr(lx->tok.data ? lx->tok.data : "", '\0', lx->tok.len)) {
        memcpy(dst, lx->tok.data ? lx->tok.data : "", lx->tok.len);
        dst[lx->tok.len] = '\0';
    }
}

int sp__json_read_dist(sp__jlex *lx, sp_result *r)
{
    sp__span_meta *m = &r->meta;
    m->rank = 0;
    m->world_size = 1;
    m->local_rank = -1;
    m->local_world_size = 0;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        char key[24];
        if (sp__jlex_string(lx) != 0) return -1;
        snprintf(key, sizeof key, "%s",
                 lx->tok.len < sizeof key && lx->tok.data ? lx->tok.data : "");
        if (sp__jlex_expect(lx, ':') != 0) return -1;
        int c = sp__jlex_peek(lx);
        if (c == '"') {
            if (sp__jlex_string(lx) != 0) return -1;
            if (strcmp(key, "hostname") == 0)
                take_text(lx, m->hostname, sizeof m->hostname);
            else if (strcmp(key, "job") == 0)
                take_text(lx, m->job, sizeof m->job);
            else if (strcmp(key, "backend") == 0 && sp__dist_backend_ok(lx->tok.data))
                take_text(lx, m->dist_backend, sizeof m->dist_backend);
        } else if (c >= '0' && c <= '9') {
            if (sp__jlex_number(lx) != 0) return -1;
            char *end;
            long long v = strtoll(lx->tok.data, &end, 10);
            if (*end != '\0' || v < 0 || v >= (1ll << 30)) v = -1;
            if (v < 0) {
            } else if (strcmp(key, "rank") == 0) {
                m->rank = v;
            } else if (strcmp(key, "world_size") == 0 && v > 0) {
                m->world_size = v;
            } else if (strcmp(key, "local_rank") == 0) {
                m->local_rank = v;
            } else if (strcmp(key, "local_world_size") == 0 && v > 0) {
                m->local_world_size = v;
            }
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        more = sp__jlex_next(lx, '}');
    }
    /* A local rank without its size (or the reverse) is not trusted. */
    if (m->local_rank < 0 || m->local_world_size < 1) {
        m->local_rank = -1;
        m->local_world_size = 0;
    }
    sp__dist_meta_default(m);
    return more < 0 ? -1 : 0;
}

void sp__comm_args_fini(sp__comm_args *a)
{
    sp__buf_fini(&a->collective);
    sp__buf_fini(&a->group);
}

void sp__comm_args_reset(sp__comm_args *a)
{
    a->any = 0;
    a->collective.len = a->group.len = 0;
    a->group_size = 0;
    a->bytes = a->seq = -1;
}

void sp__comm_arg_number(sp__comm_args *a, const char *key, int64_t v)
{
    if (strcmp(key, "Group size") == 0 && v > 0)
        a->group_size = v, a->any = 1;
    else if (strcmp(key, "bytes") == 0 && v >= 0)
        a->bytes = v, a->any = 1;
    else if (strcmp(key, "seq") == 0 && v >= 0)
        a->seq = v, a->any = 1;
}

int sp__comm_arg_string(sp__comm_args *a, const char *key, const char *v, size_t len)
{
    sp__buf *dst = strcmp(key, "Collective name") == 0      ? &a->collective
                   : strcmp(key, "Process Group Name") == 0 ? &a->group
                                                            : NULL;
    if (!dst) return 0;
    dst->len = 0;
    sp__buf_append(dst, v, len);
    a->any = 1;
    return dst->failed ? -1 : 0;
}

int sp__comm_args_add(sp__builder *b, sp__thread *t, const sp__comm_args *a, int64_t start_ns)
{
    if (!a->any) return 0;
    sp__comm *c = sp__builder_comm(b, t);
    if (!c) return -1;
    c->ts_ns = start_ns;
    c->collective = sp__names_from_bytes(&b->r->names, a->collective.len ? a->collective.data : "",
                                         a->collective.len);
    c->group = sp__names_from_bytes(&b->r->names, a->group.len ? a->group.data : "", a->group.len);
    c->group_size = a->group_size;
    c->bytes = a->bytes;
    c->seq = a->seq;
    return 0;
}
