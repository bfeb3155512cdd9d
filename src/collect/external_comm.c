/* external_comm.c: what a collective did (its operation, process group,
 * bytes and sequence number, through sp_profiler_add_comm_info), kept until
 * its span is collected, then moved onto the thread that ran it as a
 * collective record (collect.h), which attribution ties to the
 * Communication range containing its time. The range itself is recorded
 * on the hot path as any other; this side record costs only collectives.
 * Texts live in one byte buffer referred to by offset, and an add is all
 * or nothing, as with the op information (external_ops.c). */
#include "collect.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

void sp__ext_comms_init(sp__ext_comms *x)
{
    memset(x, 0, sizeof *x);
    sp__buf_init(&x->text);
}

void sp__ext_comms_fini(sp__ext_comms *x)
{
    sp__free(x->comms);
    sp__buf_fini(&x->text);
    memset(x, 0, sizeof *x);
}

void sp__ext_comms_clear(sp__ext_comms *x)
{
    x->count = 0;
    x->text.len = 0;
    x->text.failed = 0;
}

/* All of a text, or SP__EXT_NAME_MAX bytes less a UTF-8 sequence the cut
 * would split. */
static size_t kept_len(const char *s, size_t len)
{
    if (len <= SP__EXT_NAME_MAX) return len;
    len = SP__EXT_NAME_MAX;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
        len--;
    return len;
}

static sp__ext_text put_text(sp__buf *b, const char *s, size_t len)
{
    size_t kept = kept_len(s, len);
    sp__ext_text t = {.off = b->len, .len = (uint32_t)kept, .cut = len > SP__EXT_NAME_MAX};
    sp__buf_append(b, kept ? s : "", kept);
    return t;
}

int sp__ext_comms_add(sp__ext_comms *x, const sp_comm_info *comms, size_t n)
{
    if (n == 0) return 0;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += kept_len(comms[i].collective, comms[i].collective_len) +
                 kept_len(comms[i].group, comms[i].group_len);
    if (x->count + n > x->cap) {
        size_t cap = x->cap ? x->cap : 64;
        while (cap < x->count + n) {
            if (cap > SIZE_MAX / 2 / sizeof *x->comms) return -1;
            cap *= 2;
        }
        sp__ext_comm *grown = sp__realloc(x->comms, cap * sizeof *grown);
        if (!grown) return -1;
        x->comms = grown;
        x->cap = cap;
    }
    if (sp__buf_reserve(&x->text, bytes) != 0) {
        x->text.failed = 0; /* the buffer is unchanged: a later add may succeed */
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const sp_comm_info *c = &comms[i];
        x->comms[x->count++] = (sp__ext_comm){
            .tid = c->tid,
            .time_ns = c->time_ns,
            .collective = put_text(&x->text, c->collective, c->collective_len),
            .group = put_text(&x->text, c->group, c->group_len),
            .group_size = c->group_size > 0 ? c->group_size : 0,
            .bytes = c->bytes >= 0 ? c->bytes : -1,
            .seq = c->seq >= 0 ? c->seq : -1,
        };
    }
    return 0;
}

static uint32_t intern(sp_result *r, const sp__buf *b, sp__ext_text t)
{
    uint32_t id = sp__names_from_bytes(&r->names, t.len ? b->data + t.off : "", t.len);
    uint8_t fixes = r->names.fixes ? r->names.fixes[id] : 0;
    if (fixes & SP__UTF8_INVALID) r->counters[SP_COUNTER_INVALID_UTF8]++;
    if (t.cut || (fixes & SP__UTF8_CUT)) r->counters[SP_COUNTER_NAMES_CUT]++;
    return id;
}

static int by_time(const void *pa, const void *pb)
{
    const sp__comm *a = pa, *b = pb;
    return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

int sp__collect_external_comms(sp_result *r, const sp__ext_comms *x, const sp__sync *start,
                               const sp__sync *stop, const sp__tick_map *map)
{
    if (x->count == 0) return 0;
    if (x->text.failed) return -1;
    for (size_t i = 0; i < x->count; i++) {
        const sp__ext_comm *c = &x->comms[i];
        int64_t ts = sp__external_time(c->time_ns, start, stop, map);
        if (ts < r->span_start_ns || ts > r->span_end_ns) {
            r->counters[SP_COUNTER_OUT_OF_WINDOW]++;
            continue;
        }
        sp__thread *t = sp__result_thread(r, c->tid);
        if (!t) return -1;
        sp__comm *grown = sp__realloc(t->comms, sizeof *grown * (t->comm_count + 1));
        if (!grown) return -1;
        t->comms = grown;
        t->comms[t->comm_count++] = (sp__comm){
            .ts_ns = ts,
            .collective = intern(r, &x->text, c->collective),
            .group = intern(r, &x->text, c->group),
            .group_size = c->group_size,
            .bytes = c->bytes,
            .seq = c->seq,
            .host = -1,
        };
    }
    /* Stable enough: records of one thread were added in time order by
     * their callers; qsort only mends an out-of-order add. */
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 1; k < t->comm_count; k++) {
            if (t->comms[k].ts_ns >= t->comms[k - 1].ts_ns) continue;
            qsort(t->comms, t->comm_count, sizeof *t->comms, by_time);
            break;
        }
    }
    return 0;
}
