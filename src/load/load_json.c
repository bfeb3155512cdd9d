/* load_json.c: reads stepprof's own Chrome-trace JSON (trace-format.md
 * §1-8, plain or gzip) back into a result, so that the tables and the CLI
 * work on a .json too. The file is parsed as a stream (json_lex.c): one
 * event at a time is read (json_event.c) and goes into the result builder
 * (json_take.c), so memory stays near that of the result whatever the
 * file's size. This file reads the top-level object and finishes the
 * result.
 *
 * What comes back: host ranges (cat cpu_op / user_annotation /
 * python_function; the type from
 * args "Event Type", the recorded name from the JSON spelling: ProfilerStep#N
 * -> ProfileStep#N, enumerate(DataLoader)#X.__next__ -> X), instants,
 * counter samples, memory events ([memory] / [reserved memory]), thread
 * names, the span (the "PyTorch Profiler (0)" marker), span index, CPU
 * utilisation and stepprof_counters; and the CUDA records (cuda_runtime /
 * cuda_driver calls, kernel, gpu_memcpy and gpu_memset records, which are
 * Kineto's cats too, and deviceProperties) through json_cuda.c, attributed
 * by correlation as for paddle's. Times are exact: ts and dur are read as
 * decimal microseconds with three decimals, not through a double. What the
 * JSON does not carry is not restored: a runtime call's _vNNNN suffix and
 * the other fields json_cuda.c lists, a memory event's peaks become running
 * maxima of its place's totals and its place "Place(cpu)" or
 * "Place(gpu:N)", per-thread drop counts are 0.
 *
 * Paddle's own chrome trace (trace-format.md §10.3) loads too, told apart
 * by its content, event by event: its cat is the event type's name
 * ("Operator", "ProfileStep", "PythonUserDefined"...), its tids are strings
 * ("6689(Python)" and "6689(C++)", both thread 6689) and its names end in
 * "[<dur> ms]", which is cut off. Its exact times, [memory] events and CUDA
 * records (CudaRuntime calls, Kernel, Memcpy and Memset) come through
 * json_paddle.c. In a file seen to be paddle's (a "<tid>(Python)" tid, a
 * string span index), an event of a cat it does not know is skipped and
 * counted. An event whose pid, tid, ts or dur holds a value of the wrong
 * type (a string or an object where a number belongs) is skipped and
 * counted (load_skipped), never dropped in silence. */
#include "json_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROGRESS_BYTES ((uint64_t)4 << 20)

static int read_events(sp__jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_expect(lx, '[') != 0) return -1;
    if (sp__jlex_peek(lx) == ']') return sp__jlex_expect(lx, ']');
    int more = 1;
    while (more == 1) {
        if (sp__jload_event(l) != 0 || sp__jload_take(l) != 0) return -1;
        if (l->b.failed) return sp__jload_nomem(l);
        more = sp__jlex_next(lx, ']');
    }
    return more < 0 ? -1 : 0;
}

static int read_counters(sp__jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    l->have_counters = 1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (sp__jload_key(l) != 0) return -1;
        int64_t v = 0;
        int ok = 0;
        if (sp__jload_int(l, &v, &ok) != 0) return -1;
        for (int c = 0; ok && c < SP_COUNTER_COUNT; c++)
            if (strcmp(l->key, sp_counter_name((sp_counter_kind)c)) == 0) l->b.r->counters[c] = (uint64_t)v;
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

/* "stepprof_thread_drops": {"<tid>": events the cap dropped on it}. */
static int read_thread_drops(sp__jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (sp__jload_key(l) != 0) return -1;
        char *end;
        unsigned long long tid = strtoull(l->key, &end, 10);
        int is_tid = l->key[0] >= '0' && l->key[0] <= '9' && *end == '\0';
        int64_t v = 0;
        int ok = 0;
        if (sp__jload_int(l, &v, &ok) != 0) return -1;
        if (is_tid && ok && v > 0) {
            sp__thread *t = sp__builder_thread(&l->b, tid);
            if (!t) return sp__jload_nomem(l);
            t->dropped = (uint64_t)v;
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

static int read_extra_info(sp__jloader *l)
{
    sp__jlex *lx = &l->lx;
    sp_result *r = l->b.r;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (sp__jload_key(l) != 0) return -1;
        char key[sizeof l->key];
        memcpy(key, l->key, sizeof key);
        if (sp__jlex_peek(lx) != '"') {
            if (sp__jlex_skip(lx) != 0) return -1;
        } else {
            if (sp__jlex_string(lx) != 0) return -1;
            const char *v = lx->tok.data;
            char *end;
            unsigned long long tid = strtoull(key, &end, 10);
            if (strcmp(key, "System Cpu Utilization") == 0) {
                r->meta.cpu_system = strtod(v, NULL);
            } else if (strcmp(key, "Process Cpu Utilization") == 0) {
                r->meta.cpu_process = strtod(v, NULL);
            } else if (key[0] >= '0' && key[0] <= '9' && *end == '\0') {
                sp__jthread_name *n = sp__realloc(l->names, sizeof *n * (l->name_count + 1));
                if (!n) return sp__jload_nomem(l);
                l->names = n;
                n[l->name_count++] = (sp__jthread_name){tid, sp__names_from_bytes(&r->names, v, lx->tok.len)};
            }
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

/* A torch flag: the integer 1 as Kineto (and stepprof since issue 17) writes
 * it, or the string "1" of older stepprof files. */
static int read_flag(sp__jloader *l, int *flag)
{
    int c = sp__jlex_peek(&l->lx);
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (sp__jlex_number(&l->lx) != 0) return -1;
        *flag = strcmp(sp__buf_cstr(&l->lx.tok), "1") == 0;
        return 0;
    }
    if (c != '"') return sp__jlex_skip(&l->lx);
    if (sp__jlex_string(&l->lx) != 0) return -1;
    *flag = strcmp(l->lx.tok.data, "1") == 0;
    return 0;
}

static int read_top(sp__jloader *l)
{
    sp__jlex *lx = &l->lx;
    sp_result *r = l->b.r;
    int c = sp__jlex_peek(lx);
    if (c == '[') return read_events(l); /* the array form: events only */
    if (c != '{') return sp__jlex_error(lx, c < 0 ? "empty file" : "'{' or '[' expected");
    sp__jlex_expect(lx, '{');
    int seen_events = 0;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (sp__jload_key(l) != 0) return -1;
        int rc, ok = 0;
        int64_t v = 0;
        if (strcmp(l->key, "traceEvents") == 0) {
            rc = read_events(l);
            seen_events = 1;
        } else if (strcmp(l->key, "deviceProperties") == 0) {
            rc = sp__cuda_read_props(lx, r, &l->skipped);
        } else if (strcmp(l->key, "distributedInfo") == 0) {
            rc = sp__json_read_dist(lx, r);
        } else if (strcmp(l->key, "stepprof_counters") == 0) {
            rc = read_counters(l);
        } else if (strcmp(l->key, "ExtraInfo") == 0) {
            rc = read_extra_info(l);
        } else if (strcmp(l->key, "stepprof_thread_drops") == 0) {
            rc = read_thread_drops(l);
        } else if (strcmp(l->key, "span_index") == 0 && sp__jlex_peek(lx) == '"') {
            rc = sp__jlex_string(lx); /* paddle 3.3's key, a string */
            if (rc == 0) r->span_index = (uint32_t)strtoul(lx->tok.data, NULL, 10);
            l->paddle = 1;
        } else if (strcmp(l->key, "span_indx") == 0 && sp__jlex_peek(lx) == '"') {
            rc = sp__jlex_string(lx); /* paddle writes it as a string */
            if (rc == 0) r->span_index = (uint32_t)strtoul(lx->tok.data, NULL, 10);
            l->paddle = 1;
        } else if (strcmp(l->key, "span_indx") == 0) {
            rc = sp__jload_int(l, &v, &ok);
            if (ok) r->span_index = (uint32_t)v;
        } else if (strcmp(l->key, "baseTimeNanoseconds") == 0) {
            rc = sp__jload_int(l, &v, &ok);
            if (ok) l->base_ns = v;
        } else if (strcmp(l->key, "record_shapes") == 0) {
            rc = read_flag(l, &r->meta.record_shapes);
        } else if (strcmp(l->key, "profile_memory") == 0) {
            rc = read_flag(l, &r->meta.profile_memory);
        } else if (strcmp(l->key, "with_flops") == 0) {
            rc = read_flag(l, &r->meta.with_flops);
        } else if (strcmp(l->key, "with_stack") == 0) {
            rc = read_flag(l, &r->meta.with_stack);
        } else if (strcmp(l->key, "overwrite_oldest") == 0) {
            rc = read_flag(l, &r->meta.overwrite_oldest);
        } else {
            rc = sp__jlex_skip(lx);
        }
        if (rc != 0) return -1;
        more = sp__jlex_next(lx, '}');
    }
    if (more < 0) return -1;
    if (!seen_events) return sp__jlex_error(lx, "no \"traceEvents\" in the trace");
    return 0;
}

/* Times were read relative to the base time, which may come after them. */
static void rebase(sp__jloader *l)
{
    sp_result *r = l->b.r;
    int64_t base = l->base_ns;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            t->events[k].start_ns = sp__jload_sat_add(t->events[k].start_ns, base);
            t->events[k].end_ns = sp__jload_sat_add(t->events[k].end_ns, base);
            if (t->events[k].start_ns < lo) lo = t->events[k].start_ns;
            if (t->events[k].end_ns > hi) hi = t->events[k].end_ns;
        }
        for (size_t k = 0; k < t->mem_count; k++) t->mems[k].ts_ns = sp__jload_sat_add(t->mems[k].ts_ns, base);
        for (size_t k = 0; k < t->comm_count; k++)
            t->comms[k].ts_ns = sp__jload_sat_add(t->comms[k].ts_ns, base);
        for (size_t k = 0; k < t->runtime_count; k++) {
            t->runtimes[k].start_ns = sp__jload_sat_add(t->runtimes[k].start_ns, base);
            t->runtimes[k].end_ns = sp__jload_sat_add(t->runtimes[k].end_ns, base);
        }
    }
    for (size_t d = 0; d < r->device_count; d++) {
        r->devices[d].start_ns = sp__jload_sat_add(r->devices[d].start_ns, base);
        r->devices[d].end_ns = sp__jload_sat_add(r->devices[d].end_ns, base);
    }
    if (l->have_span) {
        r->span_start_ns = sp__jload_sat_add(l->span_start, base);
        r->span_end_ns = sp__jload_sat_add(l->span_end, base);
    } else if (lo <= hi) {
        r->span_start_ns = lo;
        r->span_end_ns = hi;
    }
}

static void on_refill(void *user, uint64_t offset)
{
    sp__jloader *l = user;
    if (!l->opts->progress || offset < l->next_progress) return;
    l->opts->progress(offset, l->total_bytes, l->opts->progress_user);
    l->next_progress = offset + PROGRESS_BYTES;
}

sp_status sp__load_json(FILE *f, const char *path, const sp_load_options *opts, sp_result **out)
{
    sp__jloader *l = sp__alloc(sizeof *l);
    if (!l) return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    l->opts = opts;
    l->ev.helpers_used = 1; /* the args are not reset yet */
    struct stat st;
    if (fstat(fileno(f), &st) == 0) l->total_bytes = (uint64_t)st.st_size;
    sp_status s = sp__jlex_open(&l->lx, f, path);
    if (s != SP_OK) {
        sp__free(l);
        return s;
    }
    if (l->lx.gzip) l->total_bytes = 0; /* progress counts uncompressed bytes */
    l->lx.on_refill = on_refill;
    l->lx.user = l;
    if (sp__builder_init(&l->b) != 0) {
        s = sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    } else if (read_top(l) != 0) {
        s = l->lx.status != SP_OK ? l->lx.status : sp__fail(SP_EFORMAT, "%s: not a valid JSON trace", path);
    } else if (sp__jlex_peek(&l->lx) >= 0) {
        sp__jlex_error(&l->lx, "text after the trace");
        s = l->lx.status;
    } else if (l->lx.status != SP_OK) {
        s = l->lx.status; /* a read error or corrupt gzip at the end */
    } else {
        for (size_t i = 0; i < l->name_count; i++) {
            sp__thread *t = sp__builder_thread(&l->b, l->names[i].tid);
            if (t) t->name = l->names[i].name;
        }
        sp__paddle_finish(&l->b, &l->pclock);
        rebase(l);
        if (opts->progress) opts->progress(l->lx.offset, l->total_bytes ? l->total_bytes : l->lx.offset, opts->progress_user);
        s = sp__builder_finish(&l->b, l->have_counters, path, out);
        if (s == SP_OK) {
            /* What this load skipped or cut, on top of the file's counters. */
            (*out)->counters[SP_COUNTER_LOAD_SKIPPED] += l->skipped;
            (*out)->counters[SP_COUNTER_TRAILING_BYTES] += l->lx.trailing_bytes;
            (*out)->counters[SP_COUNTER_NAMES_CUT] += l->lx.strings_cut;
        }
    }
    if (s != SP_OK) sp__builder_fini(&l->b);
    sp__jlex_close(&l->lx);
    sp__jload_event_fini(&l->ev);
    sp__paddle_clock_fini(&l->pclock);
    sp__free(l->peaks);
    sp__free(l->names);
    sp__free(l);
    return s;
}
