/* test_cli.c: the stepprof command-line tool, run as a user runs it (the
 * binary's path comes from CMake as SP_CLI). Checks exit codes (0 fine, 1 bad
 * input, 2 wrong usage), that errors go to stderr naming the file, that
 * `summary` of a .pb and of the .json converted from it print the same
 * tables, and the output of info and diff on the committed seed trace. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/sp_cli_XXXXXX";
static char out_text[1 << 17], err_text[1 << 14];

static char *slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Runs `PREFIX stepprof ARGS` in the shell (prefix: a pipe's writer, or
 * ""); stdout and stderr land in out_text / err_text. No time limit of its
 * own: a million-event convert took over a minute under ASan on two busy
 * cores; a hang is ended by ctest's timeout for the whole test. */
static int cli_after(const char *prefix, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s %s >%s/out 2>%s/err", dir, prefix, SP_CLI, args, dir,
             dir);
    int status = system(cmd);
    char path[300];
    snprintf(path, sizeof path, "%s/out", dir);
    slurp(path, out_text, sizeof out_text);
    snprintf(path, sizeof path, "%s/err", dir);
    slurp(path, err_text, sizeof err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `stepprof ARGS`. */
static int cli(const char *args) { return cli_after("", args); }

#define SEED SP_SOURCE_DIR "/tests/fuzz/seeds/trace.json"
#define PADDLE SP_SOURCE_DIR "/tests/data/paddle_cpu_tiny.paddle_trace.pb"

static void test_cli_usage_errors_exit_2(void)
{
    CHECK_EQ(2, cli(""));
    CHECK_EQ(2, cli("frobnicate"));
    CHECK(strstr(err_text, "unknown command 'frobnicate'") != NULL);
    CHECK_EQ(2, cli("summary"));
    CHECK(strstr(err_text, "FILE missing") != NULL);
    CHECK_EQ(2, cli("summary --sorted-by Bogus " SEED));
    CHECK_EQ(2, cli("summary --time-unit h " SEED));
    CHECK_EQ(2, cli("summary --views Overview,Nope " SEED));
    CHECK_EQ(2, cli("convert " SEED));
    CHECK(strstr(err_text, "-o OUT missing") != NULL);
    CHECK_EQ(2, cli("convert " SEED " -o x.xml --format xml"));
    CHECK_EQ(2, cli("diff " SEED));
    CHECK_EQ(2, cli("info --bogus " SEED));
    CHECK_EQ('\0', out_text[0]);
}

static void test_cli_help_for_each_command(void)
{
    CHECK_EQ(0, cli("--help"));
    CHECK(strstr(out_text, "commands:") != NULL);
    const char *commands[] = {"summary", "convert", "info", "diff"};
    for (int i = 0; i < 4; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", commands[i]);
        CHECK_EQ(0, cli(args));
        CHECK(strncmp(out_text, "usage: stepprof ", 16) == 0);
        snprintf(args, sizeof args, "help %s", commands[i]);
        CHECK_EQ(0, cli(args));
        CHECK(strstr(out_text, commands[i]) != NULL);
    }
    CHECK_EQ(0, cli("--version"));
    CHECK(strstr(out_text, SP_VERSION_STRING) != NULL);
    /* --help lists --version. */
    CHECK_EQ(0, cli("--help"));
    CHECK(strstr(out_text, "  --version             print stepprof's version and exit\n") != NULL);
}

/* Each usage error names what was wrong and what is accepted instead. */
static void test_cli_usage_errors_say_what_to_do(void)
{
    CHECK_EQ(2, cli("summary --views Overview,Nope " SEED));
    CHECK(strstr(err_text,
                 "stepprof: --views: unknown view 'Nope'; the views are Device, Overview, Model, "
                 "Distributed, Kernel, Operator, Memory, MemoryManipulation or UDF (paddle's "
                 "SummaryView names, such as OverView, work too)\n") != NULL);
    CHECK_EQ(2, cli("summary --views 'Overview, Oprator' " SEED));
    CHECK(strstr(err_text, "unknown view 'Oprator';") != NULL);
    CHECK_EQ(2, cli("summary --views Overview,,Kernel " SEED));
    CHECK(strstr(err_text, "--views 'Overview,,Kernel': an empty view name;") != NULL);
    CHECK_EQ(2, cli("summary --sorted-by Bogus " SEED));
    CHECK(strstr(err_text,
                 "--sorted-by: unknown sort key 'Bogus'; the keys are CPUTotal, CPUAvg, CPUMax, "
                 "CPUMin, GPUTotal, GPUAvg, GPUMax or GPUMin") != NULL);
    /* --torch's value is optional: a word after it that is no sort key,
     * followed by the FILE, was meant as the key. */
    CHECK_EQ(2, cli("summary --torch flops " SEED));
    CHECK(strstr(err_text,
                 "stepprof: --torch: unknown sort key 'flops'; it sorts by self_cpu_time_total "
                 "(default), cpu_time_total, cpu_time (or cpu_time_avg), count, ") != NULL);
    CHECK_EQ(2, cli("summary " SEED " --torch flops"));
    CHECK(strstr(err_text, "--torch: unknown sort key 'flops'") != NULL);
    CHECK_EQ(2, cli("summary --torch=flops " SEED));
    CHECK(strstr(err_text, "--torch: unknown sort key 'flops'") != NULL);
    CHECK_EQ(2, cli("summary --thread-sep=yes " SEED));
    CHECK(strstr(err_text, "stepprof: --thread-sep takes no value, got '--thread-sep=yes'\n") !=
          NULL);
    CHECK_EQ(2, cli("summary --time-unit"));
    CHECK(strstr(err_text,
                 "stepprof: --time-unit needs a value: --time-unit UNIT (or --time-unit=UNIT)\n") !=
          NULL);
    CHECK_EQ(2, cli("diff --per-step=1 " SEED " " SEED));
    CHECK(strstr(err_text, "--per-step takes no value") != NULL);
    CHECK_EQ(2, cli("diff --limit=-1 " SEED " " SEED));
    CHECK(strstr(err_text, "bad --limit '-1': a number of rows, 0 for all") != NULL);
    CHECK_EQ(2, cli("info --bogus " SEED));
    CHECK(strstr(err_text,
                 "stepprof: unknown option '--bogus'\nRun 'stepprof info --help' for usage.\n") !=
          NULL);
}

/* Every option that takes a value takes it as --opt=value too. */
static void test_cli_options_take_joined_values(void)
{
    static char want[sizeof out_text];
    CHECK_EQ(0, cli("summary --time-unit us --views Overview,Operator --sorted-by CPUMax " SEED));
    snprintf(want, sizeof want, "%s", out_text);
    CHECK(strstr(want, "Operator Summary") != NULL);
    CHECK_EQ(0, cli("summary --time-unit=us --views=Overview,Operator --sorted-by=CPUMax " SEED));
    CHECK_STR_EQ(want, out_text);
    /* Spaces after the commas, as a shell user types them. */
    CHECK_EQ(0,
             cli("summary --time-unit=us --views 'Overview, Operator' --sorted-by=CPUMax " SEED));
    CHECK_STR_EQ(want, out_text);
    CHECK_EQ(0, cli("summary --torch count " SEED));
    snprintf(want, sizeof want, "%s", out_text);
    CHECK_EQ(0, cli("summary --torch=count " SEED));
    CHECK_STR_EQ(want, out_text);
    /* Every sort key of torch's table, each spelling of the device: the
     * table, never a usage error; one the table does not know is refused. */
    static const char *const keys[] = {
        "self_cpu_time_total", "cpu_time_total", "cpu_time", "cpu_time_avg", "count",
        "cpu_memory_usage", "self_cpu_memory_usage", "self_cuda_time_total", "cuda_time_total",
        "cuda_time", "cuda_memory_usage", "self_cuda_memory_usage", "self_xpu_time_total",
        "xpu_time", "privateuse1_time_total", "self_privateuse1_memory_usage",
        "device_time_total", "self_device_time_total", "device_memory_usage"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "summary --torch %s " SEED, keys[k]);
        CHECK_EQ(0, cli(cmd));
        CHECK(strstr(out_text, "# of Calls") != NULL);
        snprintf(cmd, sizeof cmd, "summary " SEED " --torch=%s", keys[k]);
        CHECK_EQ(0, cli(cmd));
    }
    CHECK_EQ(2, cli("summary --torch self_cuda_time " SEED));
    CHECK_EQ(2, cli("summary --torch=gpu_time_total " SEED));
    CHECK_EQ(0, cli("convert " SEED " --output=joined.out --format=pb"));
    CHECK_EQ(0, cli("info joined.out"));
    CHECK(strstr(out_text, "threads: 2\n") != NULL);
    CHECK_EQ(0, cli("diff --time-unit us --limit 1 " SEED " " SEED));
    snprintf(want, sizeof want, "%s", out_text);
    CHECK_EQ(0, cli("diff --time-unit=us --limit=1 " SEED " " SEED));
    CHECK_STR_EQ(want, out_text);
}

static void test_cli_bad_input_exits_1_naming_the_file(void)
{
    CHECK_EQ(1, cli("summary missing.pb"));
    CHECK(strstr(err_text, "stepprof: missing.pb: cannot open") != NULL);
    FILE *f = fopen("/dev/null", "r");
    fclose(f);
    char path[300];
    snprintf(path, sizeof path, "%s/broken.json", dir);
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":", f);
    fclose(f);
    CHECK_EQ(1, cli("info broken.json"));
    CHECK(strstr(err_text, "broken.json: not a valid JSON trace") != NULL);
    /* The target is named, not its temporary, with what to do. */
    CHECK_EQ(1, cli("convert " SEED " -o /nonexistent/dir/x.pb"));
    CHECK_STR_EQ(
        "stepprof: cannot write /nonexistent/dir/x.pb: No such file or directory (its directory "
        "'/nonexistent/dir' must exist)\n",
        err_text);
    /* A directory: the reason, and what to give instead. */
    CHECK_EQ(1, cli("summary /tmp"));
    CHECK_STR_EQ("stepprof: /tmp: cannot read: Is a directory (give the path of a trace file: "
                 ".json, .json.gz, "
                 ".pb or .spdump)\n",
                 err_text);
}

/* A file in no format stepprof reads says so and lists the formats, for
 * text (before: "not a valid protobuf trace: unsupported wire type at
 * byte 3") and for binary junk; a corrupt gzip says it is one. */
static void test_cli_unrecognised_and_corrupt_files(void)
{
    static const char formats[] =
        "stepprof reads Chrome-trace JSON (.json, starting with '{' or '['), gzip-compressed JSON "
        "(.json.gz), "
        "paddle's protobuf NodeTreesProto (.pb), the Perfetto traces stepprof writes (.pftrace) "
        "and stepprof's crash and stream dumps (.spdump)\n";
    char want[800];
    CHECK_EQ(1,
             cli_after("printf 'hello world\\nsecond line\\n' >notes.txt &&", "summary notes.txt"));
    snprintf(want, sizeof want,
             "stepprof: notes.txt: unrecognised format (the file begins with \"hello world\", "
             "which is not how "
             "a trace begins): %s",
             formats);
    CHECK_STR_EQ(want, err_text);
    CHECK_EQ(1, cli_after("printf '\\177ELF\\2\\1\\1\\0\\0\\0' >a.out &&", "info a.out"));
    snprintf(want, sizeof want,
             "stepprof: a.out: unrecognised format (the file begins with bytes 7f 45 4c 46 02 01 "
             "01 00, which is "
             "not how a trace begins): %s",
             formats);
    CHECK_STR_EQ(want, err_text);
    /* A real .pb still loads (its first byte is a field key). */
    CHECK_EQ(0, cli("info " PADDLE));
    /* gzip's magic and a cut header; then a file cut after 20 bytes. */
    CHECK_EQ(1, cli_after("printf '\\037\\213\\010\\000' >cut.json.gz &&", "info cut.json.gz"));
    CHECK_STR_EQ("stepprof: cut.json.gz: not a valid gzip file: it is truncated or corrupt (zlib: "
                 "unexpected "
                 "end of file after 4 compressed bytes, 0 bytes decompressed); compress the trace "
                 "again or use "
                 "a complete copy\n",
                 err_text);
    CHECK_EQ(1, cli_after("printf '\\037\\213\\010\\000\\000\\000\\000\\000\\000\\003\\377\\377' "
                          ">bad.json.gz &&",
                          "info bad.json.gz"));
    CHECK_STR_EQ("stepprof: bad.json.gz: not a valid gzip file: the data is corrupt (zlib: invalid "
                 "block type, "
                 "at compressed byte 11); compress the trace again or use an uncorrupted copy\n",
                 err_text);
}

static void test_cli_convert_keeps_the_tables(void)
{
    static char pb[sizeof out_text], json[sizeof out_text], gz[sizeof out_text];
    CHECK_EQ(0, cli("convert " PADDLE " -o a.pb"));
    CHECK_EQ(0, cli("summary --time-unit us --thread-sep a.pb"));
    snprintf(pb, sizeof pb, "%s", out_text);
    CHECK(strstr(pb, "Operator Summary") != NULL);
    CHECK_EQ(0, cli("convert a.pb -o a.json"));
    CHECK_EQ(0, cli("convert a.json -o a.json.gz"));
    CHECK_EQ(0, cli("summary --time-unit us --thread-sep a.json"));
    snprintf(json, sizeof json, "%s", out_text);
    CHECK_EQ(0, cli("summary --time-unit us --thread-sep a.json.gz"));
    snprintf(gz, sizeof gz, "%s", out_text);
    CHECK_STR_EQ(pb, json);
    CHECK_STR_EQ(pb, gz);
    CHECK_EQ(0, cli("convert a.json.gz -o b.pb --format pb"));
    CHECK_EQ(0, cli("summary --time-unit us --thread-sep b.pb"));
    CHECK_STR_EQ(pb, out_text);
    CHECK_EQ(0, cli("summary --views OperatorView --sorted-by CPUMax --no-op-detail a.pb"));
    CHECK(strstr(out_text, "Operator Summary") != NULL);
    CHECK(strstr(out_text, "Overview Summary") == NULL);
    CHECK_EQ(0, cli("summary --torch count a.pb"));
    CHECK(strstr(out_text, "# of Calls") != NULL);
}

static void test_cli_info(void)
{
    CHECK_EQ(0, cli("info " SEED));
    CHECK(strstr(out_text, "span: 2\n") != NULL);
    CHECK(strstr(out_text, "threads: 2\n") != NULL);
    CHECK(strstr(out_text, "thread 7 (main): 6 events (4 ranges, 1 instants, 1 counter samples), 0 dropped") != NULL);
    CHECK(strstr(out_text, "start: 2026-11-18 11:06:40.000000500 UTC (1795000000000000500 ns)") != NULL);
    CHECK(strstr(out_text, "dropped: 1\n") != NULL);
    CHECK(strstr(out_text, "misuse=2") != NULL);
    /* The seed names no rank: the defaults of a single process. */
    CHECK(strstr(out_text, "rank: 0 of 1 (local 0 of 1), host: -, backend: -, job: -\n") != NULL);
}

static void test_cli_diff(void)
{
    /* B is A with the Dataloader range ten times longer. */
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    char text[4096];
    slurp(SEED, text, sizeof text);
    FILE *f = fopen(a, "w");
    fputs(text, f);
    fclose(f);
    char *p = strstr(text, "\"ts\":1.500,\"dur\":0.500");
    CHECK(p != NULL);
    if (p) memcpy(p, "\"ts\":1.500,\"dur\":5.000", 22);
    f = fopen(b, "w");
    fputs(text, f);
    fclose(f);
    CHECK_EQ(0, cli("diff --time-unit us a.json b.json"));
    /* Phases: Dataloader changed most, so it comes first. */
    const char *phases = strstr(out_text, "Phases (Overview)");
    CHECK(phases != NULL);
    if (phases) {
        const char *first = strchr(strchr(phases, '\n') + 1, '\n') + 1;
        CHECK(strncmp(first, "Dataloader ", 11) == 0);
        CHECK(strstr(first, "+4.500") != NULL);
        CHECK(strstr(first, "+900.0%") != NULL);
    }
    CHECK_EQ(0, cli("diff --per-step a.json b.json"));
    CHECK(strstr(out_text, "times per step") != NULL);
}

/* The input read from a pipe, a FIFO, "-" and /dev/stdin: the same output
 * as from the file (before: a FIFO hung, a pipe failed). */
static void test_cli_reads_pipes_and_stdin(void)
{
    static char want[sizeof out_text];
    static const char *const files[] = {SEED, PADDLE};
    for (int i = 0; i < 2; i++) {
        char args[600], prefix[600];
        snprintf(args, sizeof args, "summary --time-unit us %s", files[i]);
        CHECK_EQ(0, cli(args));
        snprintf(want, sizeof want, "%s", out_text);
        CHECK(strstr(want, "Overview Summary") != NULL);
        snprintf(prefix, sizeof prefix, "cat %s |", files[i]);
        CHECK_EQ(0, cli_after(prefix, "summary --time-unit us -"));
        CHECK_STR_EQ(want, out_text);
        CHECK_EQ(0, cli_after(prefix, "summary --time-unit us /dev/stdin"));
        CHECK_STR_EQ(want, out_text);
        snprintf(prefix, sizeof prefix, "rm -f in.fifo && mkfifo in.fifo && { cat %s >in.fifo & } &&", files[i]);
        CHECK_EQ(0, cli_after(prefix, "summary --time-unit us in.fifo"));
        CHECK_STR_EQ(want, out_text);
        /* A gzip stream through a pipe too. */
        snprintf(prefix, sizeof prefix, "gzip -c %s |", SEED);
        CHECK_EQ(0, cli_after(prefix, "info -"));
        CHECK(strstr(out_text, "threads: 2\n") != NULL);
    }
    /* An empty pipe is an error naming the input. */
    CHECK_EQ(1, cli_after("printf '' |", "info -"));
    CHECK(strstr(err_text, "empty file") != NULL);
}

/* What a load skipped or ignored is said on stderr (exit 0: the rest loaded). */
static void test_cli_warns_about_skipped_input(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/types.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":2,"
          "\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":2,"
          "\"ts\":\"1\",\"dur\":1}]}",
          f);
    fclose(f);
    CHECK_EQ(0, cli("info types.json"));
    CHECK(strstr(err_text, "warning: types.json: 1 events skipped") != NULL);
    CHECK(strstr(out_text, "load_skipped=1") != NULL);
    /* Garbage after a gzip stream. */
    char prefix[600];
    snprintf(prefix, sizeof prefix, "{ gzip -c %s; printf 'junk'; } >junk.json.gz &&", SEED);
    CHECK_EQ(0, cli_after(prefix, "info junk.json.gz"));
    CHECK(strstr(err_text, "warning: junk.json.gz: 4 bytes after the end of the data ignored") != NULL);
    /* A trace with no event stepprof restores says so. */
    snprintf(path, sizeof path, "%s/gpu_only.json", dir);
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
          "\"ts\":1,\"dur\":1}]}",
          f);
    fclose(f);
    CHECK_EQ(0, cli("info gpu_only.json"));
    CHECK(strstr(err_text, "warning: gpu_only.json: no host events") != NULL);
    /* Paddle's JSON dialect loads, with its ranges. */
    CHECK_EQ(0, cli("summary " SP_SOURCE_DIR "/tests/data/paddle_dialect.paddle_trace.json"));
    CHECK(strstr(out_text, "ProfileStep") != NULL);
    CHECK(strstr(out_text, "linear dygraph") != NULL);
}

/* A trace nested 1,000,000 deep through convert (JSON -> .pb -> JSON) and
 * info: the CLI's loading and exporting never recurse per level. (summary's
 * tables walk the tree in src/analyze, checked there.) */
static void test_cli_deep_nesting(void)
{
    const long depth = 1000000;
    char path[300];
    snprintf(path, sizeof path, "%s/deep.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"traceEvents\":[\n", f);
    for (long i = 0; i < depth; i++)
        fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"n\",\"pid\":1,\"tid\":7,\"ts\":%ld,\"dur\":%ld}\n",
                i ? "," : "", i, 2 * (depth - i));
    fputs("]}\n", f);
    fclose(f);
    CHECK_EQ(0, cli("convert deep.json -o deep.pb"));
    CHECK_EQ(0, cli("convert deep.pb -o deep2.json"));
    CHECK_EQ(0, cli("info deep2.json"));
    CHECK(strstr(out_text, ": 1000000 events (1000000 ranges") != NULL);
    unlink(path);
    snprintf(path, sizeof path, "%s/deep.pb", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/deep2.json", dir);
    unlink(path);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_cli_usage_errors_exit_2);
    RUN_TEST(test_cli_help_for_each_command);
    RUN_TEST(test_cli_usage_errors_say_what_to_do);
    RUN_TEST(test_cli_options_take_joined_values);
    RUN_TEST(test_cli_bad_input_exits_1_naming_the_file);
    RUN_TEST(test_cli_unrecognised_and_corrupt_files);
    RUN_TEST(test_cli_convert_keeps_the_tables);
    RUN_TEST(test_cli_info);
    RUN_TEST(test_cli_diff);
    RUN_TEST(test_cli_reads_pipes_and_stdin);
    RUN_TEST(test_cli_warns_about_skipped_input);
    RUN_TEST(test_cli_deep_nesting);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
