/* test_handlers_rank.c: the rank in the TensorBoard handler's default worker
 * name (handlers.c, trace-format.md §9): under a launcher (RANK and
 * WORLD_SIZE set) the name is "<host>_rank<R>_<pid>", R zero-padded to the
 * width of the largest rank (world size - 1), so that the plugin's sorted
 * worker list is in rank order; the trace's distributedInfo carries the same
 * rank and world size. World sizes 1, 10, 11, 100, 101 and 1000. The
 * backend the program names (sp_profiler_set_dist_backend) goes before the
 * launcher's variable. */
#include "check.h"

#include <stepprof/stepprof.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs one span under the TensorBoard handler with the default worker name
 * in a fresh directory, calling in_span (when not NULL) while it records;
 * returns the one file's name (static) and its first 64 KiB in text. */
static const char *one_file_with(const char *rank, const char *world, void (*in_span)(sp_profiler *),
                                 char *text, size_t size)
{
    static char name[512];
    name[0] = '\0';
    text[0] = '\0';
    setenv("RANK", rank, 1);
    setenv("WORLD_SIZE", world, 1);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/sp_rank_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_handler_tensorboard(&o.on_trace_ready, dir, NULL, false));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (p) {
        CHECK_OK(sp_profiler_start(p));
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
        if (in_span) in_span(p);
        CHECK_OK(sp_profiler_step(p, -1));
        CHECK_OK(sp_profiler_stop(p));
        sp_profiler_destroy(p);
    }
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    DIR *d = opendir(dir);
    int files = 0;
    char path[1024];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        files++;
        snprintf(name, sizeof name, "%s", e->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(text, 1, size - 1, f) : 0;
        if (f) fclose(f);
        text[n] = '\0';
        remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    CHECK_EQ(1, files);
    return name;
}

static const char *one_file(const char *rank, const char *world, char *text, size_t size)
{
    return one_file_with(rank, world, NULL, text, size);
}

static void test_handlers_rank_padding_follows_world_size(void)
{
    static const struct {
        const char *rank, *world, *part;
    } cases[] = {
        {"0", "1", "_rank0_"},     {"3", "10", "_rank3_"},     {"9", "10", "_rank9_"},
        {"3", "11", "_rank03_"},   {"3", "100", "_rank03_"},   {"42", "100", "_rank42_"},
        {"3", "101", "_rank003_"}, {"3", "1000", "_rank003_"}, {"999", "1000", "_rank999_"},
        /* a world size that cannot hold the rank becomes rank + 1 */
        {"7", "3", "_rank7_"},     {"10", "10", "_rank10_"},
    };
    static char text[1 << 16];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *name = one_file(cases[i].rank, cases[i].world, text, sizeof text);
        char want[64], info[96];
        snprintf(want, sizeof want, "%s%d.", cases[i].part, (int)getpid());
        if (!strstr(name, want)) fprintf(stderr, "rank %s of %s: \"%s\" lacks \"%s\"\n", cases[i].rank,
                                         cases[i].world, name, want);
        CHECK(strstr(name, want) != NULL);
        CHECK(strstr(name, ".pt.trace.json") != NULL);
        long world = strtol(cases[i].world, NULL, 10), rank = strtol(cases[i].rank, NULL, 10);
        if (world <= rank) world = rank + 1;
        snprintf(info, sizeof info, "\"rank\": %ld, \"world_size\": %ld, \"local_rank\": ", rank,
                 world);
        if (!strstr(text, info)) fprintf(stderr, "trace lacks %s\n", info);
        CHECK(strstr(text, info) != NULL);
    }
}

static void names_gloo(sp_profiler *p) { CHECK_OK(sp_profiler_set_dist_backend(p, "gloo")); }

static void names_gloo_then_bad_names(sp_profiler *p)
{
    names_gloo(p);
    CHECK_EQ(SP_EINVAL, sp_profiler_set_dist_backend(p, "a\"b"));
    CHECK_EQ(SP_EINVAL, sp_profiler_set_dist_backend(p, "a_name_of_thirty_two_characters_"));
    CHECK_EQ(SP_EINVAL, sp_profiler_set_dist_backend(NULL, "gloo"));
}

static void names_gloo_then_forgets(sp_profiler *p)
{
    names_gloo(p);
    CHECK_OK(sp_profiler_set_dist_backend(p, ""));
}

static void names_a_mixed_backend(sp_profiler *p)
{
    CHECK_OK(sp_profiler_set_dist_backend(p, "cpu:gloo,cuda:nccl"));
}

static void check_backend(void (*in_span)(sp_profiler *), const char *rank, const char *world,
                          const char *want)
{
    static char text[1 << 16];
    one_file_with(rank, world, in_span, text, sizeof text);
    char info[128];
    if (want)
        snprintf(info, sizeof info, "\"distributedInfo\":{\"backend\": \"%s\", \"rank\": %s,",
                 want, rank);
    else
        snprintf(info, sizeof info, "\"distributedInfo\":{\"rank\": %s,", rank);
    if (!strstr(text, info)) fprintf(stderr, "trace lacks %s\n", info);
    CHECK(strstr(text, info) != NULL);
}

/* What the program names beats STEPPROF_DIST_BACKEND, set during the span
 * it is written for; a refused name changes nothing, "" goes back to the
 * variable, and one process still writes no backend. */
static void test_handlers_rank_program_names_the_backend(void)
{
    setenv("STEPPROF_DIST_BACKEND", "mpi", 1);
    check_backend(NULL, "1", "2", "mpi");
    check_backend(names_gloo, "1", "2", "gloo");
    check_backend(names_gloo_then_bad_names, "1", "2", "gloo");
    check_backend(names_gloo_then_forgets, "1", "2", "mpi");
    check_backend(names_a_mixed_backend, "1", "2", "cpu:gloo,cuda:nccl");
    check_backend(names_gloo, "0", "1", NULL);
    unsetenv("STEPPROF_DIST_BACKEND");
}

int main(void)
{
    RUN_TEST(test_handlers_rank_padding_follows_world_size);
    RUN_TEST(test_handlers_rank_program_names_the_backend);
    return TEST_SUMMARY();
}
