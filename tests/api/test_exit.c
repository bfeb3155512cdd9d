/* test_exit.c: a program that never calls sp_profiler_stop (issue 17, "no
 * silent loss"). Each case forks a child that records with the default
 * chrome-tracing handler into a fresh directory and then returns from its
 * "main" through exit(0) while a span is being recorded, its stderr sent to
 * a file. The parent checks what the exit hook (src/api/profiler.c, at_exit)
 * left: the span's trace file, complete and loadable, no temporary file, and
 * exactly one line on stderr naming the file. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/stepprof-exit-XXXXXX";
static char trace_dir[300], err_path[300];

/* Reachable at exit, for LeakSanitizer (the exit hook stops it, never frees it). */
static sp_profiler *child_profiler;

static sp_state from_string(int64_t step, void *user)
{
    const char *s = user;
    if (step >= (int64_t)strlen(s)) return SP_STATE_RECORD;
    return s[step] == 'A' ? SP_STATE_RECORD_AND_RETURN : SP_STATE_RECORD;
}

/* The child: records `steps` steps under `schedule` (NULL: the default),
 * leaves a range open, and exits without stop. */
static void child(const char *schedule, int steps)
{
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(98);
    sp_options o;
    sp_options_init(&o);
    if (schedule && sp_scheduler_custom(&o.scheduler, from_string, (void *)schedule) != SP_OK)
        _exit(97);
    if (sp_handler_chrome_tracing(&o.on_trace_ready, trace_dir, "worker") != SP_OK) _exit(96);
    if (sp_profiler_create(&o, &child_profiler) != SP_OK) _exit(95);
    if (sp_profiler_start(child_profiler) != SP_OK) _exit(94);
    for (int i = 0; i < steps; i++) {
        sp_range_begin(SP_EVENT_FORWARD, "work");
        sp_range_end();
        sp_profiler_step(child_profiler, 1);
    }
    sp_range_begin(SP_EVENT_USER_DEFINED, "never closed");
    exit(0); /* as a return from main */
}

static int run_child(const char *schedule, int steps)
{
    snprintf(trace_dir, sizeof trace_dir, "%s/t%d", dir, steps);
    snprintf(err_path, sizeof err_path, "%s/stderr%d.txt", dir, steps);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(280);
        child(schedule, steps);
        _exit(99);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The file names in trace_dir, sorted, joined by '\n'; counts temporaries. */
static int list_traces(char names[][256], int max, int *temporaries)
{
    *temporaries = 0;
    DIR *d = opendir(trace_dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (strstr(e->d_name, ".tmp"))
            (*temporaries)++;
        else if (n < max)
            snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

/* Loads a trace and counts the events named name. */
static int count_named(const char *file, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", trace_dir, file);
    sp_result *r = NULL;
    if (sp_result_load(path, NULL, &r) != SP_OK) return -1;
    int n = 0;
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            n += strcmp(e.name, name) == 0;
    sp_result_release(r);
    return n;
}

/* The default schedule: one span from start, never stopped. At exit it is
 * collected and written; one line names the file. */
static void test_exit_without_stop_writes_the_trace(void)
{
    CHECK_EQ(0, run_child(NULL, 3));
    char names[4][256];
    int temporaries = 0;
    CHECK_EQ(1, list_traces(names, 4, &temporaries));
    CHECK_EQ(0, temporaries);
    CHECK(strstr(names[0], "worker_time_") == names[0]);
    CHECK_EQ(3, count_named(names[0], "work"));
    CHECK_EQ(1, count_named(names[0], "never closed"));
    CHECK_EQ(1, count_named(names[0], "ProfileStep#3"));
    const char *err = slurp(err_path);
    CHECK(err != NULL);
    CHECK_EQ(1, count_lines(err));
    CHECK(err && strstr(err, "stepprof: warning: at exit: the profiler was still recording "
                             "(sp_profiler_stop was never called); it was stopped and its trace "
                             "written to ") == err);
    CHECK(err && strstr(err, trace_dir) && strstr(err, names[0]));
}

/* A span returned at step 1 is still being written by the writer thread
 * when the program exits, and a second span is being recorded: both files
 * are finished. */
static void test_exit_finishes_pending_files(void)
{
    CHECK_EQ(0, run_child("A", 2));
    char names[4][256];
    int temporaries = 0;
    CHECK_EQ(2, list_traces(names, 4, &temporaries));
    CHECK_EQ(0, temporaries);
    /* Both spans load; the two hold the 2 "work" ranges and ProfileStep#0..2. */
    int work = 0, steps = 0;
    for (int i = 0; i < 2; i++) {
        int w = count_named(names[i], "work");
        CHECK(w >= 0);
        work += w;
        steps += count_named(names[i], "ProfileStep#0") + count_named(names[i], "ProfileStep#1") +
                 count_named(names[i], "ProfileStep#2");
    }
    CHECK_EQ(2, work);
    CHECK_EQ(3, steps);
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(err && strstr(err, "at exit: the profiler was still recording"));
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN_TEST(test_exit_without_stop_writes_the_trace);
    RUN_TEST(test_exit_finishes_pending_files);
    remove_tree(dir);
    return TEST_SUMMARY();
}
