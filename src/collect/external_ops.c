/* external_ops.c: operator information that another tracer recorded (paddle's
 * op info recorder: input shapes, dtypes, call stack, and the op's FLOPs,
 * through sp_profiler_add_op_info), kept until its span is collected, then
 * turned into op supplements (collect.h) on the threads the ops ran on,
 * before attribution ties each to the range containing its time. Like the
 * external ranges (external.c) the copies live in a few growing arrays
 * referred to by offset, so growing one never leaves a dangling pointer,
 * and an add is all or nothing. */
#include "collect.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

void sp__ext_ops_init(sp__ext_ops *x)
{
    memset(x, 0, sizeof *x);
    sp__buf_init(&x->text);
}

void sp__ext_ops_fini(sp__ext_ops *x)
{
    sp__free(x->ops);
    sp__free(x->inputs);
    sp__free(x->dims);
    sp__buf_fini(&x->text);
    memset(x, 0, sizeof *x);
}

void sp__ext_ops_clear(sp__ext_ops *x)
{
    x->count = x->input_count = x->dim_count = 0;
    x->text.len = 0;
    x->text.failed = 0;
}

/* How much of a text is kept: all of it, or SP__EXT_NAME_MAX bytes less a
 * UTF-8 sequence the cut would split. */
static size_t kept_len(const char *s, size_t len)
{
    if (len <= SP__EXT_NAME_MAX) return len;
    len = SP__EXT_NAME_MAX;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
        len--;
    return len;
}

/* Grows *p to hold want elements of size sz (capacity doubling). */
static int reserve(void **p, size_t *cap, size_t want, size_t sz)
{
    if (want <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < want) {
        if (n > SIZE_MAX / 2 / sz) return -1;
        n *= 2;
    }
    void *q = sp__realloc(*p, n * sz);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Copies a text into the buffer (room reserved by the caller). */
static sp__ext_text put_text(sp__buf *b, const char *s, size_t len)
{
    size_t kept = kept_len(s, len);
    sp__ext_text t = {.off = b->len, .len = (uint32_t)kept, .cut = len > SP__EXT_NAME_MAX};
    sp__buf_append(b, kept ? s : "", kept);
    return t;
}

int sp__ext_ops_add(sp__ext_ops *x, const sp_op_info *ops, size_t n)
{
    if (n == 0) return 0;
    size_t inputs = 0, dims = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const sp_op_info *o = &ops[i];
        inputs += o->input_count;
        bytes += kept_len(o->op_type, o->op_type_len) + kept_len(o->callstack, o->callstack_len);
        for (size_t k = 0; k < o->input_count; k++) {
            const sp_op_input *in = &o->inputs[k];
            dims += in->rank;
            bytes += kept_len(in->key, in->key_len) + kept_len(in->dtype, in->dtype_len);
        }
    }
    if (reserve((void **)&x->ops, &x->cap, x->count + n, sizeof *x->ops) != 0 ||
        reserve((void **)&x->inputs, &x->input_cap, x->input_count + inputs, sizeof *x->inputs) !=
            0 ||
        reserve((void **)&x->dims, &x->dim_cap, x->dim_count + dims, sizeof *x->dims) != 0)
        return -1;
    if (sp__buf_reserve(&x->text, bytes) != 0) {
        x->text.failed = 0; /* the buffer is unchanged: a later add may succeed */
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const sp_op_info *o = &ops[i];
        sp__ext_op *out = &x->ops[x->count++];
        *out = (sp__ext_op){
            .tid = o->tid,
            .time_ns = o->time_ns,
            .op_type = put_text(&x->text, o->op_type, o->op_type_len),
            .callstack = put_text(&x->text, o->callstack, o->callstack_len),
            .flops = o->flops,
            .first_input = x->input_count,
            .input_count = o->input_count,
        };
        for (size_t k = 0; k < o->input_count; k++) {
            const sp_op_input *in = &o->inputs[k];
            sp__ext_input *e = &x->inputs[x->input_count++];
            e->key = put_text(&x->text, in->key, in->key_len);
            e->dtype = put_text(&x->text, in->dtype, in->dtype_len);
            e->dims_off = x->dim_count;
            e->rank = (uint32_t)in->rank;
            if (in->rank) memcpy(&x->dims[x->dim_count], in->dims, sizeof *x->dims * in->rank);
            x->dim_count += in->rank;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ collecting */

typedef struct placed {
    uint64_t tid;
    int64_t ts_ns; /* on the span's time line */
    size_t op;     /* index in the added ops: the tie-break that keeps their order */
} placed;

static int by_thread_then_time(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

static int same_text(const sp__buf *b, sp__ext_text x, sp__ext_text y)
{
    return x.len == y.len && memcmp(b->data + x.off, b->data + y.off, x.len) == 0;
}

/* The number of keys of an op's inputs: a run of equal keys is one key. */
static size_t key_count(const sp__ext_ops *x, const sp__ext_op *o)
{
    size_t keys = 0;
    for (size_t k = 0; k < o->input_count; k++)
        if (k == 0 || !same_text(&x->text, x->inputs[o->first_input + k - 1].key,
                                 x->inputs[o->first_input + k].key))
            keys++;
    return keys;
}

/* The words an op's inputs take in op_words (collect.h's layout). */
static size_t word_count(const sp__ext_ops *x, const sp__ext_op *o)
{
    size_t keys = key_count(x, o), words = 2 + 4 * keys + 2 * o->input_count;
    for (size_t k = 0; k < o->input_count; k++)
        words += x->inputs[o->first_input + k].rank;
    return words;
}

/* Interns a text, counting a cut or repaired one as recorded names are. */
static uint32_t intern(sp_result *r, const sp__buf *b, sp__ext_text t)
{
    uint32_t id = sp__names_from_bytes(&r->names, t.len ? b->data + t.off : "", t.len);
    uint8_t fixes = r->names.fixes ? r->names.fixes[id] : 0;
    if (fixes & SP__UTF8_INVALID) r->counters[SP_COUNTER_INVALID_UTF8]++;
    if (t.cut || (fixes & SP__UTF8_CUT)) r->counters[SP_COUNTER_NAMES_CUT]++;
    return id;
}

/* Writes one op's inputs at w: shapes by key, then dtypes by key. Returns
 * the words written. */
static size_t encode(sp_result *r, const sp__ext_ops *x, const sp__ext_op *o, uint64_t *w)
{
    size_t at = 0, keys = key_count(x, o);
    const sp__ext_input *in = &x->inputs[o->first_input];
    for (int pass = 0; pass < 2; pass++) {
        w[at++] = keys;
        for (size_t k = 0; k < o->input_count;) {
            size_t run = 1;
            while (k + run < o->input_count && same_text(&x->text, in[k].key, in[k + run].key))
                run++;
            w[at++] = pass == 0
                          ? intern(r, &x->text, in[k].key)
                          : sp__names_from_bytes(&r->names,
                                                 in[k].key.len ? x->text.data + in[k].key.off : "",
                                                 in[k].key.len); /* counted once, above */
            w[at++] = run;
            for (size_t j = k; j < k + run; j++) {
                if (pass == 1) {
                    w[at++] = intern(r, &x->text, in[j].dtype);
                    continue;
                }
                w[at++] = in[j].rank;
                for (uint32_t d = 0; d < in[j].rank; d++)
                    w[at++] = (uint64_t)x->dims[in[j].dims_off + d];
            }
            k += run;
        }
    }
    return at;
}

/* Appends the ops placed[from, to) (one thread's, in time order) to t. */
static int append_run(sp_result *r, sp__thread *t, const sp__ext_ops *x, const placed *p, size_t n)
{
    size_t words = 0;
    for (size_t i = 0; i < n; i++)
        words += word_count(x, &x->ops[p[i].op]);
    sp__op_supplement *ops = sp__realloc(t->ops, sizeof *ops * (t->op_count + n));
    if (!ops) return -1;
    t->ops = ops;
    uint64_t *w = sp__realloc(t->op_words, sizeof *w * (t->op_word_count + words + 1));
    if (!w) return -1;
    t->op_words = w;
    for (size_t i = 0; i < n; i++) {
        const sp__ext_op *o = &x->ops[p[i].op];
        sp__op_supplement *s = &t->ops[t->op_count++];
        *s = (sp__op_supplement){
            .ts_ns = p[i].ts_ns,
            .op_type = intern(r, &x->text, o->op_type),
            .callstack = intern(r, &x->text, o->callstack),
            .words = t->op_word_count,
            .flops = o->flops,
            .host = -1,
        };
        t->op_word_count += encode(r, x, o, t->op_words + t->op_word_count);
    }
    return 0;
}

static int by_time(const void *pa, const void *pb)
{
    const sp__op_supplement *a = pa, *b = pb;
    return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

int sp__collect_external_ops(sp_result *r, const sp__ext_ops *x, const sp__sync *start,
                             const sp__sync *stop, const sp__tick_map *map)
{
    if (x->count == 0) return 0;
    if (x->text.failed) return -1;
    placed *p = sp__alloc(sizeof *p * x->count);
    if (!p) return -1;
    size_t n = 0;
    for (size_t i = 0; i < x->count; i++) {
        int64_t ts = sp__external_time(x->ops[i].time_ns, start, stop, map);
        if (ts < r->span_start_ns || ts > r->span_end_ns) {
            r->counters[SP_COUNTER_OUT_OF_WINDOW]++;
            continue;
        }
        p[n++] = (placed){x->ops[i].tid, ts, i};
    }
    qsort(p, n, sizeof *p, by_thread_then_time);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t run = 1;
        while (i + run < n && p[i + run].tid == p[i].tid)
            run++;
        sp__thread *t = sp__result_thread(r, p[i].tid);
        size_t before = t ? t->op_count : 0;
        rc = t ? append_run(r, t, x, &p[i], run) : -1;
        /* A thread that had supplements already keeps them in time order. */
        if (rc == 0 && before && t->ops[before - 1].ts_ns > t->ops[before].ts_ns)
            qsort(t->ops, t->op_count, sizeof *t->ops, by_time);
        i += run;
    }
    sp__free(p);
    return rc;
}
