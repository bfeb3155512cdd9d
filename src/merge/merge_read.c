/* merge_read.c: reads a Chrome-trace file for the merge, one event at a
 * time: the header keys that name the rank and the time base, and of each
 * event only what the merge rewrites (pid, ts, id) or aligns on (the
 * collectives' args). Everything else is skipped here and copied verbatim
 * by the writer through the lexer's tee. Absent keys take the defaults of
 * docs/trace-format.md §2 (rank 0 of 1, no host, no job). */
#include "merge.h"

#include "json_escape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t sp__merge_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ? h : 1; /* 0 means "absent" */
}

int sp__merge_us_to_ns(const char *text, int64_t *ns)
{
    const char *p = text;
    int neg = *p == '-';
    if (neg) p++;
    int64_t whole = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > INT64_MAX / 10000) goto slow;
        whole = whole * 10 + (*p - '0');
    }
    if (digits == 0) return -1;
    int64_t frac = 0;
    int fd = 0;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
            if (fd < 3)
                frac = frac * 10 + (*p - '0');
            else if (fd == 3 && *p >= '5')
                frac++; /* round half up on the 4th digit */
        }
    }
    if (*p) goto slow; /* an exponent */
    for (int i = fd; i < 3; i++)
        frac *= 10;
    *ns = whole * 1000 + frac;
    if (neg) *ns = -*ns;
    return 0;
slow:;
    char *end;
    errno = 0;
    double us = strtod(text, &end);
    if (*end || errno || !(us > -9e15 && us < 9e15)) return -1;
    double v = us * 1000.0;
    *ns = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
    return 0;
}

static int to_int(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (*end || errno || end == text) return -1;
    *out = v;
    return 0;
}

static int is_key(const sp__buf *tok, const char *key)
{
    size_t n = strlen(key);
    return tok->len == n && memcmp(tok->data, key, n) == 0;
}

static size_t tee_pos(sp__jlex *lx)
{
    return lx->tee ? sp__jlex_tee_pos(lx) : 0;
}

/* A string or a number as text in lx->tok; other values are skipped and
 * leave tok empty. 1 if it was a string, 0 a number, 2 another value, -1
 * an error. */
static int scalar(sp__jlex *lx)
{
    int c = sp__jlex_peek(lx);
    if (c == '"') return sp__jlex_string(lx) == 0 ? 1 : -1;
    if (c == '-' || (c >= '0' && c <= '9')) return sp__jlex_number(lx) == 0 ? 0 : -1;
    lx->tok.len = 0;
    return sp__jlex_skip(lx) == 0 ? 2 : -1;
}

static int gpu_name(const sp__buf *tok)
{
    return tok->len >= 4 && memcmp(tok->data, "GPU ", 4) == 0;
}

static int read_args(sp__jlex *lx, mg_event *ev)
{
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    if (sp__jlex_expect(lx, '{') != 0) return -1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    for (;;) {
        if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
        const sp__buf *t = &lx->tok;
        if (is_key(t, "Event Type")) {
            if (scalar(lx) < 0) return -1;
            ev->comm = is_key(t, "Communication");
        } else if (is_key(t, "Process Group Name") || is_key(t, "Collective name")) {
            uint64_t *to = t->data[0] == 'P' ? &ev->group : &ev->coll;
            int k = scalar(lx);
            if (k < 0) return -1;
            if (k != 2) *to = sp__merge_hash(t->data, t->len);
        } else if (is_key(t, "seq")) {
            int k = scalar(lx);
            if (k < 0) return -1;
            int64_t v;
            if (k == 0 && t->len && to_int(t->data, &v) == 0 && v >= 0) ev->seq = v;
        } else if (is_key(t, "name") || is_key(t, "labels")) {
            /* process_name {"name": "GPU 0"}, process_labels {"labels": "GPU 0"};
             * kept only for those (the event's name may come after args) */
            int k = scalar(lx);
            if (k < 0) return -1;
            if (k == 1 && gpu_name(t)) ev->gpu_meta = 1;
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        int more = sp__jlex_next(lx, '}');
        if (more <= 0) return more;
    }
}

static const char *const gpu_cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                                       "Kernel", "Memcpy",     "Memset",     NULL};

int sp__merge_read_event(sp__jlex *lx, mg_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->seq = -1;
    int args_done = 0;
    if (sp__jlex_expect(lx, '{') != 0) return -1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    for (;;) {
        if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
        const sp__buf *t = &lx->tok;
        if (is_key(t, "ph")) {
            if (scalar(lx) < 0) return -1;
            ev->ph = t->len ? t->data[0] : 0;
        } else if (is_key(t, "cat")) {
            if (scalar(lx) < 0) return -1;
            for (const char *const *c = gpu_cats; *c; c++)
                if (is_key(t, *c)) ev->gpu_cat = 1;
        } else if (is_key(t, "name")) {
            if (scalar(lx) < 0) return -1;
            if (is_key(t, "process_name")) ev->process_meta = 1;
            if (is_key(t, "process_sort_index")) ev->process_meta = 2;
            if (is_key(t, "process_labels")) ev->process_meta = 3;
        } else if (is_key(t, "pid") || is_key(t, "ts") || is_key(t, "id")) {
            int which = t->data[0] == 'p' ? 0 : t->data[0] == 't' ? 1 : 2;
            sp__jlex_peek(lx);
            size_t at = tee_pos(lx);
            int k = scalar(lx);
            if (k < 0) return -1;
            size_t end = tee_pos(lx);
            int64_t v;
            if (which == 0) {
                ev->pid_kind = k == 0 && t->len && to_int(t->data, &v) == 0 ? 1 : 2;
                ev->pid = ev->pid_kind == 1 ? v : 0;
                ev->pid_at = at;
                ev->pid_end = end;
            } else if (which == 1 && k == 0 && t->len && sp__merge_us_to_ns(t->data, &v) == 0) {
                ev->has_ts = 1;
                ev->ts_ns = v;
                ev->ts_at = at;
                ev->ts_end = end;
            } else if (which == 2 && k == 0 && t->len && to_int(t->data, &v) == 0) {
                ev->has_id = 1;
                ev->id = v;
                ev->id_at = at;
                ev->id_end = end;
            }
        } else if (is_key(t, "dur")) {
            int k = scalar(lx);
            if (k < 0) return -1;
            if (k == 0 && t->len && sp__merge_us_to_ns(t->data, &ev->dur_ns) == 0) ev->has_dur = 1;
        } else if (is_key(t, "args") && !args_done) {
            args_done = 1;
            if (read_args(lx, ev) != 0) return -1;
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        int more = sp__jlex_next(lx, '}');
        if (more < 0) return -1;
        if (!more) break;
    }
    if (ev->ph != 'M' || (ev->process_meta != 1 && ev->process_meta != 3)) ev->gpu_meta = 0;
    return 0;
}

static void copy_text(char *dst, size_t size, const sp__buf *tok)
{
    size_t n = tok->len < size - 1 ? tok->len : size - 1;
    memcpy(dst, tok->data, n);
    dst[n] = '\0';
}

int sp__merge_read_dist(sp__jlex *lx, mg_header *h, mg_key_fn other, void *ctx)
{
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    h->has_dist = 1;
    int has_local = 0, has_local_world = 0;
    if (sp__jlex_expect(lx, '{') != 0) return -1;
    if (sp__jlex_peek(lx) != '}') {
        for (;;) {
            if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
            const sp__buf *t = &lx->tok;
            int which = is_key(t, "rank")               ? 1
                        : is_key(t, "world_size")       ? 2
                        : is_key(t, "local_rank")       ? 3
                        : is_key(t, "local_world_size") ? 4
                        : is_key(t, "hostname")         ? 5
                        : is_key(t, "job")              ? 6
                        : is_key(t, "backend")          ? 7
                                                        : 0;
            if (!which && other) {
                int rc = other(ctx, lx);
                if (rc < 0) return -1;
                if (rc == 1) goto next;
            }
            int k = scalar(lx);
            if (k < 0) return -1;
            int64_t v = 0;
            int num = k == 0 && t->len && to_int(t->data, &v) == 0 && v >= 0 && v < (1 << 24);
            if (which == 1 && num) h->rank = (long)v, h->has_rank = 1;
            if (which == 2 && num) h->world_size = (long)v;
            if (which == 3 && num) h->local_rank = (long)v, has_local = 1;
            if (which == 4 && num) h->local_world_size = (long)v, has_local_world = 1;
            if (which == 5 && k == 1) copy_text(h->hostname, sizeof h->hostname, t);
            if (which == 6 && k == 1) copy_text(h->job, sizeof h->job, t);
            if (which == 7 && k == 1) copy_text(h->backend, sizeof h->backend, t);
        next:;
            int more = sp__jlex_next(lx, '}');
            if (more < 0) return -1;
            if (!more) break;
        }
    } else if (sp__jlex_expect(lx, '}') != 0) {
        return -1;
    }
    if (!has_local) h->local_rank = h->rank;
    if (!has_local_world) h->local_world_size = h->world_size;
    return 0;
}

static int read_events(sp__jlex *lx, mg_event_fn on_event, void *ctx)
{
    if (!on_event) return sp__jlex_skip(lx);
    if (sp__jlex_expect(lx, '[') != 0) return -1;
    if (sp__jlex_peek(lx) == ']') return sp__jlex_expect(lx, ']');
    for (;;) {
        int rc = on_event(ctx, lx);
        if (rc != 0) return rc;
        int more = sp__jlex_next(lx, ']');
        if (more <= 0) return more;
    }
}

int sp__merge_next_event_text(sp__jlex *lx, mg_event *ev, sp__buf *text)
{
    sp__jlex_peek(lx); /* whitespace before the event stays out of its text */
    text->len = 0;
    sp__jlex_tee(lx, text);
    int rc = sp__merge_next_event(lx, ev);
    sp__jlex_tee(lx, NULL);
    return rc;
}

int sp__merge_kept_key(const char *key, size_t len)
{
    static const char *const kept[] = {"deviceProperties",      "ExtraInfo",     "stepprof_counters",
                                       "stepprof_thread_drops", "span_indx",     "record_shapes",
                                       "profile_memory",        "with_flops",    "with_stack",
                                       "overwrite_oldest",      NULL};
    for (const char *const *k = kept; *k; k++)
        if (strlen(*k) == len && memcmp(*k, key, len) == 0) return 1;
    return 0;
}

/* Appends the key in tok and its value, verbatim, to keep. */
static int keep_value(sp__jlex *lx, sp__buf *keep)
{
    if (keep->len) sp__buf_putc(keep, ',');
    sp__json_put_string(keep, lx->tok.data, lx->tok.len);
    sp__buf_putc(keep, ':');
    sp__jlex_peek(lx);
    sp__jlex_tee(lx, keep);
    int rc = sp__jlex_skip(lx);
    sp__jlex_tee(lx, NULL);
    return rc;
}

int sp__merge_read(sp__jlex *lx, mg_header *h, int flags, mg_event_fn on_event, void *ctx,
                   int *in_events)
{
    sp__buf *keep = h->keep;
    memset(h, 0, sizeof *h);
    h->keep = keep;
    h->world_size = 1;
    h->local_world_size = 1;
    *in_events = 0;
    int c = sp__jlex_peek(lx);
    if (c == '[') { /* the bare-array form: events only */
        *in_events = 1;
        return read_events(lx, on_event, ctx) < 0 ? -1 : 0;
    }
    if (sp__jlex_expect(lx, '{') != 0) return -1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    for (;;) {
        if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
        const sp__buf *t = &lx->tok;
        if (is_key(t, "distributedInfo")) {
            if (sp__merge_read_dist(lx, h, NULL, NULL) != 0) return -1;
        } else if (is_key(t, "baseTimeNanoseconds")) {
            int k = scalar(lx);
            if (k < 0) return -1;
            if (k == 0 && t->len && to_int(t->data, &h->base_ns) == 0) h->has_base = 1;
        } else if (is_key(t, "traceEvents")) {
            if ((flags & MG_HEADER_ONLY) && (h->has_dist || (flags & MG_STOP_AT_EVENTS))) return 0;
            *in_events = 1;
            int rc = read_events(lx, (flags & MG_HEADER_ONLY) ? NULL : on_event, ctx);
            if (rc != 0) return rc < 0 ? -1 : 0;
            if (flags & MG_EVENTS_ONLY) return 0;
        } else if (keep && sp__merge_kept_key(t->data, t->len)) {
            if (keep_value(lx, keep) != 0) return -1;
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        int more = sp__jlex_next(lx, '}');
        if (more <= 0) return more;
    }
}
