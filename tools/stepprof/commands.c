/* commands.c: `stepprof summary`, `convert` and `info`, and the loading and
 * option parsing they share with diff.c. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- loading, with progress on a terminal ---- */

/* Says what the load skipped or cut, so that nothing is lost in silence. */
static void warn_load(const char *path, const sp_result *r)
{
    uint64_t skipped = sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED);
    uint64_t trailing = sp_result_counter(r, SP_COUNTER_TRAILING_BYTES);
    if (skipped)
        fprintf(stderr, "stepprof: warning: %s: %llu events skipped: a pid, tid, ts or dur of the wrong type\n",
                path, (unsigned long long)skipped);
    if (sp_result_thread_count(r) == 0)
        fprintf(stderr, "stepprof: warning: %s: no host events in it (no thread recorded a range)\n", path);
    if (trailing)
        fprintf(stderr,
                "stepprof: warning: %s: %llu bytes after the end of the data ignored (trailing garbage after "
                "a gzip stream, or a streamed crash dump whose last pass was cut short)\n",
                path, (unsigned long long)trailing);
}

/* Loads path into *one, or, when many is not NULL, its ranks into *many
 * (sp_result_load_ranks), with a progress line for big files on a
 * terminal. */
static int load(const char *path, sp_result **one, sp_result ***many, size_t *count)
{
    /* "-" is standard input (a pipe, or a file redirected). */
    const char *name = strcmp(path, "-") == 0 ? "/dev/stdin" : path;
    sp_load_options opts;
    sp_load_options_init(&opts);
    cli_progress p;
    struct stat st;
    int regular = stat(name, &st) == 0 && S_ISREG(st.st_mode);
    if (cli_progress_wanted(regular ? (uint64_t)st.st_size : 0, regular)) {
        cli_progress_begin(&p, path);
        opts.progress = cli_progress_show;
        opts.progress_user = &p;
    }
    sp_status s = many ? sp_result_load_ranks(name, &opts, many, count) : sp_result_load(name, &opts, one);
    if (opts.progress) cli_progress_end(&p);
    if (s != SP_OK) {
        fprintf(stderr, "stepprof: %s\n", sp_last_error());
        return s == SP_EINVAL ? CLI_USAGE : CLI_BAD_INPUT;
    }
    if (many)
        for (size_t i = 0; i < *count; i++)
            warn_load(path, (*many)[i]);
    else
        warn_load(path, *one);
    return CLI_OK;
}

int cli_load(const char *path, sp_result **out)
{
    return load(path, out, NULL, NULL);
}

int cli_load_ranks(const char *path, sp_result ***out, size_t *count)
{
    return load(path, NULL, out, count);
}

/* ---- summary ---- */

/* The cross-rank summary of n results, one per rank. */
static int print_rank_summary(sp_result **r, size_t n, const char *time_unit)
{
    if (sp_results_rank_summary((const sp_result *const *)r, NULL, n, time_unit, stdout) != SP_OK) {
        fprintf(stderr, "stepprof: %s\n", sp_last_error());
        return CLI_BAD_INPUT;
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
}

static const char summary_help[] =
    "usage: stepprof summary [OPTIONS] FILE...\n"
    "\n"
    "Prints paddle's summary tables of a saved result (.pb, .json, .json.gz).\n"
    "Given one file per rank of a distributed job, in rank order, or one trace\n"
    "that `stepprof merge` wrote, prints the cross-rank summary instead: per\n"
    "rank compute, communication, overlap, exposed communication and idle; the\n"
    "collectives; the stragglers.\n"
    "\n"
    "options:\n"
    "  --sorted-by KEY    CPUTotal (default), CPUAvg, CPUMax, CPUMin, GPUTotal,\n"
    "                     GPUAvg, GPUMax, GPUMin: how Operator, Kernel and\n"
    "                     UserDefined tables are sorted\n"
    "  --views LIST       comma-separated views to print (default all): Device,\n"
    "                     Overview, Model, Distributed, Kernel, Operator, Memory,\n"
    "                     MemoryManipulation, UDF (paddle's SummaryView names, such\n"
    "                     as OverView or OperatorView, work too)\n"
    "  --time-unit UNIT   s, ms (default), us or ns\n"
    "  --rank R           of a merged trace, rank R's own tables\n"
    "  --thread-sep       one table per thread instead of all threads merged\n"
    "  --op-detail        inner rows under each operator (default)\n"
    "  --no-op-detail     operators only\n"
    "  --torch [SORT]     torch's key_averages().table() instead, sorted by any of\n"
    "                     torch's keys: self_cpu_time_total (default),\n"
    "                     cpu_time_total, cpu_time (or cpu_time_avg), count,\n"
    "                     cpu_memory_usage, self_cpu_memory_usage,\n"
    "                     self_cuda_time_total, cuda_time_total, cuda_time,\n"
    "                     cuda_memory_usage, self_cuda_memory_usage (cuda also\n"
    "                     spelled xpu, privateuse1 or device) (also --torch=SORT)\n"
    "\n"
    "Throughput (printed after the tables when some step has num_samples, or\n"
    "when one of these options is given):\n"
    "  --throughput       print the Throughput Summary even without num_samples\n"
    "  --tokens-per-sample N\n"
    "                     tokens in one sample, for tokens/s (at most 1e12)\n"
    "  --flops-per-step F FLOPs of one step, instead of the FLOPs recorded with\n"
    "                     with_flops (at most 1e30)\n"
    "  --peak-tflops T    the hardware's peak TFLOP/s, for MFU, instead of the\n"
    "                     table of GPUs (for several GPUs, their sum; at most 1e9)\n"
    "\n"
    "An option's value may also be joined to it: --time-unit=us.\n";

static const char *const sort_names[] = {"CPUTotal", "CPUAvg", "CPUMax", "CPUMin",
                                         "GPUTotal", "GPUAvg", "GPUMax", "GPUMin"};

static int parse_sort(const char *s, sp_sorted_key *out)
{
    for (int i = 0; i < 8; i++)
        if (strcasecmp(s, sort_names[i]) == 0) {
            *out = (sp_sorted_key)i;
            return 0;
        }
    return -1;
}

static const char *const view_names[] = {"Device", "Overview", "Model", "Distributed", "Kernel",
                                         "Operator", "Memory", "MemoryManipulation", "UDF"};
#define VIEW_LIST                                                                                  \
    "Device, Overview, Model, Distributed, Kernel, Operator, Memory, MemoryManipulation or UDF"

/* One view name: "Operator", "operator", "OperatorView", "OverView". */
static int parse_view(const char *s, size_t len, unsigned *bits)
{
    char name[32];
    if (len == 0 || len >= sizeof name) return -1;
    memcpy(name, s, len);
    name[len] = '\0';
    if (len > 4 && strcasecmp(name + len - 4, "view") == 0) name[len - 4] = '\0';
    if (strcasecmp(name, "Over") == 0) strcpy(name, "Overview");
    for (int v = 0; v < 9; v++)
        if (strcasecmp(name, view_names[v]) == 0) {
            *bits |= 1u << v;
            return 0;
        }
    return -1;
}

/* A comma-separated list of views; spaces around a name are ignored
 * ("Overview, Operator"). An unknown or empty name is a usage error that
 * names it and lists the views. */
static int parse_views(const char *list, unsigned *bits)
{
    *bits = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        size_t len = (size_t)(end - p);
        if (len == 0)
            return cli_usage_error("summary",
                                   "--views '%s': an empty view name; give names separated by "
                                   "commas, each one of " VIEW_LIST,
                                   list);
        if (parse_view(p, len, bits) != 0)
            return cli_usage_error("summary",
                                   "--views: unknown view '%.*s'; the views are " VIEW_LIST
                                   " (paddle's SummaryView names, such as OverView, work too)",
                                   (int)len, p);
        if (!comma) return CLI_OK;
        p = comma + 1;
    }
}

/* torch's sort keys, as its table takes them (and the C table): the CPU
 * ones, and the device ones with the device spelled "cuda", "xpu",
 * "privateuse1" or "device". stepprof's "cpu_time_avg" too. */
static const char *const torch_cpu_sorts[] = {"self_cpu_time_total", "cpu_time_total", "cpu_time",
                                              "cpu_time_avg", "count", "cpu_memory_usage",
                                              "self_cpu_memory_usage"};
static const char *const torch_devices[] = {"cuda", "xpu", "privateuse1", "device"};
static const char *const torch_device_sorts[] = {"self_%s_time_total", "%s_time_total", "%s_time",
                                                 "%s_memory_usage", "self_%s_memory_usage"};
#define TORCH_SORT_LIST                                                                            \
    "self_cpu_time_total (default), cpu_time_total, cpu_time (or cpu_time_avg), count, "          \
    "cpu_memory_usage, self_cpu_memory_usage, self_cuda_time_total, cuda_time_total, cuda_time, " \
    "cuda_memory_usage or self_cuda_memory_usage (cuda also spelled xpu, privateuse1 or device)"

static int is_torch_sort(const char *s)
{
    for (size_t k = 0; k < sizeof torch_cpu_sorts / sizeof *torch_cpu_sorts; k++)
        if (strcmp(s, torch_cpu_sorts[k]) == 0) return 1;
    char key[64];
    for (size_t d = 0; d < sizeof torch_devices / sizeof *torch_devices; d++)
        for (size_t k = 0; k < sizeof torch_device_sorts / sizeof *torch_device_sorts; k++) {
            snprintf(key, sizeof key, torch_device_sorts[k], torch_devices[d]);
            if (strcmp(s, key) == 0) return 1;
        }
    return 0;
}

static int bad_torch_sort(const char *v)
{
    return cli_usage_error("summary",
                           "--torch: unknown sort key '%s'; it sorts by " TORCH_SORT_LIST, v);
}

static const char *const summary_flags[] = {"--thread-sep", "--op-detail", "--no-op-detail",
                                            "--throughput", NULL};

/* A throughput figure: a finite number above 0 and at most max (the limits
 * of sp_summary_options). */
int cli_parse_figure(const char *command, const char *option, const char *v, double max, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x > 0 && x <= max))
        return cli_usage_error(command, "%s: '%s' is not a number above 0 and at most %g", option, v,
                               max);
    *out = x;
    return CLI_OK;
}

int cli_summary(int argc, char **argv)
{
    sp_summary_options opts;
    sp_summary_options_init(&opts);
    opts.throughput = SP_THROUGHPUT_AUTO;
    const char *file = NULL, *torch = NULL;
    int use_torch = 0;
    /* The argument after a bare --torch that is not a sort key: taken for
     * FILE, as --torch's value is optional, unless a second FILE shows
     * that it was meant as the sort key. */
    const char *torch_guess = NULL;
    int more_files = 0;
    long one_rank = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_is_help(a)) {
            fputs(summary_help, stdout);
            return CLI_OK;
        }
        if (cli_option(argc, argv, &i, "--rank", &v)) {
            if (!v) return cli_missing_value("summary", "--rank", "R");
            char *end;
            one_rank = strtol(v, &end, 10);
            if (*end || end == v || one_rank < 0 || one_rank >= (1L << 24))
                return cli_usage_error("summary", "--rank: '%s' is not a rank (0, 1, ...)", v);
            continue;
        }
        if (cli_option(argc, argv, &i, "--sorted-by", &v)) {
            if (!v) return cli_missing_value("summary", "--sorted-by", "KEY");
            if (parse_sort(v, &opts.sorted_by) != 0)
                return cli_usage_error("summary",
                                       "--sorted-by: unknown sort key '%s'; the keys are CPUTotal, "
                                       "CPUAvg, CPUMax, CPUMin, GPUTotal, GPUAvg, GPUMax or GPUMin",
                                       v);
        } else if (cli_option(argc, argv, &i, "--views", &v)) {
            if (!v) return cli_missing_value("summary", "--views", "LIST");
            int rc = parse_views(v, &opts.views);
            if (rc != CLI_OK) return rc;
        } else if (cli_option(argc, argv, &i, "--time-unit", &v)) {
            if (!v) return cli_missing_value("summary", "--time-unit", "UNIT");
            if (strcmp(v, "s") && strcmp(v, "ms") && strcmp(v, "us") && strcmp(v, "ns"))
                return cli_usage_error("summary", "unknown time unit '%s' (s, ms, us or ns)", v);
            opts.time_unit = v;
        } else if (cli_option(argc, argv, &i, "--tokens-per-sample", &v)) {
            if (!v) return cli_missing_value("summary", "--tokens-per-sample", "N");
            int rc = cli_parse_figure("summary", "--tokens-per-sample", v, 1e12, &opts.tokens_per_sample);
            if (rc != CLI_OK) return rc;
        } else if (cli_option(argc, argv, &i, "--flops-per-step", &v)) {
            if (!v) return cli_missing_value("summary", "--flops-per-step", "F");
            int rc = cli_parse_figure("summary", "--flops-per-step", v, 1e30, &opts.flops_per_step);
            if (rc != CLI_OK) return rc;
        } else if (cli_option(argc, argv, &i, "--peak-tflops", &v)) {
            if (!v) return cli_missing_value("summary", "--peak-tflops", "T");
            int rc = cli_parse_figure("summary", "--peak-tflops", v, 1e9, &opts.peak_tflops);
            if (rc != CLI_OK) return rc;
        } else if (strcmp(a, "--throughput") == 0) {
            opts.throughput = SP_THROUGHPUT_ON;
        } else if (strcmp(a, "--thread-sep") == 0) {
            opts.thread_sep = true;
        } else if (strcmp(a, "--op-detail") == 0) {
            opts.op_detail = true;
        } else if (strcmp(a, "--no-op-detail") == 0) {
            opts.op_detail = false;
        } else if (strncmp(a, "--torch=", 8) == 0) {
            use_torch = 1;
            torch = a + 8;
            if (!is_torch_sort(torch)) return bad_torch_sort(torch);
        } else if (strcmp(a, "--torch") == 0) {
            use_torch = 1;
            if (i + 1 < argc && is_torch_sort(argv[i + 1]))
                torch = argv[++i];
            else if (i + 1 < argc && argv[i + 1][0] != '-')
                torch_guess = argv[i + 1];
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_unknown_option("summary", a, summary_flags);
        } else if (file) {
            if (file == torch_guess || a == torch_guess) return bad_torch_sort(torch_guess);
            if (use_torch)
                return cli_usage_error("summary", "--torch takes one FILE, got '%s' and '%s'", file, a);
            more_files = 1;
        } else {
            file = a;
        }
    }
    if (!file) return cli_usage_error("summary", "FILE missing");
    /* One file per rank: the cross-rank summary. */
    if (more_files && one_rank >= 0)
        return cli_usage_error("summary", "--rank takes one FILE (a merged trace)");
    if (more_files) return cli_rank_summary(argc, argv, opts.time_unit);
    sp_result **ranks;
    size_t n;
    int rc = cli_load_ranks(file, &ranks, &n);
    if (rc != CLI_OK) return rc;
    /* A merged trace (stepprof merge) of several ranks: the cross-rank
     * summary, as for the ranks' own files, or one rank's tables. */
    if (n > 1 && !use_torch && one_rank < 0) {
        rc = print_rank_summary(ranks, n, opts.time_unit);
        sp_results_release(ranks, n);
        return rc;
    }
    sp_result *r = ranks[0];
    if (one_rank >= 0) {
        r = NULL;
        for (size_t i = 0; i < n && !r; i++) {
            sp_dist_info d;
            sp_result_dist_info(ranks[i], &d);
            if (d.rank == one_rank) r = ranks[i];
        }
        if (!r) {
            fprintf(stderr, "stepprof: %s holds no rank %ld (%zu rank%s)\n", file, one_rank, n,
                    n == 1 ? "" : "s");
            sp_results_release(ranks, n);
            return CLI_BAD_INPUT;
        }
    }
    sp_status s = use_torch ? sp_result_table_torch(r, torch, -1, stdout) : sp_result_summary(r, &opts, stdout);
    sp_results_release(ranks, n);
    if (s != SP_OK) {
        fprintf(stderr, "stepprof: %s: %s\n", file, sp_last_error());
        return CLI_BAD_INPUT;
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
}

/* The files of argv (summary's arguments, already checked: those that are
 * not options or option values), one per rank in rank order, as
 * sp_results_rank_summary prints them. Options that only concern one
 * file's tables are ignored. */
int cli_rank_summary(int argc, char **argv, const char *time_unit)
{
    sp_result **r = calloc((size_t)argc + 1, sizeof *r);
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t n = 0;
    int rc = r && files ? CLI_OK : CLI_BAD_INPUT;
    for (int i = 0; rc == CLI_OK && i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_option(argc, argv, &i, "--sorted-by", &v) || cli_option(argc, argv, &i, "--views", &v) ||
            cli_option(argc, argv, &i, "--time-unit", &v) ||
            cli_option(argc, argv, &i, "--tokens-per-sample", &v) ||
            cli_option(argc, argv, &i, "--flops-per-step", &v) || cli_option(argc, argv, &i, "--peak-tflops", &v))
            continue;
        if (a[0] == '-' && a[1] != '\0') continue;
        files[n] = a;
        rc = cli_load(a, &r[n]);
        if (rc == CLI_OK) n++;
    }
    if (rc == CLI_OK) rc = print_rank_summary(r, n, time_unit);
    for (size_t i = 0; i < n; i++)
        sp_result_release(r[i]);
    free(r);
    free(files);
    return rc;
}

/* ---- convert ---- */

static const char convert_help[] =
    "usage: stepprof convert FILE -o OUT [--format json|json.gz|pb|pftrace]\n"
    "\n"
    "Writes a saved result in another format, chosen by OUT's name: .pb for\n"
    "paddle's NodeTreesProto, .gz for gzip-compressed Chrome-trace JSON,\n"
    ".pftrace for a Perfetto trace, anything else for Chrome-trace JSON;\n"
    "--format overrides the name. OUT\n"
    "appears whole or not at all. Every format keeps the host events and the GPU\n"
    "records.\n"
    "Values may be joined to their option: --output=OUT, --format=pb.\n";

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cli_convert(int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *format = NULL;
    static const char *const no_flags[] = {NULL};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_is_help(a)) {
            fputs(convert_help, stdout);
            return CLI_OK;
        }
        if (cli_option(argc, argv, &i, "-o", &v) || cli_option(argc, argv, &i, "--output", &v)) {
            if (!v) return cli_missing_value("convert", a, "OUT");
            out = v;
        } else if (cli_option(argc, argv, &i, "--format", &v)) {
            if (!v) return cli_missing_value("convert", "--format", "json|json.gz|pb|pftrace");
            format = v;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_unknown_option("convert", a, no_flags);
        } else if (file) {
            return cli_usage_error("convert", "one FILE expected, got '%s' and '%s'", file, a);
        } else {
            file = a;
        }
    }
    if (!file) return cli_usage_error("convert", "FILE missing");
    if (!out || !*out) return cli_usage_error("convert", "-o OUT missing");
    int pb;
    sp_format fmt = SP_FORMAT_JSON;
    if (format) {
        if (strcmp(format, "pb") == 0) {
            pb = 1;
        } else if (strcmp(format, "pftrace") == 0) {
            pb = 0;
            fmt = SP_FORMAT_PERFETTO;
        } else if (strcmp(format, "json") == 0 || strcmp(format, "json.gz") == 0) {
            pb = 0;
            fmt = strcmp(format, "json") == 0 ? SP_FORMAT_JSON : SP_FORMAT_JSON_GZ;
        } else {
            return cli_usage_error("convert", "unknown format '%s' (json, json.gz, pb or pftrace)",
                                   format);
        }
    } else {
        pb = ends_with(out, ".pb");
        fmt = ends_with(out, ".gz")        ? SP_FORMAT_JSON_GZ
              : ends_with(out, ".pftrace") ? SP_FORMAT_PERFETTO
                                           : SP_FORMAT_JSON;
    }
    sp_result *r;
    int rc = cli_load(file, &r);
    if (rc != CLI_OK) return rc;
    if (isatty(STDERR_FILENO)) fprintf(stderr, "stepprof: writing %s\n", out);
    sp_status s = pb ? sp_result_export_protobuf(r, out) : sp_result_export(r, out, fmt);
    sp_result_release(r);
    if (s != SP_OK) {
        fprintf(stderr, "stepprof: %s\n", sp_last_error());
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* ---- info ---- */

static const char info_help[] =
    "usage: stepprof info FILE\n"
    "\n"
    "Describes a saved result: its span (index and time range), where it ran\n"
    "(rank, world size, local rank, host, backend, job), each thread with its\n"
    "events (ranges, instants, counter samples) and dropped events, the events\n"
    "by type, and the span's counters (drops and repairs).\n";

static void print_time(const char *label, int64_t ns)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    char when[32] = "?";
    if (gmtime_r(&secs, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    printf("%s%s.%09lld UTC (%lld ns)\n", label, when, (long long)(ns % 1000000000), (long long)ns);
}

int cli_info(int argc, char **argv)
{
    const char *file = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(info_help, stdout);
            return CLI_OK;
        }
        static const char *const no_flags[] = {NULL};
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_unknown_option("info", argv[i], no_flags);
        if (file) return cli_usage_error("info", "one FILE expected, got '%s' and '%s'", file, argv[i]);
        file = argv[i];
    }
    if (!file) return cli_usage_error("info", "FILE missing");
    sp_result *r;
    int rc = cli_load(file, &r);
    if (rc != CLI_OK) return rc;
    int64_t start, end;
    sp_result_span(r, &start, &end);
    printf("file: %s\n", file);
    printf("span: %u\n", sp_result_span_index(r));
    print_time("start: ", start);
    print_time("end:   ", end);
    printf("duration: %.6f ms\n", (double)(end - start) / 1e6);
    sp_dist_info d;
    sp_result_dist_info(r, &d);
    printf("rank: %lld of %lld (local %lld of %lld), host: %s, backend: %s, job: %s\n",
           (long long)d.rank, (long long)d.world_size, (long long)d.local_rank,
           (long long)d.local_world_size, *d.hostname ? d.hostname : "-",
           *d.backend ? d.backend : "-", *d.job ? d.job : "-");
    size_t threads = sp_result_thread_count(r);
    uint64_t by_type[SP_EVENT_TYPE_COUNT] = {0}, total = 0;
    printf("threads: %zu\n", threads);
    for (size_t t = 0; t < threads; t++) {
        sp_thread_info ti;
        if (sp_result_thread(r, t, &ti) != SP_OK) continue;
        uint64_t instants = 0, counters = 0;
        for (size_t i = 0; i < ti.event_count; i++) {
            sp_event_info e;
            if (sp_result_event(r, t, i, &e) != SP_OK) continue;
            if (e.flags & SP_EVENT_FLAG_INSTANT) instants++;
            if (e.flags & SP_EVENT_FLAG_COUNTER) counters++;
            if ((unsigned)e.type < SP_EVENT_TYPE_COUNT) by_type[e.type]++;
        }
        total += ti.event_count;
        printf("  thread %llu (%s): %zu events (%llu ranges, %llu instants, %llu counter samples), %llu dropped\n",
               (unsigned long long)ti.tid, ti.name, ti.event_count,
               (unsigned long long)(ti.event_count - instants - counters), (unsigned long long)instants,
               (unsigned long long)counters, (unsigned long long)ti.dropped);
    }
    printf("events: %llu\n", (unsigned long long)total);
    for (int k = 0; k < SP_EVENT_TYPE_COUNT; k++)
        if (by_type[k]) printf("  %-20s %llu\n", sp_event_type_name((sp_event_type)k), (unsigned long long)by_type[k]);
    printf("dropped: %llu\n", (unsigned long long)sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    printf("counters:");
    for (int c = 0; c < SP_COUNTER_COUNT; c++)
        printf(" %s=%llu", sp_counter_name((sp_counter_kind)c),
               (unsigned long long)sp_result_counter(r, (sp_counter_kind)c));
    printf("\n");
    sp_result_release(r);
    return fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
}
