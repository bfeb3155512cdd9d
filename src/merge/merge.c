/* merge.c: sp_trace_merge, the merge of a job's per-rank traces into one
 * (docs/trace-format.md §13). Three looks at each file, one file open at a
 * time: its header for the rank (so ranks can be checked and ordered before
 * any event is read), a first pass for its events' pids and its
 * collectives' ends (matched against the lowest rank's, then dropped), and
 * a second pass that writes its events. Between them, one clock offset per
 * host is solved (merge_align.c). Memory is the reference rank's
 * collectives, one other rank's, and a few hundred bytes per rank. */
#include "merge.h"

#include "export.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sp_merge_options_init(sp_merge_options *opts)
{
    if (opts) memset(opts, 0, sizeof *opts);
}

static void say(const sp_merge_options *o, int warning, const char *fmt, ...) SP__PRINTF(3, 4);
static void say(const sp_merge_options *o, int warning, const char *fmt, ...)
{
    if (!o->log) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->log(o->log_ctx, warning, line);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Opens path for reading as JSON; it must be a regular file, since it is
 * read more than once. */
static sp_status open_trace(const char *path, FILE **f, sp__jlex *lx)
{
    struct stat st;
    if (stat(path, &st) != 0) return sp__fail(SP_EIO, "%s: cannot read: no such file", path);
    if (!S_ISREG(st.st_mode))
        return sp__fail(SP_ENOTSUP,
                        "%s: merge reads each file twice, so it must be a regular file "
                        "(not a pipe or standard input)",
                        path);
    *f = fopen(path, "rb");
    if (!*f) return sp__fail(SP_EIO, "%s: cannot read", path);
    sp_status s = sp__jlex_open(lx, *f, path);
    if (s != SP_OK) {
        fclose(*f);
        return s;
    }
    int c = sp__jlex_peek(lx);
    if (c != '{' && c != '[') {
        s = lx->status != SP_OK
                ? lx->status
                : sp__fail(SP_ENOTSUP,
                           "%s: not a Chrome-trace JSON file; merge reads .json and .json.gz "
                           "(write other formats as JSON first with `stepprof convert`)",
                           path);
        sp__jlex_close(lx);
        fclose(*f);
    }
    return s;
}

static void close_trace(FILE *f, sp__jlex *lx)
{
    sp__jlex_close(lx);
    fclose(f);
}

static int by_rank(const void *a, const void *b)
{
    const mg_rank *x = a, *y = b;
    if (x->h.rank != y->h.rank) return x->h.rank < y->h.rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* ---- checks on the headers ---- */

static sp_status check_ranks(mg_rank *r, size_t n, const sp_merge_options *o, long *world)
{
    for (size_t i = 1; i < n; i++)
        if (r[i].h.rank == r[i - 1].h.rank)
            return sp__fail(SP_EFORMAT, "rank %ld appears twice: in %s and in %s%s", r[i].h.rank,
                            r[i - 1].path, r[i].path,
                            !r[i].h.has_dist || !r[i - 1].h.has_dist
                                ? " (a file without distributedInfo counts as rank 0 of 1)"
                                : "");
    *world = r[0].h.world_size;
    for (size_t i = 0; i < n; i++) {
        if (r[i].h.world_size != r[0].h.world_size) {
            if (!o->force)
                return sp__fail(
                    SP_EFORMAT,
                    "the files disagree on the world size: %s says %ld ranks, %s says %ld "
                    "(not one job's files? --force merges them anyway)",
                    r[0].path, r[0].h.world_size, r[i].path, r[i].h.world_size);
            say(o, 1,
                "the files disagree on the world size (%s: %ld, %s: %ld); merged anyway (forced)",
                r[0].path, r[0].h.world_size, r[i].path, r[i].h.world_size);
        }
        if (r[i].h.world_size > *world) *world = r[i].h.world_size;
        if (r[i].h.rank >= r[i].h.world_size) {
            if (!o->force)
                return sp__fail(SP_EFORMAT, "%s: rank %ld is outside its world of %ld ranks",
                                r[i].path, r[i].h.rank, r[i].h.world_size);
            say(o, 1, "%s: rank %ld is outside its world of %ld ranks; merged anyway (forced)",
                r[i].path, r[i].h.rank, r[i].h.world_size);
        }
    }
    const mg_rank *jr = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].h.job[0]) continue;
        if (!jr) {
            jr = &r[i];
        } else if (strcmp(jr->h.job, r[i].h.job) != 0) {
            if (!o->force)
                return sp__fail(
                    SP_EFORMAT,
                    "the files come from different jobs: %s is job '%s', %s is job '%s' "
                    "(--force merges them anyway)",
                    jr->path, jr->h.job, r[i].path, r[i].h.job);
            say(o, 1,
                "the files come from different jobs (%s: '%s', %s: '%s'); merged anyway (forced)",
                jr->path, jr->h.job, r[i].path, r[i].h.job);
        }
    }
    if (n < (size_t)*world) {
        char list[512] = "";
        size_t len = 0, missing = 0, k = 0;
        for (long rank = 0; rank < *world; rank++) {
            while (k < n && r[k].h.rank < rank)
                k++;
            if (k < n && r[k].h.rank == rank) continue;
            if (missing++ < 16 && len < sizeof list - 24)
                len +=
                    (size_t)snprintf(list + len, sizeof list - len, "%s%ld", len ? ", " : "", rank);
        }
        if (missing)
            say(o, 1, "%zu of %ld ranks have no file (rank %s%s); merged without them", missing,
                *world, list, missing > 16 ? ", ..." : "");
    }
    return SP_OK;
}

/* ---- first pass ---- */

typedef struct pass {
    mg_rank *r;
    mg_colls *colls;
    int oom;
    /* second pass */
    sp__out *out;
    sp__buf text;
    int *first;
    int64_t base_out_ns;
    uint64_t seen;
} pass;

static void note_pid(mg_rank *r, const mg_event *ev)
{
    if (ev->pid_kind != 1) return;
    int i = 0;
    while (i < r->n_pids && r->pids[i] != ev->pid)
        i++;
    if (i == r->n_pids) {
        if (i == MG_MAX_PIDS) return;
        r->pids[r->n_pids++] = ev->pid;
    }
    if (ev->gpu_cat || ev->gpu_meta) r->pid_gpu[i] = 1;
}

static int note_coll(pass *p, const mg_event *ev)
{
    if (!ev->comm || ev->ph != 'X' || !ev->has_ts) return 0;
    mg_coll c = {ev->group ? ev->group : sp__merge_hash("", 0), ev->coll, ev->seq, ev->ts_ns,
                 ev->ts_ns + (ev->has_dur ? ev->dur_ns : 0)};
    if (sp__merge_colls_push(p->colls, &c) != 0) p->oom = 1;
    return p->oom ? -1 : 0;
}

static int first_event(void *ctx, sp__jlex *lx)
{
    pass *p = ctx;
    mg_event ev;
    if (sp__merge_next_event(lx, &ev) != 0) return -1;
    mg_rank *r = p->r;
    r->events++;
    note_pid(r, &ev);
    if (ev.has_ts && (!r->has_ts_min || ev.ts_ns < r->ts_min_ns)) {
        r->has_ts_min = 1;
        r->ts_min_ns = ev.ts_ns;
    }
    return note_coll(p, &ev);
}

/* Reads the file; a cut after the events began is a warning, not an error. */
static sp_status read_file(mg_rank *r, int flags, mg_event_fn fn, pass *p,
                           const sp_merge_options *o, int warn)
{
    FILE *f = NULL;
    sp__jlex lx;
    sp_status s = open_trace(r->path, &f, &lx);
    if (s != SP_OK) return s;
    mg_header h = {0};
    /* The header look keeps the keys the rank's result is restored from. */
    if (flags & MG_HEADER_ONLY) {
        r->keys.len = 0;
        h.keep = &r->keys;
    }
    int in_events;
    int rc = sp__merge_read(&lx, &h, flags, fn, p, &in_events);
    if (flags & MG_HEADER_ONLY) {
        h.keep = NULL;
        if (r->keys.failed || r->keys.len > MG_KEEP_MAX) {
            r->keys_cut = 1;
            r->keys.len = 0;
        }
    }
    s = lx.status;
    if (p && p->oom) s = sp__fail(SP_ENOMEM, "out of memory merging %s", r->path);
    if (rc != 0 && s == SP_OK) s = sp__fail(SP_EFORMAT, "%s: not a valid JSON trace", r->path);
    if (rc == 0 || (in_events && s == SP_EFORMAT)) {
        if (rc != 0) {
            r->cut = 1;
            if (warn)
                say(o, 1, "%s is cut short (%s): merged its first %llu complete events", r->path,
                    sp_last_error(), (unsigned long long)r->events);
            s = SP_OK;
        }
        if (!(flags & MG_EVENTS_ONLY) || !p) r->h = h;
    } else if (s == SP_OK) {
        s = sp__fail(SP_EFORMAT, "%s: not a valid JSON trace", r->path);
    }
    close_trace(f, &lx);
    return s;
}

static void finish_pids(mg_rank *r)
{
    for (int i = 0; i < r->n_pids; i++)
        if (!r->pid_gpu[i]) {
            r->has_host_pid = 1;
            r->host_pid = r->pids[i];
            return;
        }
}

static void to_absolute(mg_colls *c, int64_t base_ns)
{
    for (size_t i = 0; i < c->n; i++) {
        c->v[i].start_ns += base_ns;
        c->v[i].end_ns += base_ns;
    }
    sp__merge_colls_key(c);
}

/* ---- clock domains ---- */

/* A rank's domain: the ranks that share its clock. Ranks without a hostname
 * are on a clock of their own, as every rank is when alignment is forced. */
static void assign_domains(mg_rank *r, size_t n, sp_merge_align align, size_t *n_domains)
{
    *n_domains = 0;
    for (size_t i = 0; i < n; i++) {
        size_t d = *n_domains;
        if (align == SP_MERGE_ALIGN_OFF) {
            d = 0;
        } else if (align == SP_MERGE_ALIGN_AUTO && r[i].h.hostname[0]) {
            for (size_t j = 0; j < i; j++)
                if (strcmp(r[j].h.hostname, r[i].h.hostname) == 0) {
                    d = r[j].domain;
                    break;
                }
        }
        r[i].domain = d;
        if (d == *n_domains) (*n_domains)++;
    }
}

static void describe_domain(char *out, size_t size, const mg_rank *r, size_t n, size_t d,
                            int forced)
{
    size_t first = 0, count = 0;
    while (r[first].domain != d)
        first++;
    char list[160] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].domain != d) continue;
        if (count++ < 8 && len < sizeof list - 24)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%ld", count > 1 ? ", " : "",
                                    r[i].h.rank);
        else if (count == 9)
            len += (size_t)snprintf(list + len, sizeof list - len, ", ...");
    }
    if (forced || !r[first].h.hostname[0])
        snprintf(out, size, "rank %ld%s", r[first].h.rank,
                 r[first].h.hostname[0] ? "" : " (no hostname)");
    else
        snprintf(out, size, "host %s (rank%s %s)", r[first].h.hostname, count > 1 ? "s" : "", list);
}

/* Solves each domain's clock against the reference rank's domain; returns
 * the number of domains solved. */
static size_t solve(mg_rank *r, size_t n, size_t n_domains, const sp_merge_options *o,
                    int64_t t0_ns)
{
    size_t solved = 0;
    double *med = sp__alloc(n * sizeof *med);
    for (size_t d = 0; d < n_domains; d++) {
        char name[320];
        describe_domain(name, sizeof name, r, n, d, o->align == SP_MERGE_ALIGN_FORCE);
        if (d == r[0].domain) {
            say(o, 0, "%s: the reference clock", name);
            continue;
        }
        size_t k = 0;
        mg_fit sum = {0};
        for (size_t i = 0; i < n; i++) {
            if (r[i].domain != d || !r[i].fit.matched) continue;
            if (med) med[k] = r[i].fit.median_ns;
            k++;
            sum.n += r[i].fit.n, sum.st += r[i].fit.st, sum.sd += r[i].fit.sd;
            sum.stt += r[i].fit.stt, sum.std += r[i].fit.std;
            sum.matched += r[i].fit.matched;
        }
        if (k == 0 || !med) {
            say(o, 1, "%s: no collective matches rank %ld's; its clock is left as it is", name,
                r[0].h.rank);
            continue;
        }
        double offset = sp__merge_median(med, k), drift = 0;
        double den = sum.n * sum.stt - sum.st * sum.st;
        if (o->drift && sum.n >= 3 && den > 1e-12 * sum.n * sum.n) {
            double b = (sum.n * sum.std - sum.st * sum.sd) / den; /* ns per s */
            offset = (sum.sd - b * sum.st) / sum.n;
            drift = b / 1e3;
        }
        for (size_t i = 0; i < n; i++)
            if (r[i].domain == d) {
                r[i].offset_ns = offset;
                r[i].drift_ppm = drift;
                r[i].t0_ns = t0_ns;
            }
        solved++;
        if (o->drift)
            say(o, 0, "%s: clock offset %+.3f us, drift %+.3f ppm (on %llu collectives)", name,
                offset / 1e3, drift, (unsigned long long)sum.matched);
        else
            say(o, 0, "%s: clock offset %+.3f us (on %llu collectives)", name, offset / 1e3,
                (unsigned long long)sum.matched);
    }
    sp__free(med);
    return solved;
}

/* ---- second pass ---- */

static int second_event(void *ctx, sp__jlex *lx)
{
    pass *p = ctx;
    mg_rank *r = p->r;
    if (p->seen == r->events) return 1; /* the rest of a cut file */
    mg_event ev;
    if (sp__merge_next_event_text(lx, &ev, &p->text) != 0) return -1;
    p->seen++;
    if (ev.ph != 'M' || (ev.process_meta != 1 && ev.process_meta != 2)) {
        sp__buf *b = sp__out_buf(p->out);
        sp__merge_put_sep(b, p->first);
        sp__merge_put_event(b, p->text.data, &ev, p->text.len, r, p->base_out_ns);
        r->written++;
        sp__out_maybe_flush(p->out);
    }
    return note_coll(p, &ev);
}

static sp_status write_all(mg_rank *r, size_t n, const char *out_path, const char *shown, const mg_colls *ref,
                           mg_colls *cur, long world, int64_t base_out_ns, mg_result *res,
                           const sp_merge_options *o)
{
    sp__out *out;
    sp_status s = sp__out_open(&out, out_path, ends_with(out_path, ".gz"));
    if (s != SP_OK) return s;
    int first = 1;
    sp__merge_put_head(sp__out_buf(out), &r[0], world, base_out_ns);
    double *med = sp__alloc(n * sizeof *med);
    size_t k = 0;
    pass p = {0};
    sp__buf_init(&p.text);
    for (size_t i = 0; i < n && s == SP_OK; i++) {
        sp__merge_put_processes(sp__out_buf(out), &first, &r[i], base_out_ns);
        cur->n = 0;
        p.r = &r[i];
        p.colls = cur;
        p.out = out;
        p.first = &first;
        p.base_out_ns = base_out_ns;
        p.seen = 0;
        s = read_file(&r[i], MG_EVENTS_ONLY, second_event, &p, o, 0);
        if (s == SP_OK && p.seen != r[i].events)
            s = sp__fail(SP_EIO, "%s changed while it was merged", r[i].path);
        if (s != SP_OK || i == 0 || !ref->n) continue;
        to_absolute(cur, r[i].h.base_ns);
        if (sp__merge_residual(ref, cur, r[i].offset_ns, r[i].drift_ppm, r[i].t0_ns, &r[i].res_n,
                               &r[i].res_median_ns, &r[i].res_max_ns) != 0)
            s = sp__fail(SP_ENOMEM, "out of memory merging %s", r[i].path);
        if (r[i].res_n && med) {
            med[k++] = r[i].res_median_ns;
            res->residual_n += r[i].res_n;
            if (r[i].res_max_ns > res->residual_max_ns) res->residual_max_ns = r[i].res_max_ns;
        }
    }
    sp__buf_fini(&p.text);
    res->residual_median_ns = med ? sp__merge_median(med, k) : 0;
    sp__free(med);
    if (s != SP_OK) {
        sp__out_abort(out);
        return s;
    }
    sp__merge_put_tail(sp__out_buf(out), r, n, res, shown);
    return sp__out_commit(out);
}

/* ---- the entry point ---- */

static sp_status check_output(const char *const *paths, size_t n, const char *out_path)
{
    struct stat so, si;
    if (stat(out_path, &so) != 0) return SP_OK;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return sp__fail(SP_EINVAL, "%s: the output would overwrite an input", out_path);
    return SP_OK;
}

/* The JSON merge into out_path; its lines name the output shown. */
static sp_status merge_json(const char *const *paths, size_t n, const char *out_path, const char *shown,
                            const sp_merge_options *opts);

/* A .pb output: the JSON merge into a temporary file beside it, read back
 * as ranks and written as one NodeTreesProto (trace-format.md §13). Unlike
 * the JSON merge, this holds every rank's result in memory. */
static sp_status merge_pb(const char *const *paths, size_t n, const char *out_path,
                          const sp_merge_options *o)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.merging-XXXXXX", out_path) >= (int)sizeof tmp)
        return sp__fail(SP_EINVAL, "%s: output path too long", out_path);
    int fd = mkstemp(tmp);
    if (fd < 0) return sp__fail(SP_EIO, "%s: cannot create a temporary file beside it: %s", out_path, strerror(errno));
    close(fd);
    sp_status s = merge_json(paths, n, tmp, out_path, o);
    sp_result **v = NULL;
    size_t k = 0;
    if (s == SP_OK) s = sp_result_load_ranks(tmp, NULL, &v, &k);
    if (s == SP_OK) s = sp__export_protobuf_ranks((const sp_result *const *)v, k, out_path);
    sp_results_release(v, k);
    unlink(tmp);
    return s;
}

sp_status sp_trace_merge(const char *const *paths, size_t n, const char *out_path,
                         const sp_merge_options *opts)
{
    if (!paths || n == 0) return sp__fail(SP_EINVAL, "merge: no input files");
    if (!out_path || !*out_path) return sp__fail(SP_EINVAL, "merge: no output path");
    for (size_t i = 0; i < n; i++)
        if (!paths[i]) return sp__fail(SP_EINVAL, "merge: input %zu is NULL", i);
    sp_status s = check_output(paths, n, out_path);
    if (s != SP_OK) return s;
    return ends_with(out_path, ".pb") ? merge_pb(paths, n, out_path, opts)
                                      : merge_json(paths, n, out_path, out_path, opts);
}

static sp_status merge_json(const char *const *paths, size_t n, const char *out_path, const char *shown,
                            const sp_merge_options *opts)
{
    sp_merge_options o;
    sp_merge_options_init(&o);
    if (opts) o = *opts;
    sp_status s = SP_OK;
    mg_rank *r = sp__alloc(n * sizeof *r);
    mg_colls ref = {0}, cur = {0};
    if (!r) return sp__fail(SP_ENOMEM, "out of memory merging %zu files", n);
    memset(r, 0, n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        sp__buf_init(&r[i].keys);
    for (size_t i = 0; i < n && s == SP_OK; i++) {
        r[i].path = paths[i];
        s = read_file(&r[i], MG_HEADER_ONLY, NULL, NULL, &o, 0);
        if (s == SP_OK && r[i].keys_cut)
            say(&o, 1,
                "%s: its header's counters, device properties and thread names exceed %zu MiB: "
                "the merge does not keep them",
                r[i].path, MG_KEEP_MAX >> 20);
    }
    long world = 1;
    if (s == SP_OK) {
        qsort(r, n, sizeof *r, by_rank);
        s = check_ranks(r, n, &o, &world);
    }
    /* First pass: pids, spans, collectives; the lowest rank's kept. */
    int64_t t0_ns = 0, base_out_ns = INT64_MAX;
    for (size_t i = 0; i < n && s == SP_OK; i++) {
        pass p = {.r = &r[i], .colls = i == 0 ? &ref : &cur};
        cur.n = 0;
        mg_header h0 = r[i].h;
        s = read_file(&r[i], 0, first_event, &p, &o, 1);
        if (s != SP_OK) break;
        if (r[i].h.rank != h0.rank) r[i].h = h0; /* ordered by the header look */
        finish_pids(&r[i]);
        if (r[i].h.base_ns < base_out_ns) base_out_ns = r[i].h.base_ns;
        to_absolute(p.colls, r[i].h.base_ns);
        if (i == 0) {
            for (size_t j = 0; j < ref.n; j++)
                if (j == 0 || ref.v[j].end_ns < t0_ns) t0_ns = ref.v[j].end_ns;
            continue;
        }
        if (sp__merge_fit(&ref, &cur, t0_ns, &r[i].fit) != 0)
            s = sp__fail(SP_ENOMEM, "out of memory merging %s", r[i].path);
        else if (r[i].fit.mismatched)
            say(&o, 1,
                "rank %ld: %llu collectives differ in name from rank %ld's of the same group and "
                "seq (the "
                "ranks diverged, or the files are not one job's); left out of the alignment",
                r[i].h.rank, (unsigned long long)r[i].fit.mismatched, r[0].h.rank);
    }
    mg_result res = {0};
    if (s == SP_OK) {
        size_t n_domains, matched = 0;
        for (size_t i = 1; i < n; i++)
            matched += r[i].fit.matched;
        assign_domains(r, n, o.align, &n_domains);
        if (o.align == SP_MERGE_ALIGN_OFF) {
            snprintf(res.reason, sizeof res.reason, "alignment turned off");
        } else if (n_domains == 1) {
            snprintf(res.reason, sizeof res.reason, "%s",
                     n == 1 ? "one rank" : "all ranks name one host, so they share a clock");
        } else if (matched == 0) {
            snprintf(res.reason, sizeof res.reason, "no collectives to align on");
        } else {
            size_t solved = solve(r, n, n_domains, &o, t0_ns);
            res.aligned = solved > 0;
            snprintf(res.reason, sizeof res.reason,
                     "%s%zu of %zu %s aligned on the ends of their collectives",
                     o.align == SP_MERGE_ALIGN_FORCE ? "forced: " : "", solved, n_domains - 1,
                     o.align == SP_MERGE_ALIGN_FORCE ? "other ranks" : "other clocks");
        }
        say(&o, !res.aligned && matched == 0 && n_domains > 1, "%s%s", res.reason,
            res.aligned ? "" : ": merged without alignment");
        if (base_out_ns == INT64_MAX) base_out_ns = 0;
        s = write_all(r, n, out_path, shown, &ref, &cur, world, base_out_ns, &res, &o);
    }
    if (s == SP_OK && res.residual_n)
        say(&o, 0, "residual at the collectives' ends%s: median %.3f us, max %.3f us (%llu pairs)",
            res.aligned ? " after alignment" : "", res.residual_median_ns / 1e3,
            res.residual_max_ns / 1e3, (unsigned long long)res.residual_n);
    if (s == SP_OK) {
        uint64_t events = 0;
        for (size_t i = 0; i < n; i++)
            events += r[i].written;
        say(&o, 0, "wrote %s: %zu ranks, %llu events", shown, n, (unsigned long long)events);
    }
    sp__merge_colls_free(&ref);
    sp__merge_colls_free(&cur);
    for (size_t i = 0; i < n; i++)
        sp__buf_fini(&r[i].keys);
    sp__free(r);
    return s;
}
