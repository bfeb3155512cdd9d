/* bench_load.c: the speed of loading stepprof's JSON back (sp_result_load)
 * and of summarizing a loaded file, beside the floor under any loader of
 * that file: read() of its bytes in 1 MiB pieces with a memchr pass over
 * each (the page cache warm, as for the load). A span of N events (1 M by
 * default; `bench_load N` for another count) is recorded as bench_convert.c
 * records it, saved as .json, then timed, each figure the fastest of TRIALS
 * (the run least disturbed by the others sharing the machine), in wall
 * time and in this process's CPU time (user + system):
 *   floor     read() + memchr over the file
 *   load      sp_result_load of the .json
 *   summary   sp_result_load + sp_result_summary (default options) to /dev/null,
 *             and the sp_result_summary part of it alone (the tables' own share)
 * The ratio is against the floor measured in the same run, since the
 * machines are shared and absolute times drift; the load's wall time over
 * its CPU time is the control (near 1.0 when the load had a core to
 * itself). Also prints the loader's peak RSS growth per event kept,
 * measured in a fresh process (this program re-run with --rss), for the
 * file and for a copy with a 300-byte arg added to every event: the same
 * events in about three times the bytes, so that memory is seen to follow
 * the events and not the file's bytes. The file goes to /tmp and is removed. `bench_load
 * --write N FILE` only writes such a file of N events, for profiling. */
#include "collect.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double fastest(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* read() + memchr for each newline over the whole file: what any loader pays at least. */
static double read_floor(const char *path, size_t *quotes)
{
    static char buf[1 << 20];
    double t0 = now_s();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t q = 0;
    ssize_t n;
    while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
        const char *p = buf, *end = buf + n;
        while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            q++;
            p++;
        }
    }
    if (fd >= 0) close(fd);
    *quotes = q;
    return now_s() - t0;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* The child: loads path; prints "<peak kB> <start kB>". */
static int rss_child(const char *path)
{
    long start = rss_kb();
    sp_result *r;
    if (sp_result_load(path, NULL, &r) != SP_OK) {
        fprintf(stderr, "bench_load: %s\n", sp_last_error());
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld %ld\n", ru.ru_maxrss, start);
    sp_result_release(r);
    return 0;
}

/* Copies the JSON file from to `to` with a 300-byte string arg added to
 * every event that has args: the same events in about three times the
 * bytes. */
static int write_padded(const char *from, const char *to)
{
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    char pad[301], *line = NULL;
    size_t cap = 0;
    ssize_t n;
    memset(pad, 'x', 300);
    pad[300] = '\0';
    while (in && out && (n = getline(&line, &cap, in)) > 0) {
        char *args = strstr(line, "\"args\":{\"");
        if (!args) {
            fwrite(line, 1, (size_t)n, out);
            continue;
        }
        args += 8; /* past "args":{ */
        fwrite(line, 1, (size_t)(args - line), out);
        fprintf(out, "\"pad\":\"%s\",", pad);
        fputs(args, out);
    }
    free(line);
    int ok = in && out && !ferror(in) && !ferror(out);
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok ? 0 : -1;
}

/* Peak RSS growth of loading path in a fresh process, in bytes. */
static double load_rss(const char *path)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/proc/%ld/exe --rss %s", (long)getpid(), path);
    FILE *p = popen(cmd, "r");
    long peak = 0, start = 0;
    if (!p || fscanf(p, "%ld %ld", &peak, &start) != 2)
        fprintf(stderr, "bench_load: the RSS child failed\n");
    if (p) pclose(p);
    return (double)(peak - start) * 1024.0;
}

static const char *const names[] = {"matmul", "relu",    "softmax", "layer_norm",
                                    "add",    "dropout", "conv2d",  "embedding"};

static sp_result *record(size_t events)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = (size_t)2 << 30;
    sp_profiler *p;
    if (sp_profiler_create(&o, &p) != SP_OK || sp_profiler_start(p) != SP_OK) {
        fprintf(stderr, "bench_load: %s\n", sp_last_error());
        exit(1);
    }
    size_t made = 0;
    while (made < events) {
        sp_range_begin(SP_EVENT_FORWARD, "forward");
        made += 2; /* the forward range and the step's ProfileStep */
        for (int k = 0; k < 499 && made + 2 <= events; k++, made += 2) {
            sp_range_begin(SP_EVENT_OPERATOR, names[k % 8]);
            sp_range_begin(SP_EVENT_OPERATOR_INNER, "compute");
            sp_range_end();
            sp_range_end();
        }
        sp_range_end();
        sp_profiler_step(p, 1);
    }
    if (sp_profiler_stop(p) != SP_OK) {
        fprintf(stderr, "bench_load: stop: %s\n", sp_last_error());
        exit(1);
    }
    sp_result *r = sp_result_retain(sp_profiler_result(p));
    sp_profiler_destroy(p);
    return r;
}

static size_t event_count(const sp_result *r)
{
    size_t events = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info ti;
        sp_result_thread(r, t, &ti);
        events += ti.event_count;
    }
    return events;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--rss") == 0) return rss_child(argv[2]);
    if (argc == 4 && strcmp(argv[1], "--write") == 0) { /* a file for profiling by hand */
        sp_result *r = record(strtoull(argv[2], NULL, 10));
        sp_status s = sp_result_export(r, argv[3], SP_FORMAT_JSON);
        sp_result_release(r);
        return s == SP_OK ? 0 : 1;
    }
    size_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    char json[128];
    snprintf(json, sizeof json, "/tmp/bench_load_%ld.json", (long)getpid());
    sp_result *rec = record(target);
    size_t events = event_count(rec);
    if (sp_result_export(rec, json, SP_FORMAT_JSON) != SP_OK) {
        fprintf(stderr, "bench_load: %s\n", sp_last_error());
        return 1;
    }
    sp_result_release(rec);
    struct stat st;
    double mb = stat(json, &st) == 0 ? (double)st.st_size / 1e6 : 0;
    FILE *devnull = fopen("/dev/null", "w");
    double floor_s[TRIALS], load_s[TRIALS], sum_s[TRIALS], tables_s[TRIALS], floor_cpu[TRIALS],
        load_cpu[TRIALS];
    size_t quotes = 0, loaded = 0;
    read_floor(json, &quotes); /* warm the page cache */
    for (int i = 0; i < TRIALS; i++) {
        double c0 = cpu_s();
        floor_s[i] = read_floor(json, &quotes);
        floor_cpu[i] = cpu_s() - c0;
        sp_result *r = NULL;
        double t0 = now_s();
        c0 = cpu_s();
        if (sp_result_load(json, NULL, &r) != SP_OK) {
            fprintf(stderr, "bench_load: %s\n", sp_last_error());
            return 1;
        }
        load_s[i] = now_s() - t0;
        load_cpu[i] = cpu_s() - c0;
        loaded = event_count(r);
        sp_result_release(r);
        t0 = now_s();
        if (sp_result_load(json, NULL, &r) != SP_OK) {
            fprintf(stderr, "bench_load: %s\n", sp_last_error());
            return 1;
        }
        double t1 = now_s();
        if (sp_result_summary(r, NULL, devnull) != SP_OK) {
            fprintf(stderr, "bench_load: %s\n", sp_last_error());
            return 1;
        }
        fflush(devnull);
        sum_s[i] = now_s() - t0;
        tables_s[i] = now_s() - t1;
        sp_result_release(r);
    }
    fclose(devnull);
    double fl = fastest(floor_s, TRIALS), ld = fastest(load_s, TRIALS), sm = fastest(sum_s, TRIALS);
    double fl_cpu = fastest(floor_cpu, TRIALS), ld_cpu = fastest(load_cpu, TRIALS);
    double grow = load_rss(json);
    char padded[160];
    snprintf(padded, sizeof padded, "%s.padded.json", json);
    struct stat pst;
    double grow_padded = 0, padded_mb = 0;
    if (write_padded(json, padded) == 0 && stat(padded, &pst) == 0) {
        grow_padded = load_rss(padded);
        padded_mb = (double)pst.st_size / 1e6;
    }
    unlink(padded);
    printf("stepprof JSON load, %zu events recorded, %zu loaded, %.1f MB of JSON (%.1f B/event)\n",
           events, loaded, mb, mb * 1e6 / (double)events);
    printf("%-44s %8.3f s  %8.0f MB/s\n", "read() + memchr over the file (the floor)", fl, mb / fl);
    printf("%-44s %8.3f s  %8.0f MB/s  %6.2f M events/s  (%.2fx the floor)\n",
           "load .json (sp_result_load)", ld, mb / ld, (double)events / ld / 1e6, ld / fl);
    printf("%-44s %8.3f s  %8.0f MB/s  %6.2f M events/s  (%.2fx the floor's CPU time)\n",
           "load .json, CPU time (user + system)", ld_cpu, mb / ld_cpu,
           (double)events / ld_cpu / 1e6, ld_cpu / (fl_cpu > 1e-6 ? fl_cpu : 1e-6));
    printf("%-44s %8.3f s  %8.0f MB/s of JSON\n", "load + summary tables of the .json", sm,
           mb / sm);
    printf("%-44s %8.3f s  %6.2f M events/s\n", "summary tables alone of the loaded result",
           fastest(tables_s, TRIALS), (double)events / fastest(tables_s, TRIALS) / 1e6);
    printf("%-44s %8.1f MB  %6.1f bytes/event\n", "load: peak RSS growth", grow / 1e6,
           grow / (double)events);
    printf("%-44s %8.1f MB  %6.1f bytes/event  (file %.0f MB, %.2fx the plain file's RSS)\n",
           "load, every event padded 300 B: peak RSS", grow_padded / 1e6,
           grow_padded / (double)events, padded_mb, grow_padded / grow);
    printf("metric json_load_events_per_s %.0f events/s\n", (double)events / ld);
    printf("metric json_load_mb_per_s %.0f MB/s\n", mb / ld);
    printf("metric json_load_over_read_floor %.2f x\n", ld / fl);
    printf("metric json_summary_1m_s %.3f s\n", sm);
    printf("metric json_load_rss_bytes_per_event %.1f bytes\n", grow / (double)events);
    printf("metric json_summary_mb_per_s %.0f MB/s\n", mb / sm);
    printf("metric json_load_cpu_events_per_s %.0f events/s\n", (double)events / ld_cpu);
    printf("metric json_read_floor_mb_per_s %.0f MB/s\n", mb / fl);
    printf("metric json_load_rss_padded_over_plain %.2f x\n", grow_padded / grow);
    printf("metric json_load_wall_over_cpu %.2f x\n", ld / ld_cpu);
    printf("metric json_summary_tables_only_s %.3f s\n", fastest(tables_s, TRIALS));
    unlink(json);
    return 0;
}
