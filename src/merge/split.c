/* split.c: sp_result_load_ranks, which reads a merged trace (merge.c,
 * docs/trace-format.md §13) back as one result per rank, so that every
 * per-rank analysis (the cross-rank summary above all) takes a merged job
 * as it takes the ranks' own files.
 *
 * Decisions:
 * - A merged trace is told by its header: a distributedInfo without a
 *   rank (every other writer names one). It is then read once, each event
 *   routed by its pid (the rank, or 1000 + 100 x rank + device for a GPU
 *   row) into an anonymous temporary file per rank, with a GPU row's pid
 *   turned back into its device; each of those is loaded by the JSON
 *   loader, so a rank's result is built exactly as from its own file.
 *   Temporary files keep memory bounded by the results, not by the trace.
 * - Times stay on the merged clock: the merge aligned them, and the
 *   cross-rank analyses only compare durations anyway.
 * - The rank's metadata comes from the trailing stepprof_merge record;
 *   without it (a file that only looks merged) the file is loaded whole,
 *   as sp_result_load does. */
#include "load.h"
#include "merge.h"

#include "json_escape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_RANK (1 << 16) /* routed pids above are left out, counted: a slot per rank up to it */

typedef struct rank_out {
    FILE *f;
    char *keys; /* the rank's kept header keys, `"key":value,...` (stepprof_merge's "header") */
    size_t keys_len;
    uint64_t events;
    int seen;    /* listed in stepprof_merge */
    int64_t pid; /* the rank's own host pid, -1 unknown */
    mg_header h; /* its rank, world, local rank and size, host, job, backend */
} rank_out;

typedef struct splitter {
    const char *path;
    mg_header h;
    rank_out *ranks;
    size_t n; /* slots: ranks 0..n-1 */
    uint64_t unrouted;
    int found_merge;
    sp__buf text;
    int failed;       /* out of memory or a write error... */
    sp_status status; /* ...whose status this is */
} splitter;

static rank_out *slot(splitter *s, long rank)
{
    if (rank < 0 || rank >= MAX_RANK) return NULL;
    if ((size_t)rank >= s->n) {
        size_t n = (size_t)rank + 1;
        rank_out *v = sp__realloc(s->ranks, n * sizeof *v);
        if (!v) {
            s->failed = 1;
            s->status = sp__fail(SP_ENOMEM, "out of memory reading the ranks of %s", s->path);
            return NULL;
        }
        memset(v + s->n, 0, (n - s->n) * sizeof *v);
        for (size_t i = s->n; i < n; i++)
            v[i].pid = -1;
        s->ranks = v;
        s->n = n;
    }
    return &s->ranks[rank];
}

static int write_fail(splitter *s)
{
    s->failed = 1;
    s->status = sp__fail(SP_EIO, "%s: cannot write a temporary file for its ranks: %s", s->path, strerror(errno));
    return -1;
}

static int open_rank(splitter *s, rank_out *o)
{
    o->f = tmpfile();
    if (!o->f) return write_fail(s);
    if (fprintf(o->f, "{\"baseTimeNanoseconds\":%lld,\"traceEvents\":[\n", (long long)s->h.base_ns) < 0)
        return write_fail(s);
    return 0;
}

/* One event: its text goes to its rank's file, a GPU row's pid made its
 * device again. */
static int route(void *ctx, sp__jlex *lx)
{
    splitter *s = ctx;
    mg_event ev;
    if (sp__merge_next_event_text(lx, &ev, &s->text) != 0) return -1;
    if (ev.pid_kind != 1 || ev.pid < 0) {
        s->unrouted++;
        return 0;
    }
    long rank = ev.pid < 1000 ? (long)ev.pid : (long)((ev.pid - 1000) / 100);
    rank_out *o = slot(s, rank);
    if (!o) {
        if (s->failed) return -1;
        s->unrouted++;
        return 0;
    }
    if (!o->f && open_rank(s, o) != 0) return -1;
    const char *t = s->text.data;
    size_t len = s->text.len;
    int ok = fputs(o->events ? ",\n" : "", o->f) >= 0;
    if (ev.pid >= 1000) {
        ok = ok && fwrite(t, 1, ev.pid_at, o->f) == ev.pid_at &&
             fprintf(o->f, "%lld", (long long)((ev.pid - 1000) % 100)) > 0 &&
             fwrite(t + ev.pid_end, 1, len - ev.pid_end, o->f) == len - ev.pid_end;
    } else {
        ok = ok && fwrite(t, 1, len, o->f) == len;
    }
    if (!ok) return write_fail(s);
    o->events++;
    return 0;
}

/* ---- the trailing stepprof_merge record ---- */

static int is_key(const sp__buf *tok, const char *key)
{
    size_t n = strlen(key);
    return tok->len == n && memcmp(tok->data, key, n) == 0;
}

/* A number's or string's text in tok: 0 number, 1 string, 2 other (skipped). */
static int scalar(sp__jlex *lx)
{
    int c = sp__jlex_peek(lx);
    if (c == '"') return sp__jlex_string(lx) == 0 ? 1 : -1;
    if (c == '-' || (c >= '0' && c <= '9')) return sp__jlex_number(lx) == 0 ? 0 : -1;
    lx->tok.len = 0;
    return sp__jlex_skip(lx) == 0 ? 2 : -1;
}

/* The rank's header keys: the object's text without its braces. */
static int read_header(splitter *s, sp__jlex *lx, rank_out *r)
{
    sp__buf raw;
    sp__buf_init(&raw);
    sp__jlex_tee(lx, &raw);
    int rc = sp__jlex_skip(lx);
    sp__jlex_tee(lx, NULL);
    char *open = raw.data ? memchr(raw.data, '{', raw.len) : NULL;
    char *close = NULL;
    for (size_t i = raw.len; open && i > 0 && !close; i--)
        if (raw.data[i - 1] == '}') close = raw.data + i - 1;
    if (rc == 0 && !raw.failed && open && close && close > open) {
        size_t n = (size_t)(close - open - 1);
        sp__free(r->keys);
        r->keys = sp__alloc(n + 1);
        if (r->keys) {
            memcpy(r->keys, open + 1, n);
            r->keys_len = n;
        } else {
            s->failed = 1;
            s->status = sp__fail(SP_ENOMEM, "out of memory reading the ranks of %s", s->path);
            rc = -1;
        }
    } else if (rc == 0 && raw.failed) {
        s->failed = 1;
        s->status = sp__fail(SP_ENOMEM, "out of memory reading the ranks of %s", s->path);
        rc = -1;
    }
    sp__buf_fini(&raw);
    return rc;
}

typedef struct rank_ctx {
    splitter *s;
    rank_out *r;
} rank_ctx;

/* The keys of a rank entry that distributedInfo does not have. */
static int rank_key(void *ctx, sp__jlex *lx)
{
    rank_ctx *c = ctx;
    if (is_key(&lx->tok, "header") && sp__jlex_peek(lx) == '{') return read_header(c->s, lx, c->r) == 0 ? 1 : -1;
    if (!is_key(&lx->tok, "pid")) return 0;
    int k = scalar(lx);
    if (k < 0) return -1;
    char *end = NULL;
    long long v = k == 0 && lx->tok.len ? strtoll(lx->tok.data, &end, 10) : -1;
    if (end && !*end) c->r->pid = v;
    return 1;
}

static int read_rank(splitter *s, sp__jlex *lx)
{
    rank_out r = {.pid = -1};
    r.h.world_size = s->h.world_size;
    rank_ctx c = {s, &r};
    if (sp__merge_read_dist(lx, &r.h, rank_key, &c) != 0) {
        sp__free(r.keys);
        return -1;
    }
    rank_out *o = r.h.has_rank ? slot(s, r.h.rank) : NULL;
    if (!o) {
        sp__free(r.keys);
        return s->failed ? -1 : 0;
    }
    sp__free(o->keys);
    r.f = o->f;
    r.events = o->events;
    r.seen = 1;
    *o = r;
    return 0;
}

static int read_merge_record(splitter *s, sp__jlex *lx)
{
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    s->found_merge = 1;
    if (sp__jlex_expect(lx, '{') != 0) return -1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    for (;;) {
        if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
        if (is_key(&lx->tok, "ranks") && sp__jlex_peek(lx) == '[') {
            if (sp__jlex_expect(lx, '[') != 0) return -1;
            if (sp__jlex_peek(lx) == ']') {
                if (sp__jlex_expect(lx, ']') != 0) return -1;
            } else {
                int more = 1;
                while (more == 1) {
                    if (sp__jlex_peek(lx) == '{') {
                        if (read_rank(s, lx) != 0) return -1;
                    } else if (sp__jlex_skip(lx) != 0) {
                        return -1;
                    }
                    more = sp__jlex_next(lx, ']');
                }
                if (more < 0) return -1;
            }
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        int more = sp__jlex_next(lx, '}');
        if (more <= 0) return more;
    }
}

/* Reads the whole file: header (already looked at), events, trailing keys. */
static int read_merged(splitter *s, sp__jlex *lx)
{
    if (sp__jlex_peek(lx) != '[') return sp__jlex_error(lx, "\"traceEvents\" is not an array");
    if (sp__jlex_expect(lx, '[') != 0) return -1;
    if (sp__jlex_peek(lx) != ']') {
        int more = 1;
        while (more == 1) {
            if (route(s, lx) != 0) return -1;
            more = sp__jlex_next(lx, ']');
        }
        if (more < 0) return -1;
    } else if (sp__jlex_expect(lx, ']') != 0) {
        return -1;
    }
    for (;;) {
        int more = sp__jlex_next(lx, '}');
        if (more <= 0) return more;
        if (sp__jlex_string(lx) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
        int rc = is_key(&lx->tok, "stepprof_merge") ? read_merge_record(s, lx) : sp__jlex_skip(lx);
        if (rc != 0) return -1;
    }
}

/* ---- loading each rank ---- */

static void copy_cut(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void set_meta(sp_result *r, long rank, const rank_out *o, const mg_header *job)
{
    sp__span_meta *m = &r->meta;
    const mg_header *h = o->seen ? &o->h : job;
    m->rank = rank;
    m->world_size = h->world_size > rank ? h->world_size : rank + 1;
    m->local_rank = o->seen ? h->local_rank : rank;
    m->local_world_size = o->seen ? h->local_world_size : m->world_size;
    copy_cut(m->hostname, sizeof m->hostname, o->seen ? h->hostname : "");
    copy_cut(m->job, sizeof m->job, h->job[0] ? h->job : job->job);
    const char *backend = h->backend[0] ? h->backend : job->backend;
    if (sp__dist_backend_ok(backend)) copy_cut(m->dist_backend, sizeof m->dist_backend, backend);
    if (o->pid >= 0) m->pid = o->pid;
}

static sp_status load_rank(splitter *s, long rank, rank_out *o, const sp_load_options *opts,
                           sp_result **out)
{
    if (!o->f && open_rank(s, o) != 0) return s->status;
    int ok = fputs("\n]", o->f) >= 0;
    if (ok && o->keys_len)
        ok = fputc(',', o->f) != EOF && fwrite(o->keys, 1, o->keys_len, o->f) == o->keys_len;
    if (!ok || fputs("}\n", o->f) < 0 || fflush(o->f) != 0 || fseeko(o->f, 0, SEEK_SET) != 0) {
        write_fail(s);
        return s->status;
    }
    char label[4200];
    snprintf(label, sizeof label, "%s (rank %ld)", s->path, rank);
    sp_status st = sp__load_json(o->f, label, opts, out);
    if (st == SP_OK) set_meta(*out, rank, o, &s->h);
    return st;
}

static void close_all(splitter *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->ranks[i].f) fclose(s->ranks[i].f);
        sp__free(s->ranks[i].keys);
    }
    sp__free(s->ranks);
    sp__buf_fini(&s->text);
}

/* Splits the open merged trace; *merged 0 when it turned out not to be one. */
static sp_status split(splitter *s, sp__jlex *lx, const sp_load_options *opts, sp_result ***out,
                       size_t *count, int *merged)
{
    int rc = read_merged(s, lx);
    if (s->failed) return s->status;
    if (rc != 0)
        return lx->status != SP_OK ? lx->status : sp__fail(SP_EFORMAT, "%s: not a valid JSON trace", s->path);
    if (!s->found_merge) {
        *merged = 0;
        return SP_OK;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->ranks[i].seen || s->ranks[i].f;
    sp_result **v = sp__alloc((n ? n : 1) * sizeof *v);
    if (!v) return sp__fail(SP_ENOMEM, "out of memory reading the ranks of %s", s->path);
    sp_status st = SP_OK;
    size_t k = 0;
    for (size_t i = 0; i < s->n && st == SP_OK; i++) {
        if (!s->ranks[i].seen && !s->ranks[i].f) continue;
        st = load_rank(s, (long)i, &s->ranks[i], opts, &v[k]);
        if (st == SP_OK) k++;
    }
    if (st == SP_OK && k && s->unrouted) v[0]->counters[SP_COUNTER_LOAD_SKIPPED] += s->unrouted;
    if (st != SP_OK) {
        sp_results_release(v, k);
        return st;
    }
    *out = v;
    *count = k;
    return SP_OK;
}

static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A merged trace written as .pb: one result per rank; *count 0 for any
 * other file (or an error, which sp_result_load then words). */
static sp_status load_pb_ranks(const char *path, const sp_load_options *opts, sp_result ***out,
                               size_t *count)
{
    if (!is_regular(path) || (opts->format != SP_FORMAT_AUTO && opts->format != SP_FORMAT_PROTOBUF))
        return SP_OK;
    FILE *f = fopen(path, "rb");
    if (!f) return SP_OK;
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    int pb = n > 0 && !sp__is_dump(head, n) && head[0] != 0x1f && head[0] != '{' && head[0] != '[' &&
             head[0] != ' ' && head[0] != '\n' && head[0] != '\r' && head[0] != '\t' && head[0] != 0xef;
    sp_status s = SP_OK;
    if (pb && fseeko(f, 0, SEEK_SET) == 0) s = sp__load_pb_ranks(f, path, opts, out, count);
    fclose(f);
    return s;
}

sp_status sp_result_load_ranks(const char *path, const sp_load_options *opts, sp_result ***out,
                               size_t *count)
{
    if (!path || !*path || !out || !count)
        return sp__fail(SP_EINVAL, "sp_result_load_ranks: NULL or empty path, out or count");
    *out = NULL;
    *count = 0;
    sp_load_options defaults;
    sp_load_options_init(&defaults);
    if (!opts) opts = &defaults;
    int merged = 0;
    sp_status st = SP_OK;
    FILE *f = NULL;
    sp__jlex lx;
    int lx_open = 0;
    splitter s = {.path = path};
    sp__buf_init(&s.text);
    /* Only a regular JSON file can be a merged trace worth splitting (a
     * pipe's bytes are read once, by sp_result_load). */
    if (is_regular(path) && (opts->format == SP_FORMAT_AUTO || opts->format == SP_FORMAT_JSON ||
                             opts->format == SP_FORMAT_JSON_GZ)) {
        f = fopen(path, "rb");
        if (f && sp__jlex_open(&lx, f, path) == SP_OK) {
            lx_open = 1;
            int c = sp__jlex_peek(&lx), in_events = 0;
            if (c == '{' && sp__merge_read(&lx, &s.h, MG_HEADER_ONLY | MG_STOP_AT_EVENTS, NULL, NULL, &in_events) == 0 &&
                s.h.has_dist && !s.h.has_rank && !in_events)
                merged = 1;
        }
    }
    if (merged) {
        st = split(&s, &lx, opts, out, count, &merged);
        if (st != SP_OK) merged = 1; /* the error stands */
    }
    close_all(&s);
    if (lx_open) sp__jlex_close(&lx);
    if (f) fclose(f);
    if (merged) return st;
    if (load_pb_ranks(path, opts, out, count) == SP_OK && *count > 0) return SP_OK;
    sp_result **v = sp__alloc(sizeof *v);
    if (!v) return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    st = sp_result_load(path, opts, &v[0]);
    if (st != SP_OK) {
        sp__free(v);
        return st;
    }
    *out = v;
    *count = 1;
    return SP_OK;
}

void sp_results_release(sp_result **results, size_t count)
{
    if (!results) return;
    for (size_t i = 0; i < count; i++)
        sp_result_release(results[i]);
    sp__free(results);
}
