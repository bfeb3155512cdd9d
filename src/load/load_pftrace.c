/* load_pftrace.c: reads back the Perfetto traces stepprof writes
 * (src/export/perfetto.c; docs/trace-format.md, "Perfetto traces") into a
 * result: host ranges, instants and counter samples with their types (the
 * category), runtime calls, GPU records, memory events, thread names and
 * the metadata events. Packets stream in one at a time; each sequence's
 * interned names and incremental clock are followed as Perfetto's trace
 * processor does, and a SLICE_END closes the innermost open slice of its
 * track. Other producers' traces (no stepprof metadata event, or fields
 * stepprof never writes in its place) are refused with SP_EFORMAT; no input
 * makes it read out of bounds or loop: every length is checked against
 * what is left, and limits on sizes and ids refuse hostile files early. */
#include "load_pftrace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PACKET ((uint64_t)256 << 20)
#define MAX_SEQ 65536u
#define MAX_IID (1u << 26)
#define MAX_GPU_DEPTH 4096

static const char *const annotation_names[] = {
#define PF__ANN_TEXT(id, text) text,
    PF_ANNOTATION_LIST(PF__ANN_TEXT)
#undef PF__ANN_TEXT
};

static int get_varint(cur *c, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64 && c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The next field: its number, wire type, and value (a varint or fixed's
 * value in *v, a length-delimited field's bytes in *sub). */
int sp__pft_next_field(cur *c, uint32_t *field, unsigned *wire, uint64_t *v, cur *sub)
{
    uint64_t key;
    if (get_varint(c, &key) != 0) return -1;
    *field = (uint32_t)(key >> 3);
    *wire = (unsigned)(key & 7);
    if (*field == 0 || key >> 32) return -1;
    switch (*wire) {
    case SP__PB_VARINT:
        return get_varint(c, v);
    case SP__PB_I64:
    case SP__PB_I32: {
        size_t n = *wire == SP__PB_I64 ? 8 : 4;
        if ((size_t)(c->end - c->p) < n) return -1;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) x |= (uint64_t)c->p[i] << (8 * i);
        c->p += n;
        *v = x;
        return 0;
    }
    case SP__PB_LEN: {
        uint64_t len;
        if (get_varint(c, &len) != 0 || len > (uint64_t)(c->end - c->p)) return -1;
        sub->p = c->p;
        sub->end = c->p + len;
        c->p += len;
        return 0;
    }
    }
    return -1;
}

sp_status sp__pft_bad(loader *l, const char *what)
{
    if (l->status == SP_OK)
        l->status = sp__fail(SP_EFORMAT,
                             "%s: not a Perfetto trace stepprof can read (%s); stepprof reads the "
                             ".pftrace files it writes (docs/trace-format.md)",
                             l->path, what);
    return l->status;
}

sp_status sp__pft_nomem(loader *l)
{
    if (l->status == SP_OK) l->status = sp__fail(SP_ENOMEM, "out of memory loading %s", l->path);
    return l->status;
}

static void table_fini(table *t)
{
    for (size_t i = 0; i < t->cap; i++) sp__free(t->e[i].text);
    sp__free(t->e);
    memset(t, 0, sizeof *t);
}

static int table_set(table *t, uint64_t iid, const cur *text, int meaning)
{
    if (iid >= MAX_IID) return -1;
    if (iid >= t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap <= iid) cap *= 2;
        entry *e = sp__realloc(t->e, sizeof *e * cap);
        if (!e) return -2;
        memset(e + t->cap, 0, sizeof *e * (cap - t->cap));
        t->e = e;
        t->cap = cap;
    }
    size_t n = (size_t)(text->end - text->p);
    char *s = sp__alloc(n + 1);
    if (!s) return -2;
    memcpy(s, text->p, n);
    sp__free(t->e[iid].text);
    t->e[iid].text = s;
    t->e[iid].meaning = meaning;
    return 0;
}

static const entry *table_get(const table *t, uint64_t iid)
{
    return iid < t->cap && t->e[iid].text ? &t->e[iid] : NULL;
}

static int category_type(const char *name)
{
    if (strcmp(name, PF_CATEGORY_MEMORY) == 0) return SP_EVENT_TYPE_COUNT;
    if (strcmp(name, PF_CATEGORY_STEPPROF) == 0) return SP_EVENT_TYPE_COUNT + 1;
    for (int t = 0; t < SP_EVENT_TYPE_COUNT; t++)
        if (strcmp(name, sp_event_type_name((sp_event_type)t)) == 0) return t;
    return -1;
}

static int annotation_of(const char *name)
{
    for (int a = 0; a < PF_A_COUNT; a++)
        if (strcmp(name, annotation_names[a]) == 0) return a;
    return -1;
}

/* Events of a sequence are on its default track but for a few lanes, so
 * the last track found is remembered. */
static track *find_track(loader *l, uint64_t uuid)
{
    if (l->last_track < l->track_count && l->tracks[l->last_track].uuid == uuid)
        return &l->tracks[l->last_track];
    for (size_t i = l->track_count; i-- > 0;)
        if (l->tracks[i].uuid == uuid) {
            l->last_track = i;
            return &l->tracks[i];
        }
    return NULL;
}

/* The thread a track belongs to (itself or an ancestor with a thread
 * descriptor); NULL for GPU and process tracks. */
track *sp__pft_thread_of(loader *l, track *t)
{
    for (int hops = 0; t && hops < 8; hops++) {
        if (t->is_thread) return t;
        t = t->parent ? find_track(l, t->parent) : NULL;
    }
    return NULL;
}

static sp_status read_descriptor(loader *l, cur c)
{
    uint32_t f;
    unsigned wire;
    uint64_t v;
    cur sub, thread = {0}, name = {0};
    track t;
    memset(&t, 0, sizeof t);
    int has_uuid = 0, has_thread = 0, has_name = 0;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken track descriptor");
        if (f == PF_TRACK_UUID && wire == SP__PB_VARINT) {
            t.uuid = v;
            has_uuid = 1;
        } else if (f == PF_TRACK_PARENT && wire == SP__PB_VARINT) {
            t.parent = v;
        } else if (f == PF_TRACK_THREAD && wire == SP__PB_LEN) {
            thread = sub;
            has_thread = 1;
        } else if (f == PF_TRACK_NAME && wire == SP__PB_LEN) {
            name = sub;
            has_name = 1;
        }
    }
    if (!has_uuid) return sp__pft_bad(l, "a track without a uuid");
    if (find_track(l, t.uuid)) return SP_OK; /* described again: the first holds */
    if (has_thread) {
        cur tn = {0};
        int has_tn = 0;
        while (thread.p < thread.end) {
            if (sp__pft_next_field(&thread, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken thread descriptor");
            if (f == PF_THREAD_TID && wire == SP__PB_VARINT) t.tid = v;
            if (f == PF_THREAD_NAME && wire == SP__PB_LEN) {
                tn = sub;
                has_tn = 1;
            }
        }
        t.is_thread = 1;
        sp__thread *th = sp__builder_thread(&l->b, t.tid);
        if (!th) return sp__pft_nomem(l);
        if (has_tn) th->name = sp__names_from_bytes(&l->b.r->names, (const char *)tn.p, (size_t)(tn.end - tn.p));
    }
    if (has_name) t.name = sp__names_from_bytes(&l->b.r->names, (const char *)name.p, (size_t)(name.end - name.p));
    if (l->track_count == l->track_cap) {
        size_t cap = l->track_cap ? l->track_cap * 2 : 64;
        track *g = sp__realloc(l->tracks, sizeof *g * cap);
        if (!g) return sp__pft_nomem(l);
        l->tracks = g;
        l->track_cap = cap;
    }
    l->tracks[l->track_count++] = t;
    return SP_OK;
}

static sp_status read_interned(loader *l, seq *s, cur c)
{
    uint32_t f;
    unsigned wire;
    uint64_t v;
    cur sub;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "broken interned data");
        if (wire != SP__PB_LEN ||
            (f != PF_INTERNED_CATEGORIES && f != PF_INTERNED_NAMES && f != PF_INTERNED_ANNOTATION_NAMES &&
             f != PF_INTERNED_ANNOTATION_STRINGS))
            continue;
        uint64_t iid = 0;
        cur text = {sub.p, sub.p};
        uint32_t g;
        cur inner;
        while (sub.p < sub.end) {
            if (sp__pft_next_field(&sub, &g, &wire, &v, &inner) != 0) return sp__pft_bad(l, "broken interned data");
            if (g == PF_INTERNED_IID && wire == SP__PB_VARINT) iid = v;
            if (g == PF_INTERNED_NAME && wire == SP__PB_LEN) text = inner;
        }
        table *t = f == PF_INTERNED_CATEGORIES ? &s->cats
                   : f == PF_INTERNED_NAMES    ? &s->names
                   : f == PF_INTERNED_ANNOTATION_NAMES ? &s->anns
                                                       : &s->strs;
        int rc = table_set(t, iid, &text, 0);
        if (rc == -1) return sp__pft_bad(l, "an interned id out of range");
        if (rc == -2) return sp__pft_nomem(l);
        entry *e = &t->e[iid];
        if (f == PF_INTERNED_CATEGORIES) e->meaning = category_type(e->text);
        if (f == PF_INTERNED_ANNOTATION_NAMES) e->meaning = annotation_of(e->text);
    }
    return SP_OK;
}

static sp_status read_annotation(loader *l, seq *s, cur c, gpu_args *out)
{
    uint32_t f;
    unsigned wire;
    uint64_t v, value = 0;
    cur sub, str = {0};
    int which = -1, is_str = 0;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken debug annotation");
        if (f == PF_ANN_NAME_IID && wire == SP__PB_VARINT) {
            const entry *e = table_get(&s->anns, v);
            if (e) which = e->meaning;
        } else if ((f == PF_ANN_UINT || f == PF_ANN_INT) && wire == SP__PB_VARINT) {
            value = v;
        } else if (f == PF_ANN_DOUBLE && wire == SP__PB_I64) {
            value = v;
        } else if (f == PF_ANN_STRING && wire == SP__PB_LEN) {
            str = sub;
            is_str = 1;
        } else if (f == PF_ANN_STRING_IID && wire == SP__PB_VARINT) {
            const entry *e = table_get(&s->strs, v);
            if (!e) return sp__pft_bad(l, "an annotation string that was never interned");
            str.p = (const uint8_t *)e->text;
            str.end = str.p + strlen(e->text);
            is_str = 1;
        }
    }
    if (which < 0) return SP_OK;
    out->ann[which] = value;
    out->have |= (uint64_t)1 << which;
    if (is_str) {
        size_t n = (size_t)(str.end - str.p);
        char *dst = which == PF_A_GRID ? out->grid : which == PF_A_BLOCK ? out->block : NULL;
        if (dst) {
            if (n > 31) n = 31;
            memcpy(dst, str.p, n);
            dst[n] = '\0';
        } else if (which == PF_A_PLACE || which == PF_A_RECORDED) {
            out->ann[which] = sp__names_from_bytes(&l->b.r->names, (const char *)str.p, n);
        }
    }
    return SP_OK;
}

static sp_status read_event(loader *l, seq *s, cur c, tevent *te)
{
    uint32_t f;
    unsigned wire;
    uint64_t v;
    cur sub;
    te->anns = c;
    te->cat = -1;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken track event");
        switch (f) {
        case PF_TE_TYPE:
            te->type = v;
            break;
        case PF_TE_TRACK_UUID:
            te->track = v;
            te->has_track = 1;
            break;
        case PF_TE_NAME_IID: {
            const entry *e = table_get(&s->names, v);
            if (!e) return sp__pft_bad(l, "an event name that was never interned");
            te->name.p = (const uint8_t *)e->text;
            te->name.end = te->name.p + strlen(e->text);
            te->has_name = 1;
            break;
        }
        case PF_TE_NAME:
            if (wire == SP__PB_LEN) {
                te->name = sub;
                te->has_name = 1;
            }
            break;
        case PF_TE_CATEGORY_IIDS: {
            const entry *e = table_get(&s->cats, v);
            if (!e) return sp__pft_bad(l, "a category that was never interned");
            te->cat = e->meaning;
            te->has_cat = 1;
            break;
        }
        case PF_TE_CATEGORIES:
            if (wire == SP__PB_LEN) {
                char text[16] = "";
                size_t n = (size_t)(sub.end - sub.p);
                if (n < sizeof text) memcpy(text, sub.p, n);
                te->cat = category_type(text);
                te->has_cat = 1;
            }
            break;
        case PF_TE_DOUBLE_COUNTER_VALUE:
            memcpy(&te->counter, &v, sizeof v);
            break;
        case PF_TE_EXTRA_COUNTER_VALUES:
            if (wire == SP__PB_VARINT && te->extra_count < 2) te->extra_values[te->extra_count++] = v;
            break;
        case PF_TE_DEBUG_ANNOTATIONS:
            if (wire == SP__PB_LEN && read_annotation(l, s, sub, &te->s) != SP_OK) return l->status;
            break;
        }
    }
    return SP_OK;
}


int sp__is_pftrace(const unsigned char *head, size_t n)
{
    cur c = {head + 1, head + n};
    uint64_t len;
    if (n < 2 || head[0] != ((PF_TRACE_PACKET << 3) | SP__PB_LEN) || get_varint(&c, &len) != 0)
        return 0;
    return (size_t)(c.end - c.p) >= PF_FIRST_PACKET_BODY_LEN &&
           memcmp(c.p, PF_FIRST_PACKET_BODY, PF_FIRST_PACKET_BODY_LEN) == 0;
}

static sp_status handle_event(loader *l, seq *s, cur c, int64_t ts)
{
    tevent te;
    memset(&te, 0, sizeof te);
    if (read_event(l, s, c, &te) != SP_OK) return l->status;
    uint64_t uuid = te.has_track ? te.track : s->track;
    track *tr = find_track(l, uuid);
    if (!tr) return sp__pft_bad(l, "an event on a track never described");
    if (te.cat == SP_EVENT_TYPE_COUNT + 1) {
        if (te.type != PF_TYPE_INSTANT || !te.has_name) return SP_OK;
        size_t n = (size_t)(te.name.end - te.name.p);
        int device = n == strlen(PF_NAME_DEVICE) && memcmp(te.name.p, PF_NAME_DEVICE, n) == 0;
        int meta = n == strlen(PF_NAME_METADATA) && memcmp(te.name.p, PF_NAME_METADATA, n) == 0;
        return device || meta ? sp__pft_read_metadata(l, &te, device) : SP_OK;
    }
    if (te.type == PF_TYPE_SLICE_END) {
        if (!tr->depth) return sp__pft_bad(l, "a slice end with no slice open");
        slice sl = tr->open[--tr->depth];
        const gpu_args *args = &te.s;
        if (sl.full) {
            if (!tr->args_depth) return sp__pft_bad(l, "a slice end with no slice open");
            args = &tr->args[--tr->args_depth];
        }
        return sp__pft_close_slice(l, tr, &sl, args, ts);
    }
    int type = te.cat >= 0 ? te.cat : SP_EVENT_USER_DEFINED;
    if (te.type == PF_TYPE_COUNTER) {
        track *th = sp__pft_thread_of(l, tr);
        if (!th) return sp__pft_bad(l, "a counter on a track of no thread");
        sp__thread *t = sp__builder_thread(&l->b, th->tid);
        sp__event *e = t ? sp__builder_event(&l->b, t) : NULL;
        if (!e) return sp__pft_nomem(l);
        e->start_ns = e->end_ns = ts;
        e->name = tr->name;
        e->type = (uint8_t)(type < SP_EVENT_TYPE_COUNT ? type : SP_EVENT_USER_DEFINED);
        e->flags = SP_EVENT_FLAG_COUNTER;
        e->value = te.counter;
        return SP_OK;
    }
    if (te.type == PF_TYPE_INSTANT && type == SP_EVENT_TYPE_COUNT) return sp__pft_add_mem(l, tr, &te, ts);
    if (type >= SP_EVENT_TYPE_COUNT) type = SP_EVENT_USER_DEFINED;
    if (!te.has_name) return sp__pft_bad(l, "an event without a name");
    slice sl;
    memset(&sl, 0, sizeof sl);
    sl.start = ts;
    sl.type = (uint8_t)type;
    sl.full = type == SP_EVENT_KERNEL || type == SP_EVENT_MEMCPY || type == SP_EVENT_MEMSET ||
              type == SP_EVENT_CUDA_RUNTIME;
    sl.name = sl.full ? sp__names_from_bytes(&l->b.r->names, (const char *)te.name.p,
                                             (size_t)(te.name.end - te.name.p))
                      : sp__pft_recorded_name(l, type, te.name);
    sl.flags = (uint8_t)(te.s.ann[PF_A_FLAGS] & PF_KEPT_FLAGS);
    if (te.s.have & ((uint64_t)1 << PF_A_NUM_SAMPLES)) {
        sl.flags |= SP_EVENT_FLAG_SAMPLES;
        memcpy(&sl.value, &te.s.ann[PF_A_NUM_SAMPLES], sizeof sl.value);
    }
    if (te.type == PF_TYPE_INSTANT) {
        if (sl.full) return sp__pft_bad(l, "a GPU record as an instant");
        sl.flags |= SP_EVENT_FLAG_INSTANT;
        return sp__pft_close_slice(l, tr, &sl, &te.s, ts);
    }
    if (te.type != PF_TYPE_SLICE_BEGIN) return sp__pft_bad(l, "an event of a type stepprof never writes");
    if (tr->depth == tr->cap) {
        size_t cap = tr->cap ? tr->cap * 2 : 16;
        slice *g = sp__realloc(tr->open, sizeof *g * cap);
        if (!g) return sp__pft_nomem(l);
        tr->open = g;
        tr->cap = cap;
    }
    if (sl.full) {
        if (tr->args_depth == tr->args_cap) {
            if (tr->args_cap >= MAX_GPU_DEPTH) return sp__pft_bad(l, "GPU records nested too deep");
            size_t cap = tr->args_cap ? tr->args_cap * 2 : 4;
            gpu_args *g = sp__realloc(tr->args, sizeof *g * cap);
            if (!g) return sp__pft_nomem(l);
            tr->args = g;
            tr->args_cap = cap;
        }
        tr->args[tr->args_depth++] = te.s;
    }
    tr->open[tr->depth++] = sl;
    return SP_OK;
}

static sp_status read_clock(loader *l, seq *s, cur c)
{
    uint32_t f, g;
    unsigned wire;
    uint64_t v;
    cur sub, inner;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken clock snapshot");
        if (f != PF_SNAPSHOT_CLOCKS || wire != SP__PB_LEN) continue;
        uint64_t id = 0, ts = 0, incremental = 0;
        while (sub.p < sub.end) {
            if (sp__pft_next_field(&sub, &g, &wire, &v, &inner) != 0) return sp__pft_bad(l, "a broken clock snapshot");
            if (g == PF_CLOCK_ID) id = v;
            if (g == PF_CLOCK_TIMESTAMP) ts = v;
            if (g == PF_CLOCK_INCREMENTAL) incremental = v;
        }
        if (id == PF_CLOCK_SEQUENCE) {
            if (!incremental) return sp__pft_bad(l, "a sequence clock that is not incremental");
            s->last_ns = (int64_t)(ts & INT64_MAX);
        }
    }
    return SP_OK;
}

static sp_status read_defaults(loader *l, seq *s, cur c)
{
    uint32_t f, g;
    unsigned wire;
    uint64_t v;
    cur sub, inner;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "broken packet defaults");
        if (f == PF_DEFAULTS_CLOCK_ID) {
            if (v != PF_CLOCK_SEQUENCE) return sp__pft_bad(l, "a default clock stepprof never writes");
            s->incremental = 1;
        } else if (f == PF_DEFAULTS_TRACK_EVENT && wire == SP__PB_LEN) {
            while (sub.p < sub.end) {
                if (sp__pft_next_field(&sub, &g, &wire, &v, &inner) != 0) return sp__pft_bad(l, "broken packet defaults");
                if (g == PF_TE_DEFAULTS_TRACK_UUID) s->track = v;
            }
        }
    }
    return SP_OK;
}

static void seq_reset(seq *s)
{
    table_fini(&s->names);
    table_fini(&s->cats);
    table_fini(&s->anns);
    table_fini(&s->strs);
    s->incremental = 0;
    s->track = 0;
    s->last_ns = 0;
}

static sp_status read_packet(loader *l, cur c)
{
    uint32_t f;
    unsigned wire;
    uint64_t v, seq_id = 0, ts = 0, flags = 0;
    int has_ts = 0;
    cur sub, te = {0}, interned = {0}, clock = {0}, defaults = {0}, desc = {0};
    cur start = c;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken packet");
        if (f == PF_PACKET_TIMESTAMP && wire == SP__PB_VARINT) ts = v, has_ts = 1;
        else if (f == PF_PACKET_SEQUENCE_ID && wire == SP__PB_VARINT) seq_id = v;
        else if (f == PF_PACKET_SEQUENCE_FLAGS && wire == SP__PB_VARINT) flags = v;
        else if (wire == SP__PB_LEN) {
            if (f == PF_PACKET_TRACK_EVENT) te = sub;
            else if (f == PF_PACKET_INTERNED_DATA) interned = sub;
            else if (f == PF_PACKET_CLOCK_SNAPSHOT) clock = sub;
            else if (f == PF_PACKET_DEFAULTS) defaults = sub;
            else if (f == PF_PACKET_TRACK_DESCRIPTOR) desc = sub;
        }
    }
    (void)start;
    if (seq_id == 0 || seq_id >= MAX_SEQ) return sp__pft_bad(l, "a packet of no sequence stepprof writes");
    seq *s = &l->seqs[seq_id];
    if (flags & PF_SEQ_INCREMENTAL_STATE_CLEARED) {
        seq_reset(s);
        s->used = 1;
    }
    if (!s->used) return sp__pft_bad(l, "a sequence that never cleared its state");
    if (clock.p && read_clock(l, s, clock) != SP_OK) return l->status;
    if (defaults.p && read_defaults(l, s, defaults) != SP_OK) return l->status;
    if (interned.p && read_interned(l, s, interned) != SP_OK) return l->status;
    if (desc.p && read_descriptor(l, desc) != SP_OK) return l->status;
    if (!te.p) return SP_OK;
    if (!has_ts) return sp__pft_bad(l, "an event without a timestamp");
    int64_t t;
    if (s->incremental) {
        if (ts > (uint64_t)INT64_MAX - (uint64_t)s->last_ns) return sp__pft_bad(l, "a timestamp out of range");
        t = s->last_ns + (int64_t)ts;
        s->last_ns = t;
    } else {
        t = (int64_t)(ts & INT64_MAX);
    }
    return handle_event(l, s, te, t);
}

/* Reads packets until the end of the file. */
static sp_status read_packets(loader *l, FILE *f, const sp_load_options *opts, uint64_t total)
{
    sp__buf pkt;
    sp__buf_init(&pkt);
    uint64_t done = 0, next_progress = 4u << 20;
    for (;;) {
        int c = getc(f);
        if (c == EOF) break;
        if (c != ((PF_TRACE_PACKET << 3) | SP__PB_LEN)) {
            sp__pft_bad(l, done == 0 ? "it does not begin with a trace packet" : "a field other than a packet");
            break;
        }
        uint64_t len = 0;
        int shift = 0, ok = 0;
        while (shift < 64 && (c = getc(f)) != EOF) {
            len |= (uint64_t)(c & 0x7f) << shift;
            shift += 7;
            if (!(c & 0x80)) {
                ok = 1;
                break;
            }
        }
        if (!ok || len > MAX_PACKET) {
            sp__pft_bad(l, ok ? "a packet too large" : "the file is cut short");
            break;
        }
        pkt.len = 0;
        if (sp__buf_reserve(&pkt, (size_t)len + 1) != 0) {
            sp__pft_nomem(l);
            break;
        }
        if (fread(pkt.data, 1, (size_t)len, f) != len) {
            sp__pft_bad(l, "the file is cut short");
            break;
        }
        if (done == 0 && (len < PF_FIRST_PACKET_BODY_LEN ||
                          memcmp(pkt.data, PF_FIRST_PACKET_BODY, PF_FIRST_PACKET_BODY_LEN) != 0)) {
            sp__pft_bad(l, "its first packet is not stepprof's");
            break;
        }
        done += len + 2;
        cur p = {(const uint8_t *)pkt.data, (const uint8_t *)pkt.data + len};
        if (read_packet(l, p) != SP_OK) break;
        if (opts->progress && done >= next_progress) {
            opts->progress(done, total, opts->progress_user);
            next_progress = done + (4u << 20);
        }
    }
    if (ferror(f) && l->status == SP_OK)
        l->status = sp__fail(SP_EIO, "%s: cannot read: %s", l->path, strerror(errno));
    if (opts->progress && l->status == SP_OK) opts->progress(total, total, opts->progress_user);
    sp__buf_fini(&pkt);
    return l->status;
}

sp_status sp__load_pftrace(FILE *f, const char *path, const sp_load_options *opts, sp_result **out)
{
    loader l;
    memset(&l, 0, sizeof l);
    l.path = path;
    if (sp__builder_init(&l.b) != 0) return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    l.seqs = sp__alloc(sizeof *l.seqs * MAX_SEQ);
    if (!l.seqs) sp__pft_nomem(&l);
    uint64_t total = 0;
    if (fseeko(f, 0, SEEK_END) == 0) {
        off_t end = ftello(f);
        total = end > 0 ? (uint64_t)end : 0;
        if (fseeko(f, 0, SEEK_SET) != 0) total = 0;
    }
    if (l.status == SP_OK) read_packets(&l, f, opts, total);
    if (l.status == SP_OK && !l.have_meta) sp__pft_bad(&l, "it has no stepprof metadata event");
    if (l.status == SP_OK) {
        for (size_t i = 0; i < l.track_count; i++)
            if (l.tracks[i].depth) {
                sp__pft_bad(&l, "a slice never ended");
                break;
            }
    }
    if (l.seqs)
        for (size_t i = 0; i < MAX_SEQ; i++)
            if (l.seqs[i].used) seq_reset(&l.seqs[i]);
    sp__free(l.seqs);
    for (size_t i = 0; i < l.track_count; i++) {
        sp__free(l.tracks[i].open);
        sp__free(l.tracks[i].args);
    }
    sp__free(l.tracks);
    sp_status s = l.status;
    if (s == SP_OK) s = sp__builder_finish(&l.b, l.have_counters, path, out);
    if (s != SP_OK) sp__builder_fini(&l.b);
    return s;
}
