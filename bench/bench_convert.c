/* bench_convert.c: memory and speed of saving and converting results
 * (issue 8): "converting a trace of 5 million events uses no more than about
 * twice the memory of its event data". It records a span of N events (5 M by
 * default; `bench_convert N` for another count), saves it as .pb and as
 * .json, then converts each into the other in a fresh process (this program
 * re-run with --convert), whose peak RSS above its starting RSS is compared
 * with the event data (N * sizeof(sp__event)). Also reports the protobuf
 * writer's and reader's speed and its bytes per event, and the floor under
 * the writer: write() of the same bytes into a fresh file (both the median
 * of five runs, taken in turns, each after a sync()).
 * Prints `metric convert_peak_rss_over_event_data <ratio> x` (the worse of
 * the two conversions), `metric protobuf_events_per_s`, `metric
 * protobuf_bytes_per_event`. Files go to /tmp and are removed. */
#include "collect.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds to write the bytes of file `from` (read first) into a new file
 * `to` with 1 MiB write() calls and close it: the floor under any writer of
 * that file on this machine. `to` is removed after. */
static double write_floor(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in) return 1e-9;
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    char *bytes = size > 0 ? malloc((size_t)size) : NULL;
    size_t got = bytes ? fread(bytes, 1, (size_t)size, in) : 0;
    fclose(in);
    double t0 = now_s();
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    for (size_t off = 0; fd >= 0 && off < got;) {
        size_t n = got - off < ((size_t)1 << 20) ? got - off : (size_t)1 << 20;
        ssize_t w = write(fd, bytes + off, n);
        if (w <= 0) break;
        off += (size_t)w;
    }
    if (fd >= 0) close(fd);
    double s = now_s() - t0;
    unlink(to);
    free(bytes);
    return s > 1e-9 ? s : 1e-9;
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

/* The child: load in, write out; prints "<peak kB> <start kB> <load s> <write s>". */
static int convert(const char *in, const char *out)
{
    long start = rss_kb();
    double t0 = now_s();
    sp_result *r;
    if (sp_result_load(in, NULL, &r) != SP_OK) {
        fprintf(stderr, "bench_convert: %s\n", sp_last_error());
        return 1;
    }
    double t1 = now_s();
    size_t n = strlen(out);
    sp_status s = n > 3 && strcmp(out + n - 3, ".pb") == 0 ? sp_result_export_protobuf(r, out)
                                                           : sp_result_export(r, out, SP_FORMAT_JSON);
    double t2 = now_s();
    sp_result_release(r);
    if (s != SP_OK) {
        fprintf(stderr, "bench_convert: %s\n", sp_last_error());
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld %ld %.6f %.6f\n", ru.ru_maxrss, start, t1 - t0, t2 - t1);
    return 0;
}

/* Runs the conversion in a fresh process; returns the RSS growth in bytes. */
static double run_convert(const char *in, const char *out, double *load_s, double *write_s)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/proc/%ld/exe --convert %s %s", (long)getpid(), in, out);
    FILE *p = popen(cmd, "r");
    long peak = 0, start = 0;
    if (!p || fscanf(p, "%ld %ld %lf %lf", &peak, &start, load_s, write_s) != 4) {
        fprintf(stderr, "bench_convert: conversion %s -> %s failed\n", in, out);
        if (p) pclose(p);
        exit(1);
    }
    pclose(p);
    return (double)(peak - start) * 1024.0;
}

static const char *const names[] = {"matmul", "relu", "softmax", "layer_norm", "add", "dropout",
                                    "conv2d", "embedding"};

static sp_result *record(size_t events)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = (size_t)2 << 30;
    sp_profiler *p;
    if (sp_profiler_create(&o, &p) != SP_OK || sp_profiler_start(p) != SP_OK) {
        fprintf(stderr, "bench_convert: %s\n", sp_last_error());
        exit(1);
    }
    /* Steps of 1000 events: a Forward range holding operators, each with an
     * inner range, as a training loop records them. */
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
        fprintf(stderr, "bench_convert: stop: %s\n", sp_last_error());
        exit(1);
    }
    sp_result *r = sp_result_retain(sp_profiler_result(p));
    sp_profiler_destroy(p);
    return r;
}

#define SAVE_TRIALS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t)
{
    qsort(t, SAVE_TRIALS, sizeof *t, cmp_double);
    return t[SAVE_TRIALS / 2];
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--convert") == 0) return convert(argv[2], argv[3]);
    size_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    sp_result *r = record(target);
    size_t events = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info ti;
        sp_result_thread(r, t, &ti);
        events += ti.event_count;
    }
    double event_bytes = (double)events * sizeof(sp__event);
    char pb[128], json[128], pb2[128], json2[128];
    long pid = (long)getpid();
    snprintf(pb, sizeof pb, "/tmp/bench_convert_%ld.pb", pid);
    snprintf(json, sizeof json, "/tmp/bench_convert_%ld.json", pid);
    snprintf(pb2, sizeof pb2, "/tmp/bench_convert_%ld_2.pb", pid);
    snprintf(json2, sizeof json2, "/tmp/bench_convert_%ld_2.json", pid);
    /* The save and its floor, in turns, as the median of SAVE_TRIALS each;
     * each starts with no dirty pages left by the one before (sync), so
     * that neither is slowed by the other's writeback. (ext4 also starts
     * writing a file back when it is renamed over another.) */
    double saves[SAVE_TRIALS], floors[SAVE_TRIALS];
    for (int i = 0; i < SAVE_TRIALS; i++) {
        unlink(pb); /* a fresh file, as the floor's: no rename over one */
        sync();
        double t0 = now_s();
        if (sp_result_export_protobuf(r, pb) != SP_OK) {
            fprintf(stderr, "bench_convert: %s\n", sp_last_error());
            return 1;
        }
        saves[i] = now_s() - t0;
        sync();
        floors[i] = write_floor(pb, pb2);
    }
    double pb_write = median(saves), floor_s = median(floors);
    if (sp_result_export(r, json, SP_FORMAT_JSON) != SP_OK) {
        fprintf(stderr, "bench_convert: %s\n", sp_last_error());
        return 1;
    }
    sp_result_release(r);
    double pb_load, json_write, json_load, pb_write2;
    double grow_pb_json = run_convert(pb, json2, &pb_load, &json_write);
    double grow_json_pb = run_convert(json, pb2, &json_load, &pb_write2);
    double ratio_a = grow_pb_json / event_bytes, ratio_b = grow_json_pb / event_bytes;
    double ratio = ratio_a > ratio_b ? ratio_a : ratio_b;
    double bpe = (double)file_size(pb) / (double)events;
    printf("stepprof save and convert, %zu events (event data %.1f MB = %zu x %zu bytes)\n", events,
           event_bytes / 1e6, events, sizeof(sp__event));
    printf("%-44s %10.2f s  %8.2f M events/s\n", "save .pb (sp_result_export_protobuf)", pb_write,
           (double)events / pb_write / 1e6);
    printf("%-44s %10.2f s  %8.2f M events/s  (the save: %.2fx)\n", "write() of the same bytes (the floor)",
           floor_s, (double)events / floor_s / 1e6, pb_write / floor_s);
    printf("%-44s %10.2f s  %8.2f M events/s\n", "load .pb (sp_result_load)", pb_load, (double)events / pb_load / 1e6);
    printf("%-44s %10.2f s  %8.2f M events/s\n", "load .json (streaming)", json_load,
           (double)events / json_load / 1e6);
    printf("%-44s %10.1f MB  %6.1f bytes/event\n", ".pb file", (double)file_size(pb) / 1e6, bpe);
    printf("%-44s %10.1f MB  %6.1f bytes/event\n", ".json file", (double)file_size(json) / 1e6,
           (double)file_size(json) / (double)events);
    printf("%-44s %10.1f MB  %6.2f x event data  %s\n", "convert .pb -> .json: peak RSS growth", grow_pb_json / 1e6,
           ratio_a, ratio_a <= 2.2 ? "ok" : "OVER");
    printf("%-44s %10.1f MB  %6.2f x event data  %s\n", "convert .json -> .pb: peak RSS growth", grow_json_pb / 1e6,
           ratio_b, ratio_b <= 2.2 ? "ok" : "OVER");
    printf("metric convert_peak_rss_over_event_data %.2f x\n", ratio);
    printf("metric protobuf_events_per_s %.0f events/s\n", (double)events / pb_write);
    printf("metric protobuf_bytes_per_event %.1f bytes\n", bpe);
    printf("metric protobuf_write_floor_events_per_s %.0f events/s\n", (double)events / floor_s);
    printf("metric protobuf_save_over_write_floor %.2f x\n", pb_write / floor_s);
    unlink(pb);
    unlink(json);
    unlink(pb2);
    unlink(json2);
    return 0;
}
