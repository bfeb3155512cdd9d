/* test_handlers.c: checks the ready-made on_trace_ready handlers through the
 * public API: how many files a schedule produces (computed independently from
 * semantics.md §2.1 and §3.3), the file names the TensorBoard plugin and
 * paddle expect (trace-format.md §9), directory creation, worker-name
 * sanitizing, the warning for a directory that cannot be created, and custom
 * and no-op handlers. Each test works in its own mkdtemp directory and
 * removes it. */
#include "check.h"

#include <stepprof/stepprof.h>

#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FILES 16
#define STEPS 8

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static int make_tmpdir(char dir[64])
{
    snprintf(dir, 64, "/tmp/sp_handlers_XXXXXX");
    return mkdtemp(dir) != NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of dir (without . and ..); free with free_names. */
static int list_dir(const char *dir, char *names[MAX_FILES])
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n < MAX_FILES) names[n] = strdup(e->d_name);
        n++;
    }
    closedir(d);
    if (n > MAX_FILES) n = MAX_FILES;
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    return n;
}

static void free_names(char *names[MAX_FILES], int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
}

static int matches(const char *pattern, const char *text)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "bad regex %s\n", pattern);
        return 0;
    }
    int ok = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    if (!ok) fprintf(stderr, "\"%s\" does not match %s\n", text, pattern);
    return ok;
}

/* Runs tracecheck.py on a file; returns its exit status (0 if valid). Its
 * output is shown only on failure. */
static int tracecheck(const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "out=$('%s' -B '%s/tests/trace/tracecheck.py' '%s' --expect-name op 2>&1) || "
             "{ printf '%%s\\n' \"$out\" >&2; exit 1; }",
             SP_PYTHON, SP_SOURCE_DIR, file);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* make_scheduler of semantics.md §2.1, written out again so that the test
 * does not trust the library's own arithmetic. */
static sp_state cycle_state(int64_t closed, int64_t ready, int64_t rec, int64_t repeat,
                            int64_t skip_first, int64_t step)
{
    if (step < skip_first) return SP_STATE_CLOSED;
    int64_t s = step - skip_first, period = closed + ready + rec, m = s % period;
    if (repeat > 0 && s / period >= repeat) return SP_STATE_CLOSED;
    if (m < closed) return SP_STATE_CLOSED;
    if (m < closed + ready) return SP_STATE_READY;
    return m < period - 1 ? SP_STATE_RECORD : SP_STATE_RECORD_AND_RETURN;
}

/* on_trace_ready fires in each step() leaving RECORD_AND_RETURN and in stop()
 * while RECORD or RECORD_AND_RETURN (semantics.md §3.3). Steps are numbered
 * 0..steps-1 and stop() runs at step `steps`. */
static int expected_calls(int64_t closed, int64_t ready, int64_t rec, int64_t repeat,
                          int64_t skip_first, int steps)
{
    int n = 0;
    for (int s = 0; s < steps; s++)
        n += cycle_state(closed, ready, rec, repeat, skip_first, s) == SP_STATE_RECORD_AND_RETURN;
    sp_state last = cycle_state(closed, ready, rec, repeat, skip_first, steps);
    return n + (last == SP_STATE_RECORD || last == SP_STATE_RECORD_AND_RETURN);
}

typedef struct log_record {
    pthread_mutex_t lock;
    int messages, cannot_create;
} log_record;

static void record_log(sp_log_level level, const char *message, void *user)
{
    log_record *l = user;
    (void)level;
    pthread_mutex_lock(&l->lock);
    l->messages++;
    if (strstr(message, "Can not create directory")) l->cannot_create++;
    pthread_mutex_unlock(&l->lock);
}

/* Runs `steps` steps of one Operator range each under handler h, with the
 * (0, 1, 2, 2, 0) scheduler if cycle is set, else the default one. Returns
 * the stopped profiler (destroy it) and stop()'s status in *stop_status. */
static sp_profiler *run(sp_trace_handler h, int cycle, int steps, log_record *log,
                        sp_status *stop_status)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = h;
    if (cycle) CHECK_OK(sp_scheduler_make(&o.scheduler, 0, 1, 2, 2, 0));
    if (log) {
        o.log = record_log;
        o.log_user = log;
    }
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return NULL;
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < steps; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
        CHECK_OK(sp_profiler_step(p, -1));
    }
    sp_status s = sp_profiler_stop(p);
    if (stop_status)
        *stop_status = s;
    else
        CHECK_OK(s);
    return p;
}

/* Runs the cycle schedule under h, then checks that dir holds exactly the
 * expected number of files, each matching pattern and passing tracecheck,
 * and that the trace path is the newest of them. */
static void check_files(sp_trace_handler h, const char *dir, const char *pattern)
{
    int want = expected_calls(0, 1, 2, 2, 0, STEPS);
    CHECK_EQ(2, want);
    sp_profiler *p = run(h, 1, STEPS, NULL, NULL);
    if (!p) return;
    char *names[MAX_FILES], path[512];
    int n = list_dir(dir, names);
    CHECK_EQ(want, n);
    for (int i = 0; i < n; i++) {
        CHECK(matches(pattern, names[i]));
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        CHECK_EQ(0, tracecheck(path));
    }
    const char *newest = sp_profiler_trace_path(p);
    CHECK(newest != NULL);
    if (newest && n > 0) {
        const char *base = strrchr(newest, '/');
        CHECK_STR_EQ(names[n - 1], base ? base + 1 : newest);
        CHECK(access(newest, F_OK) == 0);
    }
    free_names(names, n);
    sp_profiler_destroy(p);
}

static void test_handlers_tensorboard_names_one_file_per_span(void)
{
    char root[64], dir[128];
    CHECK(make_tmpdir(root));
    for (int gz = 0; gz <= 1; gz++) {
        sp_trace_handler h;
        snprintf(dir, sizeof dir, "%s/tb%d", root, gz);
        CHECK_OK(sp_handler_tensorboard(&h, dir, "worker0", gz));
        CHECK(access(dir, F_OK) != 0); /* created on the first span, not before */
        check_files(h, dir, gz ? "^worker0\\.[0-9]{19}\\.pt\\.trace\\.json\\.gz$"
                               : "^worker0\\.[0-9]{19}\\.pt\\.trace\\.json$");
    }
    remove_tree(root);
}

/* The default paddle worker: "host_<hostname>pid_<pid>", sanitized. */
static void default_paddle_worker_pattern(char *out, size_t size)
{
    char host[256] = "localhost", escaped[600];
    gethostname(host, sizeof host - 1);
    size_t j = 0;
    for (const char *c = host; *c && j + 3 < sizeof escaped; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '-' || *c == '_' || *c == '.';
        if (*c == '.') escaped[j++] = '\\';
        escaped[j++] = ok ? *c : '_';
    }
    escaped[j] = '\0';
    snprintf(out, size,
             "^host_%spid_%d_time_[0-9]{4}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{6}"
             "\\.paddle_trace\\.json$",
             escaped, (int)getpid());
}

static void test_handlers_chrome_tracing_names_one_file_per_span(void)
{
    char root[64], dir[128], pattern[1024];
    CHECK(make_tmpdir(root));
    sp_trace_handler h;
    snprintf(dir, sizeof dir, "%s/default", root);
    CHECK_OK(sp_handler_chrome_tracing(&h, dir, NULL));
    default_paddle_worker_pattern(pattern, sizeof pattern);
    check_files(h, dir, pattern);
    snprintf(dir, sizeof dir, "%s/named/", root); /* a trailing '/' is fine */
    CHECK_OK(sp_handler_chrome_tracing(&h, dir, "w"));
    check_files(h, dir, "^w_time_[0-9]{4}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{6}"
                        "\\.paddle_trace\\.json$");
    remove_tree(root);
}

static void test_handlers_create_nested_directories(void)
{
    char root[64], dir[128], *names[MAX_FILES];
    CHECK(make_tmpdir(root));
    snprintf(dir, sizeof dir, "%s/a/b/c", root);
    sp_trace_handler h;
    CHECK_OK(sp_handler_chrome_tracing(&h, dir, "nested"));
    sp_profiler *p = run(h, 0, 2, NULL, NULL); /* default scheduler: one span at stop */
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    int n = list_dir(dir, names);
    CHECK_EQ(1, n);
    if (n == 1) CHECK(strncmp(names[0], "nested_time_", 12) == 0);
    const char *path = p ? sp_profiler_trace_path(p) : NULL;
    CHECK(path != NULL && access(path, F_OK) == 0);
    free_names(names, n);
    sp_profiler_destroy(p);
    remove_tree(root);
}

static void test_handlers_worker_name_cannot_leave_the_directory(void)
{
    char root[64], dir[128], escape[160], *names[MAX_FILES];
    CHECK(make_tmpdir(root));
    snprintf(dir, sizeof dir, "%s/d/e", root);
    snprintf(escape, sizeof escape, "%s/etc", root); /* where dir/../../etc/x would land */
    for (int tb = 0; tb <= 1; tb++) {
        sp_trace_handler h;
        if (tb)
            CHECK_OK(sp_handler_tensorboard(&h, dir, "../../etc/x", false));
        else
            CHECK_OK(sp_handler_chrome_tracing(&h, dir, "../../etc/x"));
        sp_profiler *p = run(h, 0, 1, NULL, NULL);
        sp_profiler_destroy(p);
    }
    int n = list_dir(dir, names);
    CHECK_EQ(2, n);
    for (int i = 0; i < n; i++) {
        CHECK(strchr(names[i], '/') == NULL);
        CHECK(strncmp(names[i], ".._.._etc_x", 11) == 0);
    }
    CHECK(access(escape, F_OK) != 0);
    free_names(names, n);
    remove_tree(root);
}

static void test_handlers_tensorboard_worker_ending_in_digits_gets_underscore(void)
{
    char root[64], dir[128];
    CHECK(make_tmpdir(root));
    snprintf(dir, sizeof dir, "%s/tb", root);
    sp_trace_handler h;
    CHECK_OK(sp_handler_tensorboard(&h, dir, "rank.0", false));
    /* Two spans: the '_' is appended once, not once per span. */
    check_files(h, dir, "^rank\\.0_\\.[0-9]{19}\\.pt\\.trace\\.json$");
    remove_tree(root);
}

static void test_handlers_uncreatable_directory_fails_stop(void)
{
    char root[64], file[128], dir[160];
    CHECK(make_tmpdir(root));
    snprintf(file, sizeof file, "%s/plain", root);
    snprintf(dir, sizeof dir, "%s/sub", file);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    log_record log = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    sp_trace_handler h;
    CHECK_OK(sp_handler_chrome_tracing(&h, dir, NULL));
    sp_status stop_status = SP_OK;
    sp_profiler *p = run(h, 0, 2, &log, &stop_status);
    CHECK_EQ(SP_EIO, stop_status); /* the header: stop reports a file not written */
    CHECK(p != NULL && sp_profiler_result(p) != NULL);
    CHECK(p != NULL && sp_profiler_trace_path(p) == NULL);
    CHECK(log.cannot_create >= 1);
    struct stat st;
    CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode));
    sp_profiler_destroy(p);
    remove_tree(root);
}

static void test_handlers_none_writes_nothing(void)
{
    char root[64], cwd[4096], *names[MAX_FILES];
    CHECK(make_tmpdir(root));
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_EQ(0, chdir(root)); /* the default handler would write ./profiler_log/ */
    sp_profiler *p = run(sp_handler_none(), 1, STEPS, NULL, NULL);
    CHECK(p != NULL && sp_profiler_result(p) != NULL);
    CHECK(p != NULL && sp_profiler_trace_path(p) == NULL);
    sp_profiler_destroy(p);
    CHECK_EQ(0, chdir(cwd));
    int n = list_dir(root, names);
    CHECK_EQ(0, n);
    free_names(names, n);
    remove_tree(root);
}

static void test_handlers_reject_missing_directory(void)
{
    sp_trace_handler h;
    CHECK_EQ(SP_EINVAL, sp_handler_chrome_tracing(&h, NULL, NULL));
    CHECK(sp_last_error()[0] != '\0');
    CHECK_EQ(SP_EINVAL, sp_handler_chrome_tracing(&h, "", NULL));
    CHECK_EQ(SP_EINVAL, sp_handler_chrome_tracing(&h, "", "w"));
    CHECK_EQ(SP_EINVAL, sp_handler_chrome_tracing(NULL, "/tmp", NULL));
    CHECK_EQ(SP_EINVAL, sp_handler_tensorboard(&h, NULL, "w", false));
    CHECK_EQ(SP_EINVAL, sp_handler_tensorboard(&h, "", NULL, true));
    CHECK_EQ(SP_EINVAL, sp_handler_tensorboard(NULL, "/tmp", NULL, false));
}

typedef struct custom_state {
    int calls, with_result, releases;
    uint32_t first_span, last_span;
} custom_state;

static void custom_ready(sp_profiler *prof, void *user)
{
    custom_state *c = user;
    const sp_result *r = sp_profiler_result(prof);
    c->calls++;
    if (!r) return;
    c->with_result++;
    c->last_span = sp_result_span_index(r);
    if (c->calls == 1) c->first_span = c->last_span;
}

static void custom_release(void *user) { ((custom_state *)user)->releases++; }

static void test_handlers_custom_handler_called_once_per_span(void)
{
    for (int cycle = 0; cycle <= 1; cycle++) {
        custom_state c = {0, 0, 0, 0, 0};
        sp_trace_handler h = {custom_ready, &c, custom_release};
        int want = cycle ? expected_calls(0, 1, 2, 2, 0, STEPS) : 1;
        sp_profiler *p = run(h, cycle, STEPS, NULL, NULL);
        CHECK_EQ(want, c.calls);
        CHECK_EQ(want, c.with_result);
        CHECK_EQ(want - 1, (int)(c.last_span - c.first_span)); /* consecutive span indices */
        CHECK_EQ(0, c.releases);
        sp_profiler_destroy(p);
        CHECK_EQ(1, c.releases);
    }
}

/* Runs one span under a handler with worker name "" in a child process, so
 * that a memory error (reported by ASan) fails this test instead of ending
 * the program. Returns the child's exit status. */
static int run_empty_worker_in_child(const char *dir, int tensorboard)
{
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        sp_trace_handler h;
        sp_status s = tensorboard ? sp_handler_tensorboard(&h, dir, "", false)
                                  : sp_handler_chrome_tracing(&h, dir, "");
        sp_options o;
        sp_options_init(&o);
        o.on_trace_ready = h;
        sp_profiler *p = NULL;
        if (s != SP_OK || sp_profiler_create(&o, &p) != SP_OK) _exit(2);
        sp_profiler_start(p);
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
        s = sp_profiler_stop(p);
        sp_profiler_destroy(p);
        _exit(s == SP_OK ? 0 : 3);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* An empty worker name once overwrote the terminator of its 1-byte copy
 * (found by ASan). Any worker name must give one file per span, inside the
 * directory, named from sanitized characters only. */
static void test_handlers_empty_worker_name_is_sanitized(void)
{
    char root[64], dir[128], *names[MAX_FILES];
    CHECK(make_tmpdir(root));
    snprintf(dir, sizeof dir, "%s/empty", root);
    CHECK_EQ(0, run_empty_worker_in_child(dir, 0));
    CHECK_EQ(0, run_empty_worker_in_child(dir, 1));
    int n = list_dir(dir, names);
    CHECK_EQ(2, n);
    for (int i = 0; i < n; i++)
        CHECK(matches("^[A-Za-z0-9._-]*(_time_[0-9_]{26}\\.paddle_trace|\\.[0-9]{19}\\.pt\\.trace)"
                      "\\.json$", names[i]));
    free_names(names, n);
    remove_tree(root);
}

int main(void)
{
    RUN_TEST(test_handlers_tensorboard_names_one_file_per_span);
    RUN_TEST(test_handlers_chrome_tracing_names_one_file_per_span);
    RUN_TEST(test_handlers_create_nested_directories);
    RUN_TEST(test_handlers_worker_name_cannot_leave_the_directory);
    RUN_TEST(test_handlers_tensorboard_worker_ending_in_digits_gets_underscore);
    RUN_TEST(test_handlers_uncreatable_directory_fails_stop);
    RUN_TEST(test_handlers_none_writes_nothing);
    RUN_TEST(test_handlers_reject_missing_directory);
    RUN_TEST(test_handlers_custom_handler_called_once_per_span);
    RUN_TEST(test_handlers_empty_worker_name_is_sanitized);
    return TEST_SUMMARY();
}
