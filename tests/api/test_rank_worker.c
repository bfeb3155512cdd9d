/* test_rank_worker.c: the TensorBoard handler's default worker name under a
 * launcher (src/api/handlers.c): with a rank variable set it is
 * "<host>_rank<R>_<pid>", R zero-padded to the width of the largest rank, so
 * that the plugin's worker pattern ^(.*?)(\.\d+)?\.pt\.trace\.json gives the
 * worker and the span, its sorted worker list is in rank order, and its
 * Distributed view splits node and process at the last "_<digits>"; the file
 * carries the same rank in distributedInfo. Without one it stays torch's
 * "<host>_<pid>". Runs one profiled step per case in a mkdtemp directory. */
#include "check.h"

#include <stepprof/stepprof.h>

#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sanitized host name, escaped for a regex. */
static void host_pattern(char *out, size_t size)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    size_t j = 0;
    for (const char *c = host; *c && j + 3 < size; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '-' || *c == '_' || *c == '.';
        if (*c == '.') out[j++] = '\\';
        out[j++] = ok ? *c : '_';
    }
    out[j] = '\0';
}

static int matches(const char *pattern, const char *text)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) return 0;
    int ok = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    if (!ok) fprintf(stderr, "\"%s\" does not match %s\n", text, pattern);
    return ok;
}

static void clear_rank_env(void)
{
    const char *vars[] = {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                          "PMI_RANK", "PMI_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

/* Profiles one step under the default TensorBoard handler in a fresh
 * directory; returns the one file's name (free it) and its text in *text. */
static char *one_trace(char **text)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/sp_rank_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_handler_tensorboard(&o.on_trace_ready, dir, NULL, false));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return NULL;
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_OPERATOR, "op");
    sp_range_end();
    CHECK_OK(sp_profiler_step(p, -1));
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    char *name = NULL;
    *text = NULL;
    DIR *d = opendir(dir);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        count++;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (f && !*text) {
            *text = calloc(1, 1 << 20);
            if (*text) (void)!fread(*text, 1, (1 << 20) - 1, f);
            name = strdup(e->d_name);
        }
        if (f) fclose(f);
        remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    CHECK_EQ(1, count);
    return name;
}

/* Runs a case: env is "NAME=VALUE ..." (after clearing the rank variables);
 * worker is the expected worker regex after "^<host>_", with %d for the pid. */
static void check_case(const char *env, const char *worker, long rank, long world)
{
    clear_rank_env();
    char copy[256];
    snprintf(copy, sizeof copy, "%s", env);
    char *save = NULL;
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        setenv(kv, eq + 1, 1);
    }
    char host[600], tail[64], pattern[1024];
    host_pattern(host, sizeof host);
    snprintf(tail, sizeof tail, worker, (int)getpid());
    snprintf(pattern, sizeof pattern, "^%s_%s\\.[0-9]{19}\\.pt\\.trace\\.json$", host, tail);
    char *text = NULL, *name = one_trace(&text);
    if (name) CHECK(matches(pattern, name));
    char line[160];
    /* No backend in a single process; without GPUs a distributed run's is gloo. */
    snprintf(line, sizeof line,
             "\"distributedInfo\":{%s\"rank\": %ld, \"world_size\": %ld, \"local_rank\": ",
             world > 1 ? "\"backend\": \"gloo\", " : "", rank, world);
    if (text && !strstr(text, line)) CHECK_FAIL_("%s: no %s in the trace", env, line);
    free(name);
    free(text);
    clear_rank_env();
}

static void test_rank_worker_default_names(void)
{
    check_case("", "%d", 0, 1);
    check_case("RANK=3 WORLD_SIZE=4", "rank3_%d", 3, 4);
    check_case("RANK=3 WORLD_SIZE=12", "rank03_%d", 3, 12);
    check_case("RANK=0 WORLD_SIZE=1", "rank0_%d", 0, 1);
    check_case("OMPI_COMM_WORLD_RANK=10 OMPI_COMM_WORLD_SIZE=16", "rank10_%d", 10, 16);
    check_case("PMI_RANK=7 PMI_SIZE=128", "rank007_%d", 7, 128);
    check_case("LOCAL_RANK=1", "rank1_%d", 1, 2);
}

/* A worker name given by the caller is kept under a launcher too. */
static void test_rank_worker_explicit_name_is_kept(void)
{
    clear_rank_env();
    setenv("RANK", "2", 1);
    setenv("WORLD_SIZE", "4", 1);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/sp_rank_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_handler_tensorboard(&o.on_trace_ready, dir, "trainer", false));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (p) {
        CHECK_OK(sp_profiler_start(p));
        CHECK_OK(sp_profiler_step(p, -1));
        CHECK_OK(sp_profiler_stop(p));
        const char *path = sp_profiler_trace_path(p);
        CHECK(path && matches("/trainer\\.[0-9]{19}\\.pt\\.trace\\.json$", path));
        if (path) remove(path);
        sp_profiler_destroy(p);
    }
    rmdir(dir);
    clear_rank_env();
}

int main(void)
{
    RUN_TEST(test_rank_worker_default_names);
    RUN_TEST(test_rank_worker_explicit_name_is_kept);
    return TEST_SUMMARY();
}
