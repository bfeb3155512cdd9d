/* test_cli_run.c: `stepprof run`, run as a user runs it. Wrong usage exits
 * 2 with a usage message; a command that cannot be run exits 127 or 126
 * with the OS error, as shells do; the command's exit status (or 128 + the
 * signal that ended it) is passed through; and the bundled quickstart run
 * with --steps 3:5 leaves one trace of steps 3 and 4, the tool printing
 * exactly two lines. */
#include "check.h"
#include "child_files.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/stepprof-run-XXXXXX";
static char err_path[300], out_path[300];

/* Runs the CLI with args in dir; returns its exit status (-1 on a signal). */
static int cli(char *const *args)
{
    char *argv[16] = {SP_CLI};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (chdir(dir) != 0 || err < 0 || out < 0 || dup2(err, 2) < 0 || dup2(out, 1) < 0)
            _exit(120);
        execv(argv[0], argv);
        _exit(121);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

static void expect_usage(char *const *args, const char *message)
{
    CHECK_EQ(2, cli(args));
    const char *err = slurp(err_path);
    CHECK(strstr(err, message) != NULL);
    CHECK(strstr(err, "Run 'stepprof run --help' for usage.") != NULL);
}

static void test_run_wrong_usage_exits_2(void)
{
    expect_usage((char *[]){"run", "--bogus", "--", "true", NULL}, "unknown option '--bogus'");
    expect_usage((char *[]){"run", "--steps", "20:10", "--", "true", NULL},
                 "--steps '20:10' is not START:END");
    expect_usage((char *[]){"run", "--steps=x", "true", NULL}, "--steps 'x' is not START:END");
    expect_usage((char *[]){"run", "--steps", NULL}, "--steps needs a value");
    expect_usage((char *[]){"run", NULL}, "no command to run");
    expect_usage((char *[]){"run", "--steps", "1:2", "--", NULL}, "no command to run");
    expect_usage((char *[]){"run", "--ranks", "first", "true", NULL}, "--ranks 'first'");
    expect_usage((char *[]){"run", "--format", "xml", "true", NULL}, "--format 'xml'");
    expect_usage((char *[]){"run", "--targets", "tpu", "true", NULL}, "--targets 'tpu'");
    expect_usage((char *[]){"run", "--summary=1", "true", NULL}, "--summary takes no value");
    /* The seed integration's mistake: a file name where the directory goes. */
    expect_usage((char *[]){"run", "--out", "log/trace.json", "true", NULL},
                 "--out 'log/trace.json' names a file");
    char file[400];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    expect_usage((char *[]){"run", "--out", "plain", "true", NULL},
                 "--out 'plain' is a file, not a directory");
    CHECK_EQ(0, cli((char *[]){"run", "--help", NULL}));
    CHECK(strstr(slurp(out_path), "usage: stepprof run") == slurp(out_path));
}

static void test_run_command_that_cannot_run(void)
{
    CHECK_EQ(127, cli((char *[]){"run", "--", "./no-such-program", NULL}));
    const char *err = slurp(err_path);
    CHECK(strstr(err, "stepprof: ./no-such-program: No such file or directory") != NULL);
    CHECK_EQ(2, count_lines(err));
    char file[400];
    snprintf(file, sizeof file, "%s/not-executable", dir);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    chmod(file, 0644);
    CHECK_EQ(126, cli((char *[]){"run", "--", "./not-executable", NULL}));
    CHECK(strstr(slurp(err_path), "stepprof: ./not-executable: Permission denied") != NULL);
}

static void test_run_passes_the_exit_status_through(void)
{
    CHECK_EQ(0, cli((char *[]){"run", "--", "true", NULL}));
    CHECK_EQ(7, cli((char *[]){"run", "--", "sh", "-c", "exit 7", NULL}));
    CHECK_EQ(128 + 15, cli((char *[]){"run", "--", "sh", "-c", "kill -TERM $$", NULL}));
    /* No trace from a program without stepprof: two lines, the second says so. */
    const char *err = slurp(err_path);
    CHECK_EQ(2, count_lines(err));
    CHECK(strstr(err, "stepprof: no trace written") != NULL);
    /* The options reach the program as the STEPPROF_* variables. */
    CHECK_EQ(0, cli((char *[]){"run", "--steps", "4:6", "--ranks", "all", "--format", "pb",
                               "--out=o", "--targets", "cpu", "sh", "-c",
                               "echo $STEPPROF_STEPS $STEPPROF_RANKS $STEPPROF_FORMAT "
                               "$STEPPROF_OUT $STEPPROF_TARGETS $STEPPROF_QUIET",
                               NULL}));
    CHECK(strcmp(slurp(out_path), "4:6 all pb o cpu 1\n") == 0);
}

#ifdef SP_QUICKSTART
/* The quickstart, unchanged: one trace of steps 3 and 4, exactly two lines
 * of the tool's own, and the quickstart's exit status 0. */
static void test_run_quickstart(void)
{
    CHECK_EQ(0, cli((char *[]){"run", "--steps", "3:5", "--out", "runs", "--", SP_QUICKSTART,
                               NULL}));
    const char *err = slurp(err_path);
    CHECK_EQ(2, count_lines(err));
    CHECK(strstr(err, "stepprof: profiling steps [3, 5) of rank 0 into runs: ") == err);
    CHECK(strstr(err, "\nstepprof: wrote runs/host_") != NULL);
    char runs[400], trace[700] = "";
    snprintf(runs, sizeof runs, "%s/runs", dir);
    DIR *d = opendir(runs);
    int traces = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, ".paddle_trace.json")) continue;
        traces++;
        snprintf(trace, sizeof trace, "%s/%s", runs, e->d_name);
    }
    if (d) closedir(d);
    CHECK_EQ(1, traces);
    sp_result *r = NULL;
    CHECK_EQ(SP_OK, sp_result_load(trace, NULL, &r));
    int steps = 0, forward = 0;
    sp_event_info ev;
    for (size_t t = 0; r && t < sp_result_thread_count(r); t++) {
        for (size_t i = 0; sp_result_event(r, t, i, &ev) == SP_OK; i++) {
            forward += strcmp(ev.name, "forward") == 0;
            if (ev.type == SP_EVENT_PROFILE_STEP) {
                const char *hash = strchr(ev.name, '#');
                int n = hash ? atoi(hash + 1) : -1;
                CHECK(n == 3 || n == 4);
                steps++;
            }
        }
    }
    sp_result_release(r);
    CHECK_EQ(2, steps);
    CHECK_EQ(2, forward);
}
#endif

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    RUN_TEST(test_run_wrong_usage_exits_2);
    RUN_TEST(test_run_command_that_cannot_run);
    RUN_TEST(test_run_passes_the_exit_status_through);
#ifdef SP_QUICKSTART
    RUN_TEST(test_run_quickstart);
#endif
    int failed = TEST_SUMMARY();
    if (failed == 0) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) return 1;
    }
    return failed;
}
