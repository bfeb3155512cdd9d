/* bench_export.c: the cost of ending a large span and writing it out
 * (issue 4). A span is recorded through the public API only: a profiler
 * with sp_handler_none() and the default scheduler, THREADS worker threads,
 * each recording RANGES nested ranges in groups of depth 3 (a static outer
 * name, a copied middle name from sp_range_begin_copy, a static inner name
 * from a small set), about 5 M events in all. Then, as the median (with min
 * and max) over TRIALS trials:
 *   stop      sp_profiler_stop (collection: drain, convert, nest); a fresh
 *             span is recorded for each trial, and only stop is timed
 *   json      sp_result_export(SP_FORMAT_JSON) to /tmp (deleted after)
 *   json.gz   the same with SP_FORMAT_JSON_GZ (ISA-L igzip where built with
 *             it), and again through zlib at level 6 as before
 *             (sp__gzip_baseline), the old path measured in the same run;
 *             for each export, the exporting thread's CPU time per event
 *             (CLOCK_THREAD_CPUTIME_ID: it formats and compresses), whose
 *             new / old ratio is the gzip target
 *   pftrace   the same with SP_FORMAT_PERFETTO, and its size against the
 *             JSON's of the same span
 *   memory    the result's own heap per event: every thread's event array
 *             as allocated (cap * sizeof(sp__event)) plus the name table
 *             (bytes, offsets, fixes, hash slots); "used" counts only
 *             count * sizeof(sp__event) + name bytes; the RSS change around
 *             sp_profiler_stop is printed beside them for reference.
 * Summary tables (>= 10 M events/s) are measured by bench_summary.
 * Protobuf export is not built yet and is printed as n/a.
 *
 * CMake (bench/CMakeLists.txt):
 *   add_executable(bench_export bench_export.c)
 *   target_link_libraries(bench_export PRIVATE stepprof_static m)
 *   target_include_directories(bench_export PRIVATE ${PROJECT_SOURCE_DIR}/src/sys
 *     ${PROJECT_SOURCE_DIR}/src/record ${PROJECT_SOURCE_DIR}/src/collect)
 *   target_compile_options(bench_export PRIVATE ${SP_WARNINGS} -O2)
 *   target_compile_definitions(bench_export PRIVATE _GNU_SOURCE)
 */
#include "collect.h"
#include "export.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 3
#define THREADS 2
#define RANGES 2500000u /* per thread, in groups of 3 */
#define COPY_NAMES 64
#define INNER_NAMES 16

static const char *const inner_names[INNER_NAMES] = {
    "matmul_v2", "conv2d", "relu", "softmax", "layer_norm", "elementwise_add", "dropout",
    "reshape2", "transpose2", "gelu", "batch_norm", "pool2d", "concat", "split", "slice", "scale"};
static char copy_names[COPY_NAMES][32];
static size_t copy_lens[COPY_NAMES];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static void quiet_report(const char *text, void *user)
{
    (void)text;
    (void)user;
}

static void *worker(void *arg)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull + (uintptr_t)arg;
    for (unsigned i = 0; i < RANGES / 3 + (RANGES % 3 != 0); i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        unsigned c = (unsigned)(rng >> 32) % COPY_NAMES;
        sp_range_begin(SP_EVENT_PYTHON_USER_DEFINED, "TransformerLayer");
        sp_range_begin_copy(SP_EVENT_OPERATOR, copy_names[c], copy_lens[c]);
        sp_range_begin(SP_EVENT_OPERATOR_INNER, inner_names[(rng >> 16) % INNER_NAMES]);
        sp_range_end();
        sp_range_end();
        sp_range_end();
    }
    return NULL;
}

/* Records one span; returns the started profiler with the workers joined. */
static sp_profiler *record_span(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.report = quiet_report;
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK) return NULL;
    if (sp_profiler_start(prof) != SP_OK) {
        sp_profiler_destroy(prof);
        return NULL;
    }
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    return prof;
}

static size_t result_events(const sp_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->thread_count; i++) n += r->threads[i].count;
    return n;
}

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats summarize(double *t)
{
    qsort(t, TRIALS, sizeof *t, cmp_double);
    return (stats){t[TRIALS / 2], t[0], t[TRIALS - 1]};
}

static int failures;

/* Exports r TRIALS times; returns the times and sets *bytes to the size
 * and *cpu to the median CPU time of this thread per export. */
static stats measure_export(const sp_result *r, sp_format fmt, const char *ext, double *bytes,
                            double *cpu)
{
    char path[128];
    double t[TRIALS], c[TRIALS];
    snprintf(path, sizeof path, "/tmp/bench_export_%ld%s", (long)getpid(), ext);
    *bytes = 0;
    for (int i = 0; i < TRIALS; i++) {
        double t0 = now_s(), c0 = thread_cpu_s();
        if (sp_result_export(r, path, fmt) != SP_OK) {
            fprintf(stderr, "bench_export: export %s: %s\n", ext, sp_last_error());
            failures++;
        }
        c[i] = thread_cpu_s() - c0;
        t[i] = now_s() - t0;
        struct stat st;
        if (stat(path, &st) == 0) *bytes = (double)st.st_size;
        unlink(path);
    }
    *cpu = summarize(c).median;
    return summarize(t);
}

static const char *verdict(int ok) { return ok ? "ok" : "MISS"; }

static void row(const char *name, stats s, double events, const char *target, int ok)
{
    printf("%-22s %8.3f %8.3f %8.3f %10.2f  %-26s %s\n", name, s.median, s.min, s.max,
           events / s.median / 1e6, target, verdict(ok));
}

int main(void)
{
    double wall0 = now_s();
    for (int i = 0; i < COPY_NAMES; i++)
        copy_lens[i] = (size_t)snprintf(copy_names[i], sizeof copy_names[i], "block%d.attn.fc%d",
                                        i / 4, i % 4);

    /* (a) stop, a fresh span per trial; the last result is kept. */
    double stop_t[TRIALS], rss_delta = 0, record_s = 0;
    size_t events = 0;
    sp_result *r = NULL;
    for (int i = 0; i < TRIALS; i++) {
        double t0 = now_s();
        sp_profiler *prof = record_span();
        if (!prof) {
            fprintf(stderr, "bench_export: %s\n", sp_last_error());
            return 1;
        }
        record_s = now_s() - t0;
        double rss0 = rss_bytes();
        t0 = now_s();
        if (sp_profiler_stop(prof) != SP_OK) {
            fprintf(stderr, "bench_export: stop: %s\n", sp_last_error());
            failures++;
        }
        stop_t[i] = now_s() - t0;
        rss_delta = rss_bytes() - rss0;
        const sp_result *res = sp_profiler_result(prof);
        if (!res) {
            fprintf(stderr, "bench_export: no result\n");
            return 1;
        }
        events = result_events(res);
        if (i == TRIALS - 1) r = sp_result_retain(res);
        sp_profiler_destroy(prof);
    }
    stats stop = summarize(stop_t);

    /* (d) memory of the result. */
    double alloc = 0, used = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        alloc += (double)r->threads[i].cap * sizeof(sp__event);
        used += (double)r->threads[i].count * sizeof(sp__event);
    }
    alloc += (double)r->thread_count * sizeof(sp__thread);
    const sp__names *nm = &r->names;
    double names_alloc = (double)nm->bytes.cap + (double)nm->cap * (sizeof(uint32_t) + 1) +
                         (double)(nm->ptr_mask + 1 + nm->text_mask + 1) * sizeof(sp__slot);
    alloc += names_alloc;
    used += (double)nm->bytes.len;

    /* (b), (c) exports. */
    double json_bytes, gz_bytes, zlib_bytes, json_cpu, gz_cpu, zlib_cpu;
    stats json = measure_export(r, SP_FORMAT_JSON, ".json", &json_bytes, &json_cpu);
    stats gz = measure_export(r, SP_FORMAT_JSON_GZ, ".json.gz", &gz_bytes, &gz_cpu);
    sp__gzip_baseline = 1;
    stats zlib6 = measure_export(r, SP_FORMAT_JSON_GZ, ".json.gz", &zlib_bytes, &zlib_cpu);
    sp__gzip_baseline = 0;
    double pf_bytes, pf_cpu;
    stats pf = measure_export(r, SP_FORMAT_PERFETTO, ".pftrace", &pf_bytes, &pf_cpu);

    double ev = (double)events;
    double stop_rate = ev / stop.median, json_rate = ev / json.median, gz_rate = ev / gz.median;
    double json_bpe = json_bytes / ev, gz_bpe = gz_bytes / ev, mem_bpe = alloc / ev;

    printf("stepprof stop + export cost, seconds (%d trials; %zu events, %zu threads, %u names; "
           "recorded in %.2f s)\n",
           TRIALS, events, r->thread_count, nm->count, record_s);
    printf("%-22s %8s %8s %8s %10s  %-26s %s\n", "work", "median", "min", "max", "Mevents/s",
           "target", "");
    row("stop (collect)", stop, ev, ">= 20 M events/s", stop_rate >= 20e6);
    row("export json", json, ev, ">= 5 M events/s", json_rate >= 5e6);
    row("export json.gz", gz, ev, ">= 5 M events/s", gz_rate >= 5e6);
    row("json.gz, zlib 6 (old)", zlib6, ev, "(report)", 1);
    row("export pftrace", pf, ev, ">= 10 M events/s", ev / pf.median >= 10e6);
    printf("%-22s %8s %8s %8s %10s  %-26s %s\n", "export protobuf", "n/a", "n/a", "n/a", "n/a",
           ">= 5 M events/s", "n/a");
    printf("\n%-40s %10.1f  %-26s %s\n", "json bytes per event", json_bpe, "<= 100", verdict(json_bpe <= 100));
    printf("%-40s %10.1f  %-26s %s\n", "json.gz bytes per event", gz_bpe, "(report)", "");
    printf("%-40s %10.1f  %-26s %s\n", "json.gz (zlib 6, old) bytes per event", zlib_bytes / ev,
           "(report)", "");
    printf("%-40s %10.1f\n", "json export CPU ns per event", json_cpu / ev * 1e9);
    printf("%-40s %10.1f  %-26s %s\n", "json.gz export CPU ns per event", gz_cpu / ev * 1e9,
           "(report)", "");
    printf("%-40s %10.1f  %-26s %s\n", "json.gz (zlib 6, old) CPU ns per event",
           zlib_cpu / ev * 1e9, "(report)", "");
    printf("%-40s %10.2f  %-26s %s\n", "json.gz CPU per event, new / old", gz_cpu / zlib_cpu,
           "<= 0.5", verdict(gz_cpu / zlib_cpu <= 0.5));
    printf("%-40s %10.1f  %-26s %s\n", "pftrace bytes per event", pf_bytes / ev, "<= json's / 5",
           verdict(pf_bytes > 0 && json_bytes / pf_bytes >= 5));
    printf("%-40s %10.1f  %-26s %s\n", "result bytes per event (allocated)", mem_bpe, "<= 64",
           verdict(mem_bpe <= 64));
    printf("%-40s %10.1f\n", "result bytes per event (used)", used / ev);
    printf("%-40s %10.1f\n", "RSS delta around stop, bytes per event", rss_delta / ev);
    printf("%-40s %10.1f MB\n", "peak-ish RSS now", rss_bytes() / 1e6);
    printf("summary tables: see bench_summary (target >= 10 M events/s)\n\n");

    printf("metric events %zu events\n", events);
    printf("metric stop_events_per_s %.0f events/s\n", stop_rate);
    printf("metric stop_s %.4f s\n", stop.median);
    printf("metric json_events_per_s %.0f events/s\n", json_rate);
    printf("metric json_bytes_per_event %.2f bytes\n", json_bpe);
    printf("metric json_gz_events_per_s %.0f events/s\n", gz_rate);
    printf("metric json_gz_bytes_per_event %.2f bytes\n", gz_bpe);
    printf("metric json_gz_over_json %.3f x\n", gz.median / json.median);
    printf("metric json_gz_zlib6_events_per_s %.0f events/s\n", ev / zlib6.median);
    printf("metric json_gz_zlib6_bytes_per_event %.2f bytes\n", zlib_bytes / ev);
    printf("metric json_cpu_ns_per_event %.1f ns\n", json_cpu / ev * 1e9);
    printf("metric json_gz_cpu_ns_per_event %.1f ns\n", gz_cpu / ev * 1e9);
    printf("metric json_gz_zlib6_cpu_ns_per_event %.1f ns\n", zlib_cpu / ev * 1e9);
    printf("metric json_gz_cpu_new_over_old %.3f x\n", gz_cpu / zlib_cpu);
    printf("metric pftrace_events_per_s %.0f events/s\n", ev / pf.median);
    printf("metric pftrace_bytes_per_event %.2f bytes\n", pf_bytes / ev);
    printf("metric pftrace_json_size_ratio %.2f x\n", pf_bytes > 0 ? json_bytes / pf_bytes : 0.0);
    printf("metric result_bytes_per_event %.2f bytes\n", mem_bpe);
    printf("metric result_used_bytes_per_event %.2f bytes\n", used / ev);
    printf("metric rss_delta_stop_bytes_per_event %.2f bytes\n", rss_delta / ev);
    printf("metric wall_s %.2f s\n", now_s() - wall0);
    if (failures) printf("FAILED: %d calls returned an error\n", failures);
    sp_result_release(r);
    return failures ? 1 : 0;
}
