/* test_nvtx.c: NVTX capture end to end. nvtx_prog, which uses NVTX and is
 * not linked with stepprof, runs under `stepprof run --steps 2:4`; the
 * trace it leaves must hold exactly what it pushed in steps 2 and 3: its
 * "step" ranges as steps, the other ranges nested as pushed (a domain's
 * with its registered name), marks as instants, and start/end ranges ended
 * on another thread. Skipped (77) where NVTX's headers were not found. */
#include "check.h"
#include "child_files.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SP_NVTX_PROG
static char dir[] = "/tmp/stepprof-nvtx-XXXXXX";
static char err_path[300], out_path[300];

static int run_cli(const char *nvtx_path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (chdir(dir) != 0 || err < 0 || out < 0 || dup2(err, 2) < 0 || dup2(out, 1) < 0)
            _exit(120);
        if (nvtx_path)
            setenv("NVTX_INJECTION64_PATH", nvtx_path, 1);
        else
            unsetenv("NVTX_INJECTION64_PATH");
        execl(SP_CLI, SP_CLI, "run", "--steps", "2:4", "--out", "o", "--", SP_NVTX_PROG,
              (char *)NULL);
        _exit(121);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

static int find_trace(char *path, size_t size)
{
    char sub[400];
    snprintf(sub, sizeof sub, "%s/o", dir);
    return find_file(sub, ".paddle_trace.json", path, size);
}

typedef struct counts {
    int steps, step2, step3, forward, inner_in_forward, backward, tick, async, named_step, layer2, layer3,
        loss, other_layer;
} counts;

static counts count_trace(const char *path)
{
    counts c = {0};
    sp_result *r = NULL;
    CHECK_EQ(SP_OK, sp_result_load(path, NULL, &r));
    sp_event_info e, parent;
    for (size_t t = 0; r && t < sp_result_thread_count(r); t++) {
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) {
            if (e.type == SP_EVENT_PROFILE_STEP) {
                c.steps++;
                const char *hash = strchr(e.name, '#');
                int n = hash ? atoi(hash + 1) : -1;
                c.step2 += n == 2;
                c.step3 += n == 3;
                continue;
            }
            c.forward += strcmp(e.name, "forward") == 0;
            c.backward += strcmp(e.name, "backward") == 0;
            c.async += strcmp(e.name, "async") == 0;
            c.named_step += strcmp(e.name, "step") == 0;
            c.layer2 += strcmp(e.name, "layer2") == 0;
            c.layer3 += strcmp(e.name, "layer3") == 0;
            c.loss += strcmp(e.name, "loss") == 0;
            c.other_layer += strncmp(e.name, "layer", 5) == 0 && strcmp(e.name, "layer2") != 0 &&
                             strcmp(e.name, "layer3") != 0;
            c.tick += strcmp(e.name, "tick") == 0 && (e.flags & SP_EVENT_FLAG_INSTANT);
            if (strcmp(e.name, "inner") == 0 && e.parent >= 0 &&
                sp_result_event(r, t, (size_t)e.parent, &parent) == SP_OK &&
                strcmp(parent.name, "forward") == 0)
                c.inner_in_forward++;
        }
    }
    sp_result_release(r);
    return c;
}

static void test_nvtx_ranges_and_steps_are_what_was_pushed(void)
{
    CHECK_EQ(0, run_cli(NULL));
    CHECK(strcmp(slurp(out_path), "extra pop: -1\n") == 0);
    const char *err = slurp(err_path);
    /* start, the unknown range id at exit, the files */
    CHECK_EQ(3, count_lines(err));
    CHECK(strstr(err, "stepprof: profiling steps [2, 4) of rank 0 into o: ") == err);
    CHECK(strstr(err, "1 nvtxRangeEnd call with an id that no nvtxRangeStart returned was "
                      "ignored") != NULL);
    CHECK(strstr(err, "stepprof: wrote o/host_") != NULL);
    char trace[700];
    CHECK_EQ(1, find_trace(trace, sizeof trace));
    counts c = count_trace(trace);
    CHECK_EQ(2, c.steps);
    CHECK_EQ(1, c.step2);
    CHECK_EQ(1, c.step3);
    CHECK_EQ(2, c.forward);
    CHECK_EQ(2, c.inner_in_forward);
    CHECK_EQ(2, c.backward);
    CHECK_EQ(2, c.tick);
    CHECK_EQ(2, c.async);
    CHECK_EQ(0, c.named_step);
    /* A reused buffer: the names are what it held at each push. */
    CHECK_EQ(1, c.layer2);
    CHECK_EQ(1, c.layer3);
    CHECK_EQ(2, c.loss);
    CHECK_EQ(0, c.other_layer);
}

/* Another tool already named in NVTX_INJECTION64_PATH is kept, and the
 * start line says so. */
static void test_nvtx_existing_injection_is_kept(void)
{
    CHECK_EQ(0, run_cli("/nonexistent/libothertool.so"));
    const char *err = slurp(err_path);
    CHECK(strstr(err, "(NVTX_INJECTION64_PATH is already /nonexistent/libothertool.so: NVTX "
                      "ranges go to that tool, not stepprof)") != NULL);
    CHECK(strstr(err, "stepprof: no trace written") != NULL);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    RUN_TEST(test_nvtx_ranges_and_steps_are_what_was_pushed);
    RUN_TEST(test_nvtx_existing_injection_is_kept);
    int failed = TEST_SUMMARY();
    if (failed == 0) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) return 1;
    }
    return failed;
}
#else
int main(void)
{
    puts("skipped: stepprof was built without NVTX's headers");
    return 77;
}
#endif
