/* protobuf_ops.c: the nested messages of paddle's NodeTreesProto that the
 * node writer (protobuf.c) fills from a result's side tables: operator
 * supplements (input shapes, dtypes, call stack) decoded from a thread's
 * op_words (collect.h), and device properties. Their sub-messages are
 * allocated from a scratch list that the writer empties after each node,
 * so memory stays bounded by one node. */
#include "protobuf.h"

#include <string.h>

typedef Paddle__Platform__OperatorSupplementEventProto op_proto;
typedef Paddle__Platform__OperatorSupplementEventProto__InputShapeProto shapes_proto;
typedef Paddle__Platform__OperatorSupplementEventProto__InputShapeProto__ShapeVector shape_vec_proto;
typedef Paddle__Platform__OperatorSupplementEventProto__InputShapeProto__ShapeVector__Shape shape_proto;
typedef Paddle__Platform__OperatorSupplementEventProto__DtypeProto dtypes_proto;
typedef Paddle__Platform__OperatorSupplementEventProto__DtypeProto__DtypeVector dtype_vec_proto;

void *sp__pb_scratch_alloc(sp__pb_scratch *s, size_t size)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        void **p = sp__realloc(s->blocks, sizeof *p * cap);
        if (!p) return NULL;
        s->blocks = p;
        s->cap = cap;
    }
    void *block = sp__alloc(size ? size : 1);
    if (!block) return NULL;
    memset(block, 0, size ? size : 1);
    s->blocks[s->count++] = block;
    return block;
}

void sp__pb_scratch_reset(sp__pb_scratch *s)
{
    for (size_t i = 0; i < s->count; i++) sp__free(s->blocks[i]);
    s->count = 0;
}

void sp__pb_scratch_fini(sp__pb_scratch *s)
{
    sp__pb_scratch_reset(s);
    sp__free(s->blocks);
    memset(s, 0, sizeof *s);
}

/* Reads the encoded inputs word by word; running past the end reads zeros,
 * which ends every list, so a damaged table cannot run away. */
typedef struct words {
    const uint64_t *at, *end;
} words;

static uint64_t next(words *w) { return w->at < w->end ? *w->at++ : 0; }

/* A count that the remaining words could hold (each item takes one). */
static size_t count_of(words *w)
{
    uint64_t n = next(w);
    size_t left = (size_t)(w->end - w->at);
    return n > left ? left : (size_t)n;
}

static char *name_of(const sp_result *r, uint64_t id) { return (char *)sp__result_name(r, (uint32_t)id); }

static shapes_proto *fill_shapes(sp__pb_scratch *s, const sp_result *r, words *w)
{
    shapes_proto *m = sp__pb_scratch_alloc(s, sizeof *m);
    if (!m) return NULL;
    *m = (shapes_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__INPUT_SHAPE_PROTO__INIT;
    size_t keys = count_of(w);
    m->key = sp__pb_scratch_alloc(s, sizeof *m->key * keys);
    m->shape_vecs = sp__pb_scratch_alloc(s, sizeof *m->shape_vecs * keys);
    if (!m->key || !m->shape_vecs) return NULL;
    m->n_key = m->n_shape_vecs = keys;
    for (size_t k = 0; k < keys; k++) {
        m->key[k] = name_of(r, next(w));
        shape_vec_proto *v = sp__pb_scratch_alloc(s, sizeof *v);
        if (!v) return NULL;
        *v = (shape_vec_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__INPUT_SHAPE_PROTO__SHAPE_VECTOR__INIT;
        size_t shapes = count_of(w);
        v->shapes = sp__pb_scratch_alloc(s, sizeof *v->shapes * shapes);
        if (!v->shapes) return NULL;
        v->n_shapes = shapes;
        for (size_t i = 0; i < shapes; i++) {
            shape_proto *sh = sp__pb_scratch_alloc(s, sizeof *sh);
            if (!sh) return NULL;
            *sh = (shape_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__INPUT_SHAPE_PROTO__SHAPE_VECTOR__SHAPE__INIT;
            size_t rank = count_of(w);
            sh->size = sp__pb_scratch_alloc(s, sizeof *sh->size * rank);
            if (!sh->size) return NULL;
            sh->n_size = rank;
            for (size_t d = 0; d < rank; d++) sh->size[d] = next(w);
            v->shapes[i] = sh;
        }
        m->shape_vecs[k] = v;
    }
    return m;
}

static dtypes_proto *fill_dtypes(sp__pb_scratch *s, const sp_result *r, words *w)
{
    dtypes_proto *m = sp__pb_scratch_alloc(s, sizeof *m);
    if (!m) return NULL;
    *m = (dtypes_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__DTYPE_PROTO__INIT;
    size_t keys = count_of(w);
    m->key = sp__pb_scratch_alloc(s, sizeof *m->key * keys);
    m->dtype_vecs = sp__pb_scratch_alloc(s, sizeof *m->dtype_vecs * keys);
    if (!m->key || !m->dtype_vecs) return NULL;
    m->n_key = m->n_dtype_vecs = keys;
    for (size_t k = 0; k < keys; k++) {
        m->key[k] = name_of(r, next(w));
        dtype_vec_proto *v = sp__pb_scratch_alloc(s, sizeof *v);
        if (!v) return NULL;
        *v = (dtype_vec_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__DTYPE_PROTO__DTYPE_VECTOR__INIT;
        size_t n = count_of(w);
        v->dtype = sp__pb_scratch_alloc(s, sizeof *v->dtype * n);
        if (!v->dtype) return NULL;
        v->n_dtype = n;
        for (size_t i = 0; i < n; i++) v->dtype[i] = name_of(r, next(w));
        m->dtype_vecs[k] = v;
    }
    return m;
}

sp__pb_op_node *sp__pb_fill_op(sp__pb_scratch *s, const sp_result *r, const sp__thread *t,
                               const sp__op_supplement *op, uint64_t tid)
{
    sp__pb_op_node *node = sp__pb_scratch_alloc(s, sizeof *node);
    op_proto *e = sp__pb_scratch_alloc(s, sizeof *e);
    if (!node || !e) return NULL;
    *node = (sp__pb_op_node)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_NODE_PROTO__INIT;
    *e = (op_proto)PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__INIT;
    e->has_timestamp_ns = e->has_process_id = e->has_thread_id = e->has_op_id = 1;
    e->timestamp_ns = (uint64_t)op->ts_ns;
    e->op_type = name_of(r, op->op_type);
    e->process_id = (uint64_t)r->meta.pid;
    e->thread_id = tid;
    e->callstack = name_of(r, op->callstack);
    e->op_id = op->op_id;
    e->has_stepprof_flops = op->flops != 0;
    e->stepprof_flops = op->flops;
    words w = {t->op_words + (op->words < t->op_word_count ? op->words : t->op_word_count),
               t->op_words + t->op_word_count};
    e->input_shapes = fill_shapes(s, r, &w);
    e->dtypes = e->input_shapes ? fill_dtypes(s, r, &w) : NULL;
    if (!e->dtypes) return NULL;
    node->op_supplement_event = e;
    return node;
}

sp__pb_device_prop *sp__pb_fill_device_prop(sp__pb_scratch *s, const sp__device_props *p)
{
    sp__pb_device_prop *m = sp__pb_scratch_alloc(s, sizeof *m);
    if (!m) return NULL;
    *m = (sp__pb_device_prop)PADDLE__PLATFORM__DEVICE_PROPERTY_PROTO__INIT;
    m->has_id = m->has_total_global_memory = m->has_compute_major = m->has_compute_minor = 1;
    m->has_max_threads_per_block = m->has_max_threads_per_multiprocessor = 1;
    m->has_regs_per_block = m->has_regs_per_multiprocessor = m->has_warp_size = 1;
    m->has_shared_memory_per_block = m->has_shared_memory_per_multiprocessor = 1;
    m->has_sm_count = m->has_shared_memory_per_block_optin = 1;
    m->id = p->id;
    m->name = (char *)p->name;
    m->total_global_memory = p->total_global_mem;
    m->compute_major = p->compute_major;
    m->compute_minor = p->compute_minor;
    m->max_threads_per_block = p->max_threads_per_block;
    m->max_threads_per_multiprocessor = p->max_threads_per_sm;
    m->regs_per_block = p->regs_per_block;
    m->regs_per_multiprocessor = p->regs_per_sm;
    m->warp_size = p->warp_size;
    m->shared_memory_per_block = p->shared_per_block;
    m->shared_memory_per_multiprocessor = p->shared_per_sm;
    m->sm_count = p->num_sms;
    m->shared_memory_per_block_optin = p->shared_per_block_optin;
    if (p->max_blocks_per_sm) {
        m->has_stepprof_max_blocks_per_sm = 1;
        m->stepprof_max_blocks_per_sm = p->max_blocks_per_sm;
    }
    return m;
}
