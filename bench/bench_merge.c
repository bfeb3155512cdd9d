/* bench_merge.c: speed and memory of `stepprof merge` (sp_trace_merge):
 * "merging 8 rank files of 1M events each streams at 1M events/s or more,
 * with peak memory independent of the number of ranks". It writes R rank
 * files of N events each (8 of 1M by default: `bench_merge N R`), in
 * stepprof's JSON, every rank on a host of its own with its clock skewed,
 * and one all-reduce (typed Communication, with group and seq) per 100
 * events, so the merge aligns every host. Then it merges the first 2 and
 * all R files, each in a fresh process (this program re-run with --merge),
 * timing it and reading its peak RSS (ru_maxrss). The inputs are synced to
 * disk first and read from the page cache, as a merge right after a run is.
 * Prints `metric merge_events_per_s` (the R-file merge: events written per
 * second of wall time, both passes included), `metric merge_peak_rss_mib_2`
 * and `merge_peak_rss_mib_n`, `metric merge_rss_ratio` (R files / 2 files), and the control
 * `metric merge_wall_over_cpu` (the R-file merge's wall time over its CPU
 * time: well above 1 means the machine was contended and the rate is not
 * the merge's). Files go to /tmp and are removed. */
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One rank's file: N events, the all-reduces' ends at the same true instant
 * on every rank, seen through a clock skewed by rank * 137 us. */
static int write_rank(const char *path, int rank, int ranks, long n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    int pid = 10000 + rank;
    long long skew_ns = rank * 137000LL;
    fprintf(f,
            "{\"schemaVersion\":1,\"deviceProperties\":[],\n\"distributedInfo\":{\"backend\": "
            "\"gloo\", "
            "\"rank\": %d, \"world_size\": %d, \"local_rank\": 0, \"local_world_size\": 1, "
            "\"hostname\": \"host%d\", \"job\": \"bench\"},\n\"stepprof_version\":\"0.1.0\",\n"
            "\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":1790857026000000000,"
            "\n\"traceEvents\":[\n"
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"ts\":1000000.000,"
            "\"args\":{\"name\":\"train\"}}",
            rank, ranks, rank, pid);
    long long t = 1000000000000LL + skew_ns; /* ns */
    long seq = 0;
    for (long i = 1; i < n; i++) {
        if (i % 100 == 99) {
            long long end = 1000000000000LL + (seq + 1) * 100 * 3000LL + skew_ns;
            long long start = end - 40000 - rank * 1000;
            fprintf(
                f,
                ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"gloo:all_reduce\",\"pid\":%d,"
                "\"tid\":%d,"
                "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,\"args\":{\"External id\":%ld,"
                "\"Collective name\":\"allreduce\",\"Process Group Name\":\"0\",\"Group size\":%d,"
                "\"bytes\":4096,\"seq\":%ld,\"Event Type\":\"Communication\"}}",
                pid, pid, start / 1000, start % 1000, (end - start) / 1000, (end - start) % 1000, i,
                ranks, seq);
            seq++;
            t = end;
            continue;
        }
        fprintf(
            f,
            ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":%d,\"tid\":%d,"
            "\"ts\":%lld.%03lld,\"dur\":1.250,\"args\":{\"External id\":%ld,\"Event "
            "Type\":\"Operator\"}}",
            pid, pid, t / 1000, t % 1000, i);
        t += 2500;
    }
    fputs("\n],\n\"traceName\":\"rank\"}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static void quiet(void *ctx, int warning, const char *line)
{
    (void)ctx;
    if (warning) fprintf(stderr, "bench_merge: %s\n", line);
}

/* The child: merges argv[3..] into argv[2]. */
static int merge_main(int argc, char **argv)
{
    sp_merge_options o;
    sp_merge_options_init(&o);
    o.log = quiet;
    if (sp_trace_merge((const char *const *)argv + 3, (size_t)(argc - 3), argv[2], &o) != SP_OK) {
        fprintf(stderr, "bench_merge: %s\n", sp_last_error());
        return 1;
    }
    return 0;
}

/* Runs the merge of files[0..k) in a fresh process: seconds, peak RSS MiB. */
static int run_merge(const char *self, const char *out, char **files, int k, double *s,
                     double *cpu_s, double *rss_mib)
{
    char **args = calloc((size_t)k + 4, sizeof *args);
    if (!args) return -1;
    args[0] = (char *)self;
    args[1] = (char *)"--merge";
    args[2] = (char *)out;
    for (int i = 0; i < k; i++)
        args[3 + i] = files[i];
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        execv(self, args);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    pid_t got = pid > 0 ? wait4(pid, &status, 0, &ru) : -1;
    *s = now_s() - t0;
    free(args);
    if (got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--merge") == 0) return merge_main(argc, argv);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int ranks = argc > 2 ? atoi(argv[2]) : 8;
    if (n < 200 || ranks < 2 || ranks > 64) {
        fputs("usage: bench_merge [EVENTS_PER_RANK (>= 200)] [RANKS (2..64)]\n", stderr);
        return 2;
    }
    char dir[] = "/tmp/sp_bench_merge_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char *files[64], out[64];
    double t0 = now_s();
    for (int r = 0; r < ranks; r++) {
        files[r] = malloc(64);
        snprintf(files[r], 64, "%s/rank%d.json", dir, r);
        if (write_rank(files[r], r, ranks, n) != 0) {
            fprintf(stderr, "bench_merge: cannot write %s\n", files[r]);
            return 1;
        }
    }
    /* Written back now, so that the kernel's writeback of the inputs does
     * not throttle the merge's own writes. */
    sync();
    printf("wrote %d rank files of %ld events in %.1f s\n", ranks, n, now_s() - t0);
    snprintf(out, sizeof out, "%s/job.json", dir);
    double s2, c2, rss2, sr, cr, rssr;
    int rc = run_merge(argv[0], out, files, 2, &s2, &c2, &rss2);
    if (rc == 0) rc = run_merge(argv[0], out, files, ranks, &sr, &cr, &rssr);
    if (rc != 0) {
        fputs("bench_merge: the merge failed\n", stderr);
    } else {
        printf("merge of 2 ranks: %.2f s (CPU %.2f s), %.2f M events/s, peak RSS %.1f MiB\n", s2,
               c2, 2.0 * n / s2 / 1e6, rss2);
        printf("merge of %d ranks: %.2f s (CPU %.2f s), %.2f M events/s, peak RSS %.1f MiB\n",
               ranks, sr, cr, (double)ranks * n / sr / 1e6, rssr);
        printf("metric merge_events_per_s %.0f events/s\n", (double)ranks * n / sr);
        printf("metric merge_events_per_s_2 %.0f events/s\n", 2.0 * n / s2);
        printf("metric merge_events_per_cpu_s %.0f events/s\n", (double)ranks * n / cr);
        printf("metric merge_peak_rss_mib_2 %.2f MiB\n", rss2);
        printf("metric merge_peak_rss_mib_n %.2f MiB\n", rssr);
        printf("metric merge_rss_ratio %.3f x\n", rssr / rss2);
        /* The control: a merge alone on a core spends its wall time on the CPU. */
        printf("metric merge_wall_over_cpu %.3f x\n", sr / (cr > 1e-9 ? cr : 1e-9));
        printf("metric merge_ranks %d ranks\n", ranks);
        printf("metric merge_events_per_rank %ld events\n", n);
    }
    unlink(out);
    for (int r = 0; r < ranks; r++) {
        unlink(files[r]);
        free(files[r]);
    }
    rmdir(dir);
    return rc == 0 ? 0 : 1;
}
