/* test_env.c: zero-code profiling from the environment, end to end. Each
 * case runs a real program (the bundled quickstart example, or env_prog,
 * which makes no profiler) in a fresh directory with STEPPROF_* variables,
 * then loads the trace it left and checks its steps and ranges, and counts
 * the library's lines on stderr. Nothing depends on timing: the SIGTERM case
 * waits for the program to say it is ready before killing it. */
#include "check.h"
#include "child_files.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[] = "/tmp/stepprof-env-XXXXXX";
static char cwd[400], out_path[500], err_path[500];
static int case_no;

/* A fresh working directory for the next run. */
static void fresh_dir(void)
{
    snprintf(cwd, sizeof cwd, "%s/case%d", base, ++case_no);
    mkdir(cwd, 0755);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", cwd);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", cwd);
}

/* The child's side of run(): cwd, the variables, stdout and stderr files. */
static void exec_child(const char *const *env, char *const *argv, int out_fd)
{
    if (chdir(cwd) != 0) _exit(120);
    /* A shell's background job inherits SIGINT ignored; these runs need it
     * default, as a program started from a terminal has it. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    for (const char *const *v = env; v && *v; v++) putenv((char *)*v);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0) out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || out_fd < 0 || dup2(err, 2) < 0 || dup2(out_fd, 1) < 0) _exit(121);
    execv(argv[0], argv);
    _exit(122);
}

/* Runs argv in a fresh directory with env added; returns its exit status,
 * or 128 + the signal that ended it. */
static int run(const char *const *env, char *const *argv)
{
    fresh_dir();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) exec_child(env, argv, -1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* What a trace holds: its steps (ProfileStep ranges, by number), and its
 * ranges named name. */
typedef struct trace_facts {
    int loaded;
    int steps, first_step, last_step;
    int named;
} trace_facts;

static trace_facts read_trace(const char *path, const char *name)
{
    trace_facts f = {0, 0, 1 << 30, -1, 0};
    sp_result *r = NULL;
    if (sp_result_load(path, NULL, &r) != SP_OK) return f;
    f.loaded = 1;
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) {
            if (strcmp(e.name, name) == 0) f.named++;
            if (e.type != SP_EVENT_PROFILE_STEP) continue;
            const char *hash = strchr(e.name, '#');
            int n = hash ? atoi(hash + 1) : -1;
            f.steps++;
            if (n < f.first_step) f.first_step = n;
            if (n > f.last_step) f.last_step = n;
        }
    }
    sp_result_release(r);
    return f;
}

static char trace[1000];

/* The trace under <cwd>/<dir>: exactly one, and its facts. */
static trace_facts the_trace(const char *dir, const char *ext, const char *name)
{
    char full[600];
    snprintf(full, sizeof full, "%s/%s", cwd, dir);
    trace_facts none = {0, 0, 0, 0, 0};
    int n = find_file(full, ext, trace, sizeof trace);
    CHECK_EQ(1, n);
    return n == 1 ? read_trace(trace, name) : none;
}

#ifdef SP_QUICKSTART
/* The bundled C example, unchanged, run with STEPPROF_STEPS=3:5: its own
 * profiler takes the environment's settings and writes steps 3 and 4 into
 * ./profiler_log/, with the summary tables beside the trace. */
static void test_env_quickstart_records_steps_3_and_4(void)
{
    const char *const env[] = {"STEPPROF_STEPS=3:5", NULL};
    char *const argv[] = {SP_QUICKSTART, NULL};
    CHECK_EQ(0, run(env, argv));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "forward");
    CHECK_EQ(1, f.loaded);
    CHECK_EQ(2, f.steps);
    CHECK_EQ(3, f.first_step);
    CHECK_EQ(4, f.last_step);
    CHECK_EQ(2, f.named);
    char full[600], txt[1000];
    snprintf(full, sizeof full, "%s/profiler_log", cwd);
    CHECK_EQ(1, find_file(full, ".summary.txt", txt, sizeof txt));
    CHECK(strstr(slurp(txt), "Overview Summary") != NULL);
    /* Its own directory was not used. */
    snprintf(full, sizeof full, "%s/log", cwd);
    CHECK_EQ(0, find_file(full, "trace", txt, sizeof txt));
    const char *err = slurp(err_path);
    CHECK_EQ(3, count_lines(err)); /* profiling starts, the program's profiler takes over, trace */
    CHECK(strstr(err, "the program's own profiler records steps [3, 5)") != NULL);
    CHECK(strstr(err, "steps [3, 5) recorded; trace: ./profiler_log/") != NULL);
}

/* A malformed value: one line, and the program runs as it would without
 * the environment (the quickstart then records its own steps into ./log). */
static void test_env_bad_steps_runs_unprofiled(void)
{
    const char *const env[] = {"STEPPROF_STEPS=3-5", NULL};
    char *const argv[] = {SP_QUICKSTART, NULL};
    CHECK_EQ(0, run(env, argv));
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "stepprof: error: STEPPROF_STEPS='3-5' is not START:END") == err);
    CHECK(strstr(err, "the program runs unprofiled") != NULL);
    char full[600];
    snprintf(full, sizeof full, "%s/profiler_log", cwd);
    CHECK(access(full, F_OK) != 0);
    trace_facts f = the_trace("log", ".pt.trace.json", "forward");
    CHECK_EQ(10, f.steps);
    CHECK_EQ(10, f.first_step);
}
#endif

/* A program with no profiler of its own: the environment's records steps
 * [2, 4) of its sp_step calls, in the format asked for. */
static void test_env_program_without_profiler(void)
{
    const char *const env[] = {"STEPPROF_STEPS=2:4", "STEPPROF_OUT=traces",
                               "STEPPROF_FORMAT=pb", NULL};
    char *const argv[] = {SP_ENV_PROG, "6", NULL};
    CHECK_EQ(0, run(env, argv));
    trace_facts f = the_trace("traces", ".paddle_trace.pb", "inner");
    CHECK_EQ(1, f.loaded);
    CHECK_EQ(2, f.steps);
    CHECK_EQ(2, f.first_step);
    CHECK_EQ(3, f.last_step);
    CHECK_EQ(2, f.named);
    const char *err = slurp(err_path);
    CHECK_EQ(2, count_lines(err));
    CHECK(strstr(err, "stepprof: info: profiling steps [2, 4) into traces") == err);
}

/* The program ends (returns from main) while steps [2, 100) record: the
 * exit hook writes what was recorded, with one line saying so. */
static void test_env_exit_while_recording(void)
{
    const char *const env[] = {"STEPPROF_STEPS=2:100", "STEPPROF_QUIET=1", NULL};
    char *const argv[] = {SP_ENV_PROG, "5", NULL};
    CHECK_EQ(0, run(env, argv));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "inner");
    CHECK_EQ(1, f.loaded);
    CHECK_EQ(2, f.first_step);
    CHECK_EQ(5, f.last_step); /* step 5 was open at exit */
    CHECK_EQ(3, f.named);
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "at exit: the profiler was still recording") != NULL);
    CHECK(strstr(err, trace + strlen(cwd) + 1) != NULL);
}

/* Runs env_prog in the given mode until it has made 4 steps, sends sig,
 * and returns how it ended (128 + a signal, or an exit status). */
static int run_and_signal(const char *mode, int sig)
{
    const char *const env[] = {"STEPPROF_STEPS=2:1000000000", "STEPPROF_QUIET=1", NULL};
    char *const argv[] = {SP_ENV_PROG, "4", (char *)mode, NULL};
    fresh_dir();
    int fds[2];
    CHECK_EQ(0, pipe(fds));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        exec_child(env, argv, fds[1]);
    }
    close(fds[1]);
    char ready[16] = "";
    FILE *from = fdopen(fds[0], "r");
    CHECK(from && fgets(ready, sizeof ready, from) != NULL);
    CHECK(strcmp(ready, "ready\n") == 0);
    kill(pid, sig);
    int status = 0;
    CHECK_EQ(pid, waitpid(pid, &status, 0));
    if (from) fclose(from);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* SIGTERM while steps record: the span is written, one line says so, and
 * the program still dies of SIGTERM. */
static void test_env_sigterm_while_recording(void)
{
    CHECK_EQ(128 + SIGTERM, run_and_signal("wait", SIGTERM));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "inner");
    CHECK_EQ(1, f.loaded);
    CHECK_EQ(2, f.first_step);
    CHECK(f.last_step >= 4);
    CHECK(f.named >= 2);
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "at SIGTERM: the profiler was still recording") != NULL);
}

/* The same for SIGINT (Ctrl-C). */
static void test_env_sigint_while_recording(void)
{
    CHECK_EQ(128 + SIGINT, run_and_signal("wait", SIGINT));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "inner");
    CHECK_EQ(1, f.loaded);
    CHECK_EQ(2, f.first_step);
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "at SIGINT: the profiler was still recording") != NULL);
}

/* A program's own SIGTERM handler, installed after the library's, is the
 * one that runs: its exit status, no trace, no line. */
static void test_env_program_handler_wins(void)
{
    CHECK_EQ(42, run_and_signal("handler", SIGTERM));
    char full[600];
    snprintf(full, sizeof full, "%s/profiler_log", cwd);
    CHECK_EQ(0, find_file(full, ".paddle_trace.json", trace, sizeof trace));
    CHECK_EQ(0, count_lines(slurp(err_path)));
}

/* The program makes its own profiler after the environment's one counted a
 * step: that one hands over quietly (it had recorded nothing), and the
 * program's records [2, 4) of its own steps. */
static void test_env_program_profiler_takes_over(void)
{
    const char *const env[] = {"STEPPROF_STEPS=2:4", NULL};
    char *const argv[] = {SP_ENV_PROG, "1", "own", NULL};
    CHECK_EQ(0, run(env, argv));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "inner");
    CHECK_EQ(2, f.steps);
    CHECK_EQ(2, f.first_step);
    CHECK_EQ(2, f.named);
    const char *err = slurp(err_path);
    CHECK_EQ(3, count_lines(err));
    CHECK(strstr(err, "the program's own profiler records steps [2, 4)") != NULL);
}

/* Other ranks than those asked for run unprofiled, silently. */
static void test_env_other_rank_is_not_profiled(void)
{
    const char *const env[] = {"STEPPROF_STEPS=0:2", "RANK=1", NULL};
    char *const argv[] = {SP_ENV_PROG, "3", NULL};
    CHECK_EQ(0, run(env, argv));
    char full[600];
    snprintf(full, sizeof full, "%s/profiler_log", cwd);
    CHECK(access(full, F_OK) != 0);
    CHECK_EQ(0, count_lines(slurp(err_path)));
    const char *const all[] = {"STEPPROF_STEPS=0:2", "RANK=1", "STEPPROF_RANKS=all", NULL};
    CHECK_EQ(0, run(all, argv));
    trace_facts f = the_trace("profiler_log", ".paddle_trace.json", "inner");
    CHECK_EQ(2, f.steps);
    CHECK(strstr(trace, "_rank1_time_") != NULL);
}

/* STEPPROF_STEPS=0:2 asks for step 0 outright: no warning that recording
 * from the start is noisy, from the environment's profiler nor from the
 * program's that takes its place. */
static void test_env_steps_from_0_do_not_warn(void)
{
    const char *const env[] = {"STEPPROF_STEPS=0:2", "STEPPROF_QUIET=1", NULL};
    char *const argv[] = {SP_ENV_PROG, "3", NULL};
    CHECK_EQ(0, run(env, argv));
    CHECK_EQ(2, the_trace("profiler_log", ".paddle_trace.json", "inner").steps);
    CHECK_EQ(0, count_lines(slurp(err_path)));
    char *const own[] = {SP_ENV_PROG, "0", "own", NULL};
    CHECK_EQ(0, run(env, own));
    CHECK_EQ(2, the_trace("profiler_log", ".paddle_trace.json", "inner").steps);
    CHECK_EQ(0, count_lines(slurp(err_path)));
}

/* A file given as the directory, and a directory that cannot be created:
 * one line each, no profiling, exit status unchanged. */
static void test_env_bad_out_dir_runs_unprofiled(void)
{
    char *const argv[] = {SP_ENV_PROG, "3", NULL};
    const char *const prefix[] = {"STEPPROF_STEPS=0:2", "STEPPROF_OUT=./log/run1.json", NULL};
    CHECK_EQ(0, run(prefix, argv));
    const char *err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "STEPPROF_OUT='./log/run1.json' names a file") != NULL);
    char full[600];
    snprintf(full, sizeof full, "%s/log", cwd);
    CHECK(access(full, F_OK) != 0);
    const char *const blocked[] = {"STEPPROF_STEPS=0:2", "STEPPROF_OUT=stdout.txt/sub", NULL};
    CHECK_EQ(0, run(blocked, argv));
    err = slurp(err_path);
    CHECK_EQ(1, count_lines(err));
    CHECK(strstr(err, "cannot create the output directory") != NULL);
    CHECK(strstr(err, "the program runs unprofiled") != NULL);
}

int main(void)
{
    if (!mkdtemp(base)) return 1;
#ifdef SP_QUICKSTART
    RUN_TEST(test_env_quickstart_records_steps_3_and_4);
    RUN_TEST(test_env_bad_steps_runs_unprofiled);
#endif
    RUN_TEST(test_env_program_without_profiler);
    RUN_TEST(test_env_exit_while_recording);
    RUN_TEST(test_env_sigterm_while_recording);
    RUN_TEST(test_env_sigint_while_recording);
    RUN_TEST(test_env_program_handler_wins);
    RUN_TEST(test_env_program_profiler_takes_over);
    RUN_TEST(test_env_other_rank_is_not_profiled);
    RUN_TEST(test_env_steps_from_0_do_not_warn);
    RUN_TEST(test_env_bad_out_dir_runs_unprofiled);
    int failed = TEST_SUMMARY();
    if (failed == 0) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0) return 1;
    }
    return failed;
}
