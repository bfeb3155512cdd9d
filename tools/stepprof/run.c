/* run.c: `stepprof run [OPTIONS] [--] CMD ARGS...`, profiling a program with
 * no change to it. The options become the STEPPROF_* variables, which the
 * library linked into CMD reads at load (docs/c-api.md, "Zero-code
 * profiling"); the tool only checks them, runs CMD, waits, and passes its
 * exit status through. It prints one line as CMD starts and one naming the
 * files written at the end, and nothing else: the library's own
 * informational lines are turned off (STEPPROF_QUIET). When the NVTX
 * injection library is there, NVTX_INJECTION64_PATH names it, so that a
 * program using NVTX is captured even when it does not link stepprof. For a
 * Python program, PYTHONPATH starts with a directory holding a sitecustomize
 * (python/inject/) that starts stepprof.profiler in the program's Python,
 * which must have the stepprof package installed; the steps it saw come back
 * through the file STEPPROF_PY_STATUS names, for the end line. */
#define _GNU_SOURCE
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The tool links the library too: without this, STEPPROF_STEPS in its own
 * environment would profile the tool (src/inject/env.c). */
const int sp__env_opt_out = 1;

static const char run_usage[] =
    "usage: stepprof run [OPTIONS] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with profiling switched on through the environment: a C or C++\n"
    "program linked with libstepprof records the ranges it marks, steps counted\n"
    "by sp_step() or by its own profiler, with no code added. A program using\n"
    "NVTX has its ranges captured through NVTX_INJECTION64_PATH (when stepprof\n"
    "was built with NVTX). A Python program (python, torchrun) whose Python has\n"
    "the stepprof package installed is profiled through a sitecustomize on\n"
    "PYTHONPATH (an existing one still runs): a step ends at each paddle or\n"
    "torch optimizer step, or, with --step-fn, only at each return of that\n"
    "function.\n"
    "\n"
    "options:\n"
    "  --steps START:END   record steps [START, END) (default 10:20)\n"
    "  --ranks LIST        0, all, or ranks such as 0,3 (default 0; the rank is\n"
    "                      read from RANK, LOCAL_RANK, PADDLE_TRAINER_ID,\n"
    "                      OMPI_COMM_WORLD_RANK or PMI_RANK)\n"
    "  --out DIR           the directory of the traces (default ./profiler_log/)\n"
    "  --targets LIST      cpu, gpu or cpu,gpu (default: cpu, plus gpu when CMD\n"
    "                      uses CUDA)\n"
    "  --format FORMAT     json (default), json.gz or pb\n"
    "  --summary           also print the summary tables at the end (they are\n"
    "                      always written next to the trace as .summary.txt)\n"
    "  --step-range NAME   with NVTX: a pushed range of this name is a step, not\n"
    "                      a range (default step)\n"
    "  --step-fn MOD:NAME  Python: each return of this function (in module MOD,\n"
    "                      or __main__, the script) ends a step\n"
    "  -h, --help          this text\n"
    "\n"
    "Exit status: CMD's own; 128+N if a signal N ended it; 127 if CMD is not\n"
    "found, 126 if it cannot be run; 2 for wrong usage.\n";

/* START:END with 0 <= START < END, as the library reads STEPPROF_STEPS. */
static int valid_steps(const char *s, long long *first, long long *end)
{
    char *colon, *stop;
    if (!s || *s < '0' || *s > '9') return 0;
    *first = strtoll(s, &colon, 10);
    if (*colon != ':' || colon[1] < '0' || colon[1] > '9') return 0;
    *end = strtoll(colon + 1, &stop, 10);
    return *stop == '\0' && *end > *first && *end < (1ll << 40);
}

/* Comma-separated words, each one of words[] (or, with digits, a number). */
static int valid_list(const char *s, const char *const *words, int digits)
{
    if (!s || !*s) return 0;
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        int ok = 0;
        for (const char *const *w = words; *w && !ok; w++)
            ok = strlen(*w) == n && strncmp(p, *w, n) == 0;
        if (!ok && digits && n > 0 && n < 10) {
            ok = 1;
            for (size_t i = 0; i < n; i++) ok &= p[i] >= '0' && p[i] <= '9';
        }
        if (!ok) return 0;
        if (p[n] == '\0') return 1;
        p += n + 1;
    }
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* A file, or a name that looks like one, where the directory goes. */
static const char *bad_out_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) return "is a file, not a directory";
    static const char *const tails[] = {".json", ".gz", ".pb", ".txt", NULL};
    for (const char *const *t = tails; *t; t++)
        if (ends_with(dir, *t)) return "names a file; --out takes a directory";
    return NULL;
}

/* ---- the files the run wrote: the trace files in DIR not there before ---- */

typedef struct names {
    char **v;
    size_t n;
} names;

static void list_traces(const char *dir, names *out)
{
    out->v = NULL;
    out->n = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, ".paddle_trace.") || strstr(e->d_name, ".tmp")) continue;
        char **v = realloc(out->v, (out->n + 1) * sizeof *v);
        if (!v) break;
        out->v = v;
        out->v[out->n] = strdup(e->d_name);
        if (out->v[out->n]) out->n++;
    }
    closedir(d);
}

static int has_name(const names *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0) return 1;
    return 0;
}

static void free_names(names *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- Python programs ---- */

/* The directory of the sitecustomize: STEPPROF_PYTHON_INJECT_DIR, beside the
 * tool (a build tree), in ../share/stepprof from it (an install), or where it
 * was to be installed. Empty when there is none. */
static void find_py_inject(char *out, size_t size)
{
    out[0] = '\0';
    const char *env = getenv("STEPPROF_PYTHON_INJECT_DIR");
    char file[4300];
    if (env && *env) {
        if (strlen(env) >= size) return;
        snprintf(file, sizeof file, "%s/sitecustomize.py", env);
        if (access(file, R_OK) == 0) snprintf(out, size, "%s", env);
        return;
    }
    char self[3072];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        static const char *const rel[] = {"/python-inject", "/../share/stepprof/python-inject",
                                          NULL};
        for (const char *const *r = rel; *r; r++) {
            snprintf(out, size, "%s%s", self, *r);
            snprintf(file, sizeof file, "%s/sitecustomize.py", out);
            if (access(file, R_OK) == 0) return;
        }
    }
    snprintf(out, size, "%s", SP_PY_INJECT_INSTALLED);
    snprintf(file, sizeof file, "%s/sitecustomize.py", out);
    if (access(file, R_OK) != 0) out[0] = '\0';
}

/* PYTHONPATH=<dir>[:old], and STEPPROF_PY_STATUS naming a fresh file that
 * each profiled Python process appends "PID STEPS" to at exit. */
static void set_python(char *status, size_t size)
{
    status[0] = '\0';
    char dir[4096];
    find_py_inject(dir, sizeof dir);
    if (!dir[0]) return;
    const char *old = getenv("PYTHONPATH");
    size_t n = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(n);
    if (!path) return;
    snprintf(path, n, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", path, 1);
    free(path);
    const char *tmp = getenv("TMPDIR");
    snprintf(status, size, "%s/stepprof-py-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(status);
    if (fd < 0) {
        status[0] = '\0';
        return;
    }
    close(fd);
    setenv("STEPPROF_PY_STATUS", status, 1);
}

/* The most steps a profiled Python process reported, or -1 when none did. */
static long long python_steps(const char *status)
{
    long long most = -1;
    if (!status[0]) return most;
    FILE *f = fopen(status, "r");
    if (!f) return most;
    long long pid, steps;
    while (fscanf(f, "%lld %lld", &pid, &steps) == 2)
        if (steps > most) most = steps;
    fclose(f);
    return most;
}

static void report_files(const char *dir, const names *before, const char *start,
                         long long py_steps)
{
    names after;
    list_traces(dir, &after);
    if (after.n > 1) qsort(after.v, after.n, sizeof *after.v, by_name);
    const char *sep = ends_with(dir, "/") ? "" : "/";
    int shown = 0;
    for (size_t i = 0; i < after.n; i++) {
        if (has_name(before, after.v[i])) continue;
        fprintf(stderr, "%s%s%s%s", shown ? ", " : "stepprof: wrote ", dir, sep, after.v[i]);
        shown++;
    }
    if (shown)
        fputc('\n', stderr);
    else if (py_steps == 0)
        fprintf(stderr, "stepprof: no trace written: the Python program ended no step (no paddle or "
                        "torch optimizer step was seen); mark one with --step-fn MODULE:FUNCTION, "
                        "or call prof.step() of your own profiler\n");
    else if (py_steps > 0)
        fprintf(stderr, "stepprof: no trace written: the Python program ended %lld steps and did "
                        "not reach step %s\n", py_steps, start);
    else
        fprintf(stderr, "stepprof: no trace written: the program did not reach step %s, or is not "
                        "linked with libstepprof\n", start);
    free_names(&after);
}

/* ---- NVTX capture ---- */

static int readable(const char *path) { return access(path, R_OK) == 0; }

/* libstepprof_nvtx.so: STEPPROF_NVTX_LIBRARY, beside the tool (a build
 * tree), in ../lib or ../lib64 from it (an install), or where it was to be
 * installed. Empty when there is none. */
static void find_nvtx_library(char *out, size_t size)
{
    out[0] = '\0';
    const char *env = getenv("STEPPROF_NVTX_LIBRARY");
    if (env && *env) {
        if (readable(env)) snprintf(out, size, "%s", env);
        return;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        static const char *const rel[] = {"", "/../lib", "/../lib64", NULL};
        for (const char *const *r = rel; *r; r++) {
            snprintf(out, size, "%s%s/libstepprof_nvtx.so", self, *r);
            if (readable(out)) return;
        }
    }
    snprintf(out, size, "%s", SP_NVTX_INSTALLED);
    if (!readable(out)) out[0] = '\0';
}

/* Sets NVTX_INJECTION64_PATH to the library, unless the environment names
 * another tool already: that one is kept (NVTX loads one injection), and
 * *note says so in the start line. */
static void set_nvtx(const char *step_range, char *note, size_t size)
{
    note[0] = '\0';
    char lib[4200];
    find_nvtx_library(lib, sizeof lib);
    if (!lib[0]) return;
    const char *prev = getenv("NVTX_INJECTION64_PATH");
    if (prev && *prev && strcmp(prev, lib) != 0) {
        snprintf(note, size, " (NVTX_INJECTION64_PATH is already %s: NVTX ranges go to that "
                             "tool, not stepprof)", prev);
        return;
    }
    setenv("NVTX_INJECTION64_PATH", lib, 1);
    setenv("STEPPROF_STEP_RANGE", step_range, 1);
}

/* ---- running CMD ---- */

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0) kill((pid_t)child_pid, sig);
}

/* Runs argv with the environment set; returns its status as a shell
 * reports it. An exec failure comes back through a close-on-exec pipe. */
static int run_command(char **argv)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "stepprof: run: %s\n", strerror(errno));
        return 126;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "stepprof: run: %s\n", strerror(errno));
        return 126;
    }
    if (pid == 0) {
        close(fds[0]);
        execvp(argv[0], argv);
        int err = errno;
        if (write(fds[1], &err, sizeof err) != (ssize_t)sizeof err) _exit(127);
        _exit(127);
    }
    close(fds[1]);
    child_pid = pid;
    /* A Ctrl-C reaches CMD through the terminal; a SIGTERM sent to the tool
     * is passed on. The tool stays to report and pass the status through. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, forward);
    int err = 0;
    ssize_t n;
    do n = read(fds[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (n == (ssize_t)sizeof err) {
        fprintf(stderr, "stepprof: %s: %s\n", argv[0], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

int cli_run(int argc, char **argv)
{
    const char *steps = "10:20", *ranks = "0", *out = "./profiler_log/", *targets = NULL,
               *format = "json", *step_range = "step", *step_fn = NULL;
    int summary = 0, i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-') break; /* the command */
        if (cli_is_help(a)) {
            fputs(run_usage, stdout);
            return CLI_OK;
        }
        if (strcmp(a, "--summary") == 0) {
            summary = 1;
            continue;
        }
        const char **slot = NULL;
        const char *what = NULL;
        if (cli_option(argc, argv, &i, "--steps", &v)) slot = &steps, what = "START:END";
        else if (cli_option(argc, argv, &i, "--ranks", &v)) slot = &ranks, what = "LIST";
        else if (cli_option(argc, argv, &i, "--out", &v)) slot = &out, what = "DIR";
        else if (cli_option(argc, argv, &i, "--targets", &v)) slot = &targets, what = "LIST";
        else if (cli_option(argc, argv, &i, "--format", &v)) slot = &format, what = "FORMAT";
        else if (cli_option(argc, argv, &i, "--step-range", &v)) slot = &step_range, what = "NAME";
        else if (cli_option(argc, argv, &i, "--step-fn", &v)) slot = &step_fn, what = "MOD:NAME";
        else {
            static const char *const flags[] = {"--summary", NULL};
            return cli_unknown_option("run", a, flags);
        }
        if (!v) return cli_missing_value("run", a, what);
        *slot = v;
    }
    long long first, end;
    static const char *const all[] = {"all", NULL}, *const devices[] = {"cpu", "gpu", NULL};
    static const char *const formats[] = {"json", "json.gz", "pb", NULL};
    if (!valid_steps(steps, &first, &end))
        return cli_usage_error("run", "--steps '%s' is not START:END with 0 <= START < END (for example "
                           "10:20)", steps);
    if (!valid_list(ranks, all, 1) || (strstr(ranks, "all") && strcmp(ranks, "all") != 0))
        return cli_usage_error("run", "--ranks '%s' is not 'all' or a list of ranks such as 0,3", ranks);
    if (targets && !valid_list(targets, devices, 0))
        return cli_usage_error("run", "--targets '%s' is not cpu, gpu or cpu,gpu", targets);
    int format_ok = 0;
    for (const char *const *f = formats; *f; f++) format_ok |= strcmp(format, *f) == 0;
    if (!format_ok) return cli_usage_error("run", "--format '%s' is not json, json.gz or pb", format);
    if (!*step_range) return cli_usage_error("run", "--step-range is empty; it takes a range name");
    if (step_fn && (!strchr(step_fn, ':') || step_fn[0] == ':' || !strchr(step_fn, ':')[1]))
        return cli_usage_error("run", "--step-fn '%s' is not MODULE:FUNCTION (for example "
                               "train:step)", step_fn);
    if (!*out) return cli_usage_error("run", "--out '%s' is empty; it takes a directory", out);
    const char *why = bad_out_dir(out);
    if (why) return cli_usage_error("run", "--out '%s' %s", out, why);
    if (i >= argc) return cli_usage_error("run", "no command to run: stepprof run [OPTIONS] -- CMD");

    setenv("STEPPROF_STEPS", steps, 1);
    setenv("STEPPROF_RANKS", ranks, 1);
    setenv("STEPPROF_OUT", out, 1);
    setenv("STEPPROF_FORMAT", format, 1);
    if (targets) setenv("STEPPROF_TARGETS", targets, 1);
    else unsetenv("STEPPROF_TARGETS");
    setenv("STEPPROF_SUMMARY", summary ? "1" : "0", 1);
    setenv("STEPPROF_QUIET", "1", 1);
    if (step_fn) setenv("STEPPROF_STEP_FN", step_fn, 1);
    else unsetenv("STEPPROF_STEP_FN");
    char py_status[4200];
    set_python(py_status, sizeof py_status);
    char nvtx_note[4400];
    set_nvtx(step_range, nvtx_note, sizeof nvtx_note);

    names before;
    list_traces(out, &before);
    char start[32];
    snprintf(start, sizeof start, "%lld", first);
    fprintf(stderr, "stepprof: profiling steps [%lld, %lld) of rank%s %s into %s: %s%s\n", first,
            end, strcmp(ranks, "all") == 0 || strchr(ranks, ',') ? "s" : "", ranks, out, argv[i],
            nvtx_note);
    int status = run_command(argv + i);
    if (status != 127 && status != 126) report_files(out, &before, start, python_steps(py_status));
    if (py_status[0]) unlink(py_status);
    free_names(&before);
    return status;
}
