/* test_chrome_json.c: checks the Chrome-trace JSON exporter end to end
 * through the public API: spans recorded on two threads are exported with
 * sp_profiler_export / sp_result_export and every file is handed to
 * tests/trace/tracecheck.py (which parses with Python's json), then read back
 * as text for the details of trace-format.md §1-6. Hostile names (quotes,
 * control bytes, invalid UTF-8, over-long) each get their own span so that
 * the repair counters can be checked exactly. Each test works in its own
 * mkdtemp directory and removes it. */
#include "check.h"

#include <stepprof/stepprof.h>

#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define QUARTER_NS 7889238000000000ll
#define SCHEMA_PREFIX "{\"schemaVersion\":1"
#define FFFD "\xEF\xBF\xBD"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static int make_tmpdir(char dir[64])
{
    snprintf(dir, 64, "/tmp/sp_chrome_json_XXXXXX");
    return mkdtemp(dir) != NULL;
}

/* Reads a whole file, NUL-terminated; free() it. NULL if unreadable. */
static char *read_file(const char *path, size_t *len)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    char *data = f && fstat(fileno(f), &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (data) data[n] = '\0';
    if (len) *len = n;
    return data;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f);
    if (f) fclose(f);
}

/* Runs tracecheck.py on file with extra arguments; returns its exit status
 * (0 if valid). Its output is shown only on failure. */
static int tracecheck(const char *file, const char *extra)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "out=$('%s' -B '%s/tests/trace/tracecheck.py' '%s' %s 2>&1) || "
             "{ printf '%%s\\n' \"$out\" >&2; exit 1; }",
             SP_PYTHON, SP_SOURCE_DIR, file, extra ? extra : "");
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Number of entries in dir whose name contains ".tmp". */
static int count_tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp")) n++;
    closedir(d);
    return n;
}

/* Whether the gzip file at path decompresses (zlib) to text starting with prefix. */
static int gz_starts_with(const char *path, const char *prefix)
{
    char head[64] = {0};
    gzFile gz = gzopen(path, "rb");
    int n = gz ? gzread(gz, head, (unsigned)strlen(prefix)) : -1;
    if (gz) gzclose(gz);
    return n == (int)strlen(prefix) && memcmp(head, prefix, (size_t)n) == 0;
}

static int first_bytes_are(const char *path, const char *want, size_t n)
{
    size_t len = 0;
    char *data = read_file(path, &len);
    int ok = data && len >= n && memcmp(data, want, n) == 0;
    free(data);
    return ok;
}

static void *worker_main(void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_OPERATOR, "worker_op");
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, "worker_copy_TAIL", 11);
    sp_instant(SP_EVENT_USER_DEFINED, "worker_mark");
    sp_counter("queue_depth", 3.0);
    sp_range_end();
    sp_range_end();
    return NULL;
}

/* One step's worth of ranges on the main thread and on a second pthread. */
static void workload(const void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
    sp_range_end();
    sp_range_begin(SP_EVENT_FORWARD, "forward_pass");
    sp_range_begin(SP_EVENT_OPERATOR, "matmul");
    sp_range_end();
    sp_range_end();
    char name[] = "copied_backward";
    sp_range_begin_copy(SP_EVENT_BACKWARD, name, strlen(name));
    memset(name, 'z', strlen(name)); /* the copy must not see this */
    sp_range_end();
    sp_instant(SP_EVENT_USER_DEFINED, "main_mark");
    sp_counter("loss", 0.5);
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, worker_main, NULL));
    pthread_join(t, NULL);
}

typedef struct name_case {
    const char *label;
    char *bytes;
    size_t len;
    uint64_t invalid_utf8, names_cut;
} name_case;

static void one_name(const void *arg)
{
    const name_case *c = arg;
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, c->bytes, c->len);
    sp_range_end();
}

/* Records `steps` steps of body with the default scheduler and no handler;
 * returns the stopped profiler (destroy it), or NULL. */
static sp_profiler *record(void (*body)(const void *), const void *arg, int steps)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return NULL;
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < steps; i++) {
        body(arg);
        if (i + 1 < steps) CHECK_OK(sp_profiler_step(p, -1));
    }
    CHECK_OK(sp_profiler_stop(p));
    CHECK(sp_profiler_result(p) != NULL);
    return p;
}

static void test_chrome_json_every_format_passes_tracecheck(void)
{
    char dir[64], path[128];
    CHECK(make_tmpdir(dir));
    sp_profiler *p = record(workload, NULL, 2);
    if (!p) return;
    CHECK_EQ(3, sp_result_thread_count(sp_profiler_result(p))); /* main + one pthread per step */
    static const struct { const char *name; sp_format format; int gz; } outs[4] = {
        {"auto.json", SP_FORMAT_AUTO, 0}, {"auto.json.gz", SP_FORMAT_AUTO, 1},
        {"forced_gz.json", SP_FORMAT_JSON_GZ, 1}, {"forced_plain.json.gz", SP_FORMAT_JSON, 0}};
    const char *expect = "--min-events 12 --expect-name ProfilerStep#0 --expect-name matmul "
                         "--expect-name ProfilerStep#1 --expect-name worker_op --expect-name "
                         "worker_copy --expect-name copied_backward --expect-counter misuse=0";
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, outs[i].name);
        CHECK_OK(sp_profiler_export(p, path, outs[i].format));
        CHECK_EQ(0, tracecheck(path, expect));
        if (outs[i].gz)
            CHECK(first_bytes_are(path, "\x1f\x8b", 2) && gz_starts_with(path, SCHEMA_PREFIX));
        if (!outs[i].gz) CHECK(first_bytes_are(path, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX)));
    }
    CHECK_EQ(0, count_tmp_files(dir));
    sp_profiler_destroy(p);
    remove_tree(dir);
}

/* Records each name in its own span, exports it and checks the counters, the
 * stored name and the file. */
static void check_name_case(const char *dir, int index, const name_case *c)
{
    sp_profiler *p = record(one_name, c, 1);
    if (!p) return;
    const sp_result *r = sp_profiler_result(p);
    if (sp_result_counter(r, SP_COUNTER_INVALID_UTF8) != c->invalid_utf8 ||
        sp_result_counter(r, SP_COUNTER_NAMES_CUT) != c->names_cut)
        fprintf(stderr, "name case %s:\n", c->label);
    CHECK_U64_EQ(c->invalid_utf8, sp_result_counter(r, SP_COUNTER_INVALID_UTF8));
    CHECK_U64_EQ(c->names_cut, sp_result_counter(r, SP_COUNTER_NAMES_CUT));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE));
    const char *stored = NULL;
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++)
        if (e.type == SP_EVENT_USER_DEFINED) stored = e.name;
    CHECK(stored != NULL);
    if (stored && !c->invalid_utf8 && !c->names_cut)
        CHECK_MEM_EQ(c->bytes, c->len, stored, strlen(stored));
    if (stored && c->invalid_utf8) CHECK(strstr(stored, FFFD) != NULL);
    if (stored && c->names_cut) {
        size_t n = strlen(stored);
        CHECK(n <= 4096);
        CHECK(n >= 3 && strcmp(stored + n - 3, "...") == 0);
    }
    char path[128], expect[128];
    snprintf(path, sizeof path, "%s/name_%d.json", dir, index);
    snprintf(expect, sizeof expect,
             "--expect-counter invalid_utf8=%llu --expect-counter names_cut=%llu",
             (unsigned long long)c->invalid_utf8, (unsigned long long)c->names_cut);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_AUTO));
    CHECK_EQ(0, tracecheck(path, expect));
    sp_profiler_destroy(p);
}

static void test_chrome_json_hostile_names_stay_valid_and_are_counted(void)
{
    char dir[64];
    CHECK(make_tmpdir(dir));
    char quotes[] = "say \"hi\" \"\"", backslash[] = "C:\\dir\\\\end\\";
    char newline[] = "line1\nline2\n";
    char bad[] = "ab\xff\xfe", truncated[] = "euro\xe2\x82", controls[31], all_bytes[255];
    for (int i = 0; i < 31; i++) controls[i] = (char)(i + 1);
    for (int i = 0; i < 255; i++) all_bytes[i] = (char)(i + 1);
    static char long_ascii[5000], long_bad[5000], long_utf8[5000];
    memset(long_ascii, 'x', 5000);
    memset(long_bad, '\xff', 5000);
    for (int i = 0; i < 5000; i += 2) memcpy(long_utf8 + i, "\xc3\xa9", 2); /* é */
    const name_case cases[] = {
        {"quotes", quotes, strlen(quotes), 0, 0},
        {"backslashes", backslash, strlen(backslash), 0, 0},
        {"control bytes 0x01-0x1F", controls, sizeof controls, 0, 0},
        {"newlines", newline, strlen(newline), 0, 0},
        {"invalid \\xff\\xfe", bad, strlen(bad), 1, 0},
        {"truncated \\xe2\\x82", truncated, strlen(truncated), 1, 0},
        {"every byte 1..255", all_bytes, sizeof all_bytes, 1, 0},
        {"5000 ASCII bytes", long_ascii, 5000, 0, 1},
        {"5000 bytes of 2-byte characters", long_utf8, 5000, 0, 1},
        {"5000 invalid bytes", long_bad, 5000, 1, 1},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
        check_name_case(dir, i, &cases[i]);
    remove_tree(dir);
}

/* Whether some line of text holds both needle and also. */
static int line_has(const char *text, const char *needle, const char *also)
{
    for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle)) {
        const char *start = at, *end = strchr(at, '\n');
        while (start > text && start[-1] != '\n') start--;
        size_t n = end ? (size_t)(end - start) : strlen(start);
        char *line = strndup(start, n);
        int ok = line && strstr(line, also) != NULL;
        free(line);
        if (ok) return 1;
    }
    return 0;
}

/* Counts the values of key ("ts" or "dur"); -1 if one is not
 * <digits>.<3 digits> followed by something other than a digit or exponent. */
static int count_times(const char *text, const char *key)
{
    int n = 0;
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key), n++) {
        const unsigned char *q = (const unsigned char *)p + strlen(key), *digits = q;
        while (isdigit(*q)) q++;
        if (q == digits || q[0] != '.' || !isdigit(q[1]) || !isdigit(q[2]) || !isdigit(q[3]) ||
            isdigit(q[4]) || q[4] == 'e' || q[4] == 'E')
            return -1;
    }
    return n;
}

static void unset_rank_env(void)
{
    static const char *const vars[] = {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

static void test_chrome_json_structure_follows_trace_format(void)
{
    char dir[64], path[128], tid[64];
    CHECK(make_tmpdir(dir));
    unset_rank_env();
    sp_profiler *p = record(workload, NULL, 2);
    if (!p) return;
    snprintf(path, sizeof path, "%s/trace.json", dir);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK_EQ(0, tracecheck(path, NULL));
    char *text = read_file(path, NULL);
    CHECK(text != NULL);
    if (!text) return;
    CHECK(strncmp(text, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX)) == 0);
    CHECK(strstr(text, "\"ProfilerStep#0\"") != NULL);
    CHECK(strstr(text, "\"ProfilerStep#1\"") != NULL);
    CHECK(strstr(text, "ProfileStep#") == NULL);
    CHECK(strstr(text, "\"cat\":\"cpu_op\",\"name\":"
                       "\"enumerate(DataLoader)#DataLoader.__next__\""));
    /* Types the loader tells from cat and name go without "Event Type", and a
     * span without CUDA records links nothing by External id. */
    CHECK(!line_has(text, "\"name\":\"enumerate(DataLoader)#", "\"args\""));
    CHECK(line_has(text, "\"name\":\"matmul\"", "\"dur\""));
    CHECK(!line_has(text, "\"name\":\"matmul\"", "\"args\""));
    CHECK(!line_has(text, "\"name\":\"ProfilerStep#0\"", "\"args\""));
    CHECK(strstr(text, "External id") == NULL);
    CHECK(strstr(text, "\"cat\":\"cpu_op\",\"name\":\"matmul\"") != NULL);
    CHECK(strstr(text, "\"cat\":\"cpu_op\",\"name\":\"worker_op\"") != NULL);
    CHECK(strstr(text, "\"cat\":\"user_annotation\",\"name\":\"forward_pass\"") != NULL);
    CHECK(line_has(text, "\"name\":\"forward_pass\"", "\"Event Type\":\"Forward\""));
    CHECK(line_has(text, "\"name\":\"copied_backward\"", "\"Event Type\":\"Backward\""));
    CHECK(strstr(text, "\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\"") != NULL);
    CHECK(line_has(text, "\"name\":\"loss\"", "\"ph\":\"C\""));
    CHECK(line_has(text, "\"name\":\"main_mark\"", "\"ph\":\"i\""));
    /* A single process: no backend (trace-format.md §2 item 3). */
    CHECK(strstr(text, "\"distributedInfo\":{\"rank\": 0, \"world_size\": 1, \"local_rank\": 0, "
                       "\"local_world_size\": 1, \"hostname\": "));
    CHECK(strstr(text, "\"backend\"") == NULL);
    CHECK(strstr(text, "\"stepprof_counters\":{\"host_dropped\":") != NULL);
    /* Both threads' tracks, with the worker's events on its own tid. */
    const sp_result *r = sp_profiler_result(p);
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info info;
        CHECK_OK(sp_result_thread(r, t, &info));
        snprintf(tid, sizeof tid, "\"tid\":%llu,", (unsigned long long)info.tid);
        CHECK(strstr(text, tid) != NULL);
        if (info.tid != (uint64_t)getpid()) CHECK(line_has(text, "\"name\":\"worker_op\"", tid));
    }
    const char *base = strstr(text, "\"baseTimeNanoseconds\":");
    CHECK(base != NULL);
    if (base) {
        long long b = strtoll(base + strlen("\"baseTimeNanoseconds\":"), NULL, 10);
        CHECK(b > 0);
        CHECK_EQ(0, b % QUARTER_NS);
    }
    CHECK(count_times(text, "\"ts\":") >= 12);
    CHECK(count_times(text, "\"dur\":") >= 6);
    free(text);
    /* The rank and world size are the span's, taken when it was collected,
     * not the environment's at export time. */
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "4", 1);
    snprintf(path, sizeof path, "%s/rank3.json", dir);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_AUTO));
    unset_rank_env();
    CHECK_EQ(0, tracecheck(path, NULL));
    text = read_file(path, NULL);
    CHECK(text && strstr(text, "\"distributedInfo\":{\"rank\": 0, \"world_size\": 1, "));
    free(text);
    sp_profiler_destroy(p);
    remove_tree(dir);
}

static void test_chrome_json_export_errors_leave_no_temporary_files(void)
{
    char dir[64], path[128];
    CHECK(make_tmpdir(dir));
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return;
    snprintf(path, sizeof path, "%s/early.json", dir);
    CHECK_EQ(SP_ENODATA, sp_profiler_export(p, path, SP_FORMAT_AUTO)); /* not started */
    CHECK_OK(sp_profiler_start(p));
    workload(NULL);
    CHECK_EQ(SP_ENODATA, sp_profiler_export(p, path, SP_FORMAT_AUTO)); /* span still open */
    CHECK_OK(sp_profiler_stop(p));
    CHECK(access(path, F_OK) != 0);
    /* A directory that does not exist: the message names the path. */
    snprintf(path, sizeof path, "%s/missing/t.json", dir);
    CHECK_EQ(SP_EIO, sp_profiler_export(p, path, SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(), path) != NULL);
    CHECK_EQ(SP_EIO, sp_result_export(sp_profiler_result(p), path, SP_FORMAT_JSON_GZ));
    CHECK(strstr(sp_last_error(), path) != NULL);
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK(access(path, F_OK) != 0);
    /* Empty and NULL paths, an unknown format. */
    CHECK_EQ(SP_EINVAL, sp_profiler_export(p, "", SP_FORMAT_AUTO));
    CHECK_EQ(SP_EINVAL, sp_result_export(sp_profiler_result(p), "", SP_FORMAT_JSON));
    CHECK_EQ(SP_EINVAL, sp_profiler_export(p, NULL, SP_FORMAT_AUTO));
    snprintf(path, sizeof path, "%s/fmt.json", dir);
    CHECK_EQ(SP_EINVAL, sp_profiler_export(p, path, (sp_format)42));
    CHECK(access(path, F_OK) != 0);
    /* The target is a directory: the temporary file is written, the rename
     * fails, and the temporary must be removed. */
    snprintf(path, sizeof path, "%s/adir", dir);
    CHECK_EQ(0, mkdir(path, 0755));
    CHECK_EQ(SP_EIO, sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK(strstr(sp_last_error(), path) != NULL);
    CHECK_EQ(SP_EIO, sp_profiler_export(p, path, SP_FORMAT_JSON_GZ));
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_EQ(0, count_tmp_files(dir));
    CHECK_EQ(0, count_tmp_files(path));
    sp_profiler_destroy(p);
    remove_tree(dir);
}

static void test_chrome_json_export_is_repeatable_and_replaces(void)
{
    char dir[64], path[128], copy[128];
    CHECK(make_tmpdir(dir));
    sp_profiler *p = record(workload, NULL, 2);
    if (!p) return;
    snprintf(path, sizeof path, "%s/trace.json", dir);
    write_text(path, "junk that must be replaced");
    struct stat st1, st2;
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_AUTO));
    CHECK(stat(path, &st1) == 0);
    CHECK(first_bytes_are(path, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX)));
    size_t len1 = 0, len2 = 0;
    char *first = read_file(path, &len1);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_AUTO));
    CHECK(stat(path, &st2) == 0);
    CHECK(st1.st_ino != st2.st_ino); /* a fresh file renamed over the old one */
    char *second = read_file(path, &len2);
    if (first && second) CHECK_MEM_EQ(first, len1, second, len2);
    CHECK_EQ(0, tracecheck(path, "--expect-name ProfilerStep#1"));
    /* A retained result outlives its profiler and exports the same way. */
    sp_result *kept = sp_result_retain(sp_profiler_result(p));
    sp_profiler_destroy(p);
    snprintf(copy, sizeof copy, "%s/copy.json.gz", dir);
    CHECK_OK(sp_result_export(kept, copy, SP_FORMAT_AUTO));
    CHECK_EQ(0, tracecheck(copy, "--expect-name ProfilerStep#1 --expect-name worker_op"));
    sp_result_release(kept);
    CHECK_EQ(0, count_tmp_files(dir));
    free(first);
    free(second);
    remove_tree(dir);
}

static void test_chrome_json_export_replaces_planted_symlink(void)
{
    char dir[64], victim[128], out_dir[128], link_path[160];
    CHECK(make_tmpdir(dir));
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    snprintf(link_path, sizeof link_path, "%s/trace.json", out_dir);
    write_text(victim, "precious\n");
    CHECK_EQ(0, mkdir(out_dir, 0755));
    CHECK_EQ(0, symlink(victim, link_path));
    sp_profiler *p = record(workload, NULL, 1);
    if (!p) return;
    CHECK_OK(sp_profiler_export(p, link_path, SP_FORMAT_AUTO));
    struct stat st;
    CHECK(lstat(link_path, &st) == 0 && S_ISREG(st.st_mode));
    char *text = read_file(victim, NULL);
    CHECK(text && strcmp(text, "precious\n") == 0);
    free(text);
    CHECK_EQ(0, tracecheck(link_path, "--expect-name ProfilerStep#0"));
    CHECK_EQ(0, count_tmp_files(out_dir));
    sp_profiler_destroy(p);
    remove_tree(dir);
}

/* Occurrences of needle in text. */
static int occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* User ranges and instants named like a step, beside the real steps. */
static void reserved_names(const void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_USER_DEFINED, "ProfilerStep#7");
    sp_range_end();
    sp_range_begin(SP_EVENT_PYTHON_USER_DEFINED, "ProfileStep#8");
    sp_range_end();
    sp_range_begin(SP_EVENT_FORWARD, "ProfilerStep");
    sp_range_end();
    sp_instant(SP_EVENT_USER_DEFINED, "ProfilerStep#9");
    sp_range_begin(SP_EVENT_USER_DEFINED, "MyProfilerStep#1"); /* not at the start: kept */
    sp_range_end();
}

/* Issue 17: a user range named ProfilerStep#x broke the TensorBoard plugin
 * and HTA, which take every name starting with "ProfilerStep" for a step.
 * Such names of other types are written with the prefix "user:"; the real
 * steps keep theirs, and tracecheck (which checks the steps) passes. */
static void test_chrome_json_reserved_step_names_are_escaped(void)
{
    char dir[64], path[128];
    CHECK(make_tmpdir(dir));
    sp_profiler *p = record(reserved_names, NULL, 2);
    if (!p) return;
    snprintf(path, sizeof path, "%s/trace.pt.trace.json", dir);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK_EQ(0, tracecheck(path, NULL));
    char *text = read_file(path, NULL);
    CHECK(text != NULL);
    if (text) {
        CHECK_EQ(1, occurrences(text, "\"name\":\"ProfilerStep#0\""));
        CHECK_EQ(1, occurrences(text, "\"name\":\"ProfilerStep#1\""));
        CHECK_EQ(2, occurrences(text, "\"name\":\"ProfilerStep#"));
        CHECK_EQ(0, occurrences(text, "\"name\":\"ProfileStep#"));
        CHECK_EQ(2, occurrences(text, "\"name\":\"user:ProfilerStep#7\""));
        CHECK_EQ(2, occurrences(text, "\"name\":\"user:ProfileStep#8\""));
        CHECK_EQ(2, occurrences(text, "\"name\":\"user:ProfilerStep\""));
        CHECK_EQ(2, occurrences(text, "\"name\":\"user:ProfilerStep#9\""));
        CHECK_EQ(2, occurrences(text, "\"name\":\"MyProfilerStep#1\""));
        /* UserDefined, as the loader reads a user_annotation not named as a step */
        CHECK(!line_has(text, "\"name\":\"user:ProfilerStep#7\"", "Event Type"));
    }
    free(text);
    sp_profiler_destroy(p);
    remove_tree(dir);
}

/* Issue 17: the torch flags were the string "1" where Kineto writes the
 * integer 1, and with_stack was left out. */
static void test_chrome_json_torch_flags_are_integers(void)
{
    char dir[64], path[128];
    CHECK(make_tmpdir(dir));
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.record_shapes = o.profile_memory = o.with_stack = o.with_flops = true;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return;
    CHECK_OK(sp_profiler_start(p));
    workload(NULL);
    CHECK_OK(sp_profiler_stop(p));
    snprintf(path, sizeof path, "%s/flags.json", dir);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK_EQ(0, tracecheck(path, NULL));
    char *text = read_file(path, NULL);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "\"record_shapes\":1,") != NULL);
        CHECK(strstr(text, "\"profile_memory\":1,") != NULL);
        CHECK(strstr(text, "\"with_stack\":1,") != NULL);
        CHECK(strstr(text, "\"with_flops\":1,") != NULL);
        CHECK(strstr(text, "\"record_shapes\":\"1\"") == NULL); /* not the string */
    }
    free(text);
    /* The loader reads the flags back. */
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    if (back) {
        snprintf(path, sizeof path, "%s/again.json", dir);
        CHECK_OK(sp_result_export(back, path, SP_FORMAT_JSON));
        text = read_file(path, NULL);
        CHECK(text && strstr(text, "\"record_shapes\":1,\"profile_memory\":1,\"with_stack\":1,"
                                   "\"with_flops\":1,"));
        free(text);
        sp_result_release(back);
    }
    sp_profiler_destroy(p);
    remove_tree(dir);
}

/* Python calls (PythonOp, with_stack) as Kineto writes them: cat
 * python_function, Python id / parent id / module id and no External id;
 * the operators inside them get the Call stack; the loader reads them back
 * as PythonOp. */
static void test_chrome_json_python_calls_as_kineto(void)
{
    char dir[64], path[128];
    CHECK(make_tmpdir(dir));
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return;
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_PYTHON_OP, "train.py(3): step");
    sp_range_begin(SP_EVENT_PYTHON_OP, "nn.Module: Linear_12");
    sp_range_begin(SP_EVENT_OPERATOR, "aten::mm");
    sp_range_end();
    sp_range_end();
    sp_range_begin(SP_EVENT_OPERATOR, "aten::add");
    sp_range_end();
    sp_range_end();
    sp_range_begin(SP_EVENT_OPERATOR, "aten::zeros");
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    snprintf(path, sizeof path, "%s/py.json", dir);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK_EQ(0, tracecheck(path, NULL));
    char *text = read_file(path, NULL);
    CHECK(text != NULL);
    if (text) {
        CHECK(line_has(text, "\"name\":\"train.py(3): step\"", "\"cat\":\"python_function\""));
        CHECK(line_has(text, "\"name\":\"train.py(3): step\"",
                       "\"args\":{\"Python id\":1}}"));
        CHECK(line_has(text, "\"name\":\"nn.Module: Linear_12\"",
                       "{\"Python id\":2,\"Python parent id\":1,\"Python module id\":12}}"));
        CHECK(line_has(text, "\"name\":\"aten::mm\"",
                       "\"Call stack\":\"nn.Module: Linear_12;train.py(3): step;\""));
        CHECK(line_has(text, "\"name\":\"aten::add\"", "\"Call stack\":\"train.py(3): step;\""));
        CHECK(!line_has(text, "\"name\":\"aten::zeros\"", "Call stack"));
        CHECK(!line_has(text, "python_function", "External id"));
    }
    free(text);
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    if (back) {
        snprintf(path, sizeof path, "%s/again.json", dir);
        CHECK_OK(sp_result_export(back, path, SP_FORMAT_JSON));
        text = read_file(path, NULL);
        CHECK(text && line_has(text, "\"name\":\"nn.Module: Linear_12\"",
                               "\"cat\":\"python_function\""));
        free(text);
        sp_result_release(back);
    }
    sp_profiler_destroy(p);
    remove_tree(dir);
}

int main(void)
{
    RUN_TEST(test_chrome_json_every_format_passes_tracecheck);
    RUN_TEST(test_chrome_json_hostile_names_stay_valid_and_are_counted);
    RUN_TEST(test_chrome_json_structure_follows_trace_format);
    RUN_TEST(test_chrome_json_export_errors_leave_no_temporary_files);
    RUN_TEST(test_chrome_json_export_is_repeatable_and_replaces);
    RUN_TEST(test_chrome_json_export_replaces_planted_symlink);
    RUN_TEST(test_chrome_json_reserved_step_names_are_escaped);
    RUN_TEST(test_chrome_json_torch_flags_are_integers);
    RUN_TEST(test_chrome_json_python_calls_as_kineto);
    return TEST_SUMMARY();
}
