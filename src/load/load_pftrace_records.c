/* load_pftrace_records.c: the half of the .pftrace reader that builds the
 * result (load_pftrace.c reads the packets): a closed slice becomes a host
 * range, a runtime call or a GPU record, a memory instant a memory event,
 * and the metadata events restore the span, where it ran, its counters
 * and the device properties. Names come back as the JSON loader gives
 * them back from the same spelling. */
#include "load_pftrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The recorded name of a host event from its spelling in the file (as the
 * JSON loader restores it). */
uint32_t sp__pft_recorded_name(loader *l, int type, cur n)
{
    const char *s = (const char *)n.p;
    size_t len = (size_t)(n.end - n.p);
    sp__names *names = &l->b.r->names;
    if (type == SP_EVENT_PROFILE_STEP && len >= 13 && memcmp(s, "ProfilerStep#", 13) == 0) {
        sp__buf b;
        sp__buf_init(&b);
        sp__buf_puts(&b, "ProfileStep#");
        sp__buf_append(&b, s + 13, len - 13);
        uint32_t id = sp__names_from_bytes(names, b.data ? b.data : "", b.len);
        if (b.failed) l->b.failed = 1;
        sp__buf_fini(&b);
        return id;
    }
    static const char prefix[] = "enumerate(DataLoader)#", suffix[] = ".__next__";
    size_t np = sizeof prefix - 1, ns = sizeof suffix - 1;
    if (type == SP_EVENT_DATALOADER && len >= np + ns && memcmp(s, prefix, np) == 0 &&
        memcmp(s + len - ns, suffix, ns) == 0)
        return sp__names_from_bytes(names, s + np, len - np - ns);
    return sp__names_from_bytes(names, s, len);
}

static unsigned parse3(const char *s, uint32_t out[3])
{
    char *end;
    unsigned n = 0;
    while (n < 3 && *s) {
        out[n++] = (uint32_t)strtoul(s, &end, 10);
        if (*end != ',') break;
        s = end + 1;
    }
    return n;
}

/* A closed slice becomes a host range, a runtime call or a device record. */
sp_status sp__pft_close_slice(loader *l, track *tr, const slice *sl, const gpu_args *s, int64_t end)
{
    track *th = sp__pft_thread_of(l, tr);
    if (sl->type == SP_EVENT_KERNEL || sl->type == SP_EVENT_MEMCPY || sl->type == SP_EVENT_MEMSET) {
        sp__device_rec *d = sp__builder_device(&l->b, (s->have & ((uint64_t)1 << PF_A_INDEX)) ? s->ann[PF_A_INDEX] : UINT64_MAX);
        if (!d) return sp__pft_nomem(l);
        d->start_ns = sl->start;
        d->end_ns = end;
        d->type = (uint8_t)sl->type;
        d->name = sl->name;
        int recorded = (s->have & ((uint64_t)1 << PF_A_RECORDED)) != 0;
        if (recorded) d->name = (uint32_t)s->ann[PF_A_RECORDED];
        d->correlation = (uint32_t)s->ann[PF_A_CORRELATION];
        d->device = (uint32_t)s->ann[PF_A_DEVICE];
        d->context = (uint32_t)s->ann[PF_A_CONTEXT];
        d->stream = (uint32_t)s->ann[PF_A_STREAM];
        d->bytes = s->ann[PF_A_BYTES];
        if (sl->type == SP_EVENT_KERNEL) {
            sp__kernel_detail *k = &d->detail.kernel;
            parse3(s->grid, k->grid);
            parse3(s->block, k->block);
            k->registers = (uint32_t)s->ann[PF_A_REGISTERS];
            k->static_shared = (uint32_t)s->ann[PF_A_STATIC_SHARED];
            k->dynamic_shared = (uint32_t)s->ann[PF_A_DYNAMIC_SHARED];
            k->local_per_thread = (uint32_t)s->ann[PF_A_LOCAL_PER_THREAD];
            k->local_total = (uint32_t)s->ann[PF_A_LOCAL_TOTAL];
            k->queued_ns = s->ann[PF_A_QUEUED];
            k->submitted_ns = s->ann[PF_A_SUBMITTED];
        } else if (sl->type == SP_EVENT_MEMCPY) {
            d->detail.copy.copy_kind = (uint8_t)(s->ann[PF_A_COPY_KIND] < SP__GPU_COPY_KINDS ? s->ann[PF_A_COPY_KIND] : 0);
            d->detail.copy.src_kind = (uint8_t)(s->ann[PF_A_SRC_KIND] < SP__GPU_MEMORY_KINDS ? s->ann[PF_A_SRC_KIND] : 0);
            d->detail.copy.dst_kind = (uint8_t)(s->ann[PF_A_DST_KIND] < SP__GPU_MEMORY_KINDS ? s->ann[PF_A_DST_KIND] : 0);
            if (!recorded) {
                char text[48];
                snprintf(text, sizeof text, "MEMCPY_%s", sp__gpu_copy_kind_name(d->detail.copy.copy_kind));
                d->name = sp__names_from_bytes(&l->b.r->names, text, strlen(text));
            }
        } else {
            d->detail.set.memory_kind = (uint8_t)(s->ann[PF_A_MEMORY_KIND] < SP__GPU_MEMORY_KINDS ? s->ann[PF_A_MEMORY_KIND] : 0);
            d->detail.set.value = (uint32_t)s->ann[PF_A_VALUE];
            if (!recorded) d->name = sp__names_from_bytes(&l->b.r->names, "MEMSET", 6);
        }
        return SP_OK;
    }
    if (!th) return sp__pft_bad(l, "a slice on a track of no thread");
    sp__thread *t = sp__builder_thread(&l->b, th->tid);
    if (!t) return sp__pft_nomem(l);
    if (sl->type == SP_EVENT_CUDA_RUNTIME) {
        sp__runtime *rt = sp__builder_runtime(&l->b, t);
        if (!rt) return sp__pft_nomem(l);
        rt->start_ns = sl->start;
        rt->end_ns = end;
        rt->name = (s->have & ((uint64_t)1 << PF_A_RECORDED)) ? (uint32_t)s->ann[PF_A_RECORDED] : sl->name;
        rt->correlation = (uint32_t)s->ann[PF_A_CORRELATION];
        rt->cbid = (uint32_t)s->ann[PF_A_CBID];
        rt->driver = s->ann[PF_A_DRIVER] != 0;
        return SP_OK;
    }
    sp__event *e = sp__builder_event(&l->b, t);
    if (!e) return sp__pft_nomem(l);
    e->start_ns = sl->start;
    e->end_ns = end;
    e->name = sl->name;
    e->type = (uint8_t)sl->type;
    e->flags = (uint8_t)sl->flags;
    e->value = sl->value;
    return SP_OK;
}

/* Copies text into dst of size bytes, cut to fit, NUL-terminated. */
static void copy_text(char *dst, size_t size, const char *text)
{
    size_t n = strlen(text);
    if (n >= size) n = size - 1;
    memcpy(dst, text, n);
    dst[n] = '\0';
}

static sp_status read_meta_annotation(loader *l, cur c, int device, sp__device_props *p)
{
    uint32_t f;
    unsigned wire;
    uint64_t v, value = 0;
    cur sub, name = {0}, str = {0};
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken debug annotation");
        if (f == PF_ANN_NAME && wire == SP__PB_LEN) name = sub;
        else if (f == PF_ANN_STRING && wire == SP__PB_LEN) str = sub;
        else if (wire == SP__PB_VARINT || wire == SP__PB_I64) value = v;
    }
    char key[96] = "";
    size_t n = (size_t)(name.end - name.p);
    if (!name.p || n >= sizeof key) return SP_OK;
    memcpy(key, name.p, n);
    char text[256] = "";
    size_t sn = str.p ? (size_t)(str.end - str.p) : 0;
    if (sn >= sizeof text) sn = sizeof text - 1;
    if (sn) memcpy(text, str.p, sn);
    double dv;
    memcpy(&dv, &value, sizeof dv);
    sp_result *r = l->b.r;
    sp__span_meta *m = &r->meta;
    if (device) {
#define U32(k) else if (strcmp(key, #k) == 0) p->k = (uint32_t)value;
#define U64(k) else if (strcmp(key, #k) == 0) p->k = value;
        if (strcmp(key, "name") == 0) memcpy(p->name, text, sn + 1);
        U32(id) U64(total_global_mem) U32(compute_major) U32(compute_minor)
        U32(max_threads_per_block) U32(max_threads_per_sm) U32(regs_per_block) U32(regs_per_sm)
        U32(warp_size) U64(shared_per_block) U64(shared_per_sm) U64(shared_per_block_optin)
        U32(num_sms) U32(max_blocks_per_sm)
#undef U32
#undef U64
        return SP_OK;
    }
    if (strcmp(key, "span_start_ns") == 0) r->span_start_ns = (int64_t)value;
    else if (strcmp(key, "span_end_ns") == 0) r->span_end_ns = (int64_t)value;
    else if (strcmp(key, "span_index") == 0) r->span_index = (uint32_t)value;
    else if (strcmp(key, "pid") == 0) m->pid = (int64_t)value;
    else if (strcmp(key, "process_name") == 0) copy_text(m->process_name, sizeof m->process_name, text);
    else if (strcmp(key, "cpu_process") == 0) m->cpu_process = dv;
    else if (strcmp(key, "cpu_system") == 0) m->cpu_system = dv;
    else if (strcmp(key, "rank") == 0) m->rank = (int64_t)value;
    else if (strcmp(key, "world_size") == 0) m->world_size = (int64_t)value;
    else if (strcmp(key, "local_rank") == 0) m->local_rank = (int64_t)value;
    else if (strcmp(key, "local_world_size") == 0) m->local_world_size = (int64_t)value;
    else if (strcmp(key, "hostname") == 0) copy_text(m->hostname, sizeof m->hostname, text);
    else if (strcmp(key, "job") == 0) copy_text(m->job, sizeof m->job, text);
    else if (strcmp(key, "dist_backend") == 0) {
        if (sp__dist_backend_ok(text)) copy_text(m->dist_backend, sizeof m->dist_backend, text);
    } else if (strcmp(key, "record_shapes") == 0) m->record_shapes = value != 0;
    else if (strcmp(key, "profile_memory") == 0) m->profile_memory = value != 0;
    else if (strcmp(key, "with_stack") == 0) m->with_stack = value != 0;
    else if (strcmp(key, "with_flops") == 0) m->with_flops = value != 0;
    else if (strcmp(key, "overwrite_oldest") == 0) m->overwrite_oldest = value != 0;
    else if (strncmp(key, "counter ", 8) == 0) {
        for (int k = 0; k < SP_COUNTER_COUNT; k++)
            if (strcmp(key + 8, sp_counter_name((sp_counter_kind)k)) == 0) r->counters[k] = value;
        l->have_counters = 1;
    } else if (strncmp(key, "dropped ", 8) == 0) {
        sp__thread *t = sp__builder_thread(&l->b, strtoull(key + 8, NULL, 10));
        if (!t) return sp__pft_nomem(l);
        t->dropped = value;
    }
    return SP_OK;
}

sp_status sp__pft_read_metadata(loader *l, const tevent *te, int device)
{
    sp__device_props p;
    memset(&p, 0, sizeof p);
    cur c = te->anns;
    uint32_t f;
    unsigned wire;
    uint64_t v;
    cur sub;
    while (c.p < c.end) {
        if (sp__pft_next_field(&c, &f, &wire, &v, &sub) != 0) return sp__pft_bad(l, "a broken track event");
        if (f == PF_TE_DEBUG_ANNOTATIONS && wire == SP__PB_LEN &&
            read_meta_annotation(l, sub, device, &p) != SP_OK)
            return l->status;
    }
    if (!device) {
        l->have_meta = 1;
        return SP_OK;
    }
    sp_result *r = l->b.r;
    if (r->device_prop_count >= 1024) return SP_OK;
    sp__device_props *g = sp__realloc(r->device_props, sizeof *g * (r->device_prop_count + 1));
    if (!g) return sp__pft_nomem(l);
    r->device_props = g;
    r->device_props[r->device_prop_count++] = p;
    return SP_OK;
}

sp_status sp__pft_add_mem(loader *l, track *tr, const tevent *te, int64_t ts)
{
    track *th = sp__pft_thread_of(l, tr);
    if (!th) return sp__pft_bad(l, "a memory event on a track of no thread");
    sp__thread *t = sp__builder_thread(&l->b, th->tid);
    sp__mem_event *m = t ? sp__builder_mem(&l->b, t) : NULL;
    if (!m) return sp__pft_nomem(l);
    const gpu_args *s = &te->s;
    m->ts_ns = ts;
    m->type = (uint8_t)(s->ann[PF_A_MEM_TYPE] <= SP_MEM_RESERVED_FREE ? s->ann[PF_A_MEM_TYPE] : 0);
    m->place = (s->have & ((uint64_t)1 << PF_A_PLACE)) ? (uint32_t)s->ann[PF_A_PLACE]
                                              : sp__names_from_bytes(&l->b.r->names, "", 0);
    m->addr = s->ann[PF_A_ADDR];
    m->bytes = (int64_t)s->ann[PF_A_MEM_BYTES];
    m->current_allocated = te->extra_count > 0 ? te->extra_values[0] : 0;
    m->current_reserved = te->extra_count > 1 ? te->extra_values[1] : 0;
    m->peak_allocated = s->ann[PF_A_PEAK_ALLOCATED];
    m->peak_reserved = s->ann[PF_A_PEAK_RESERVED];
    return SP_OK;
}
