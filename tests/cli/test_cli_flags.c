/* test_cli_flags.c: the summary flags of the stepprof command-line tool
 * change what it prints (tools/stepprof/commands.c): --sorted-by orders the
 * Operator rows by the key it names, --thread-sep gives one group per thread
 * instead of "All threads merged", --no-op-detail drops the inner rows.
 * Inputs: a small trace written here, whose four operators each key orders
 * differently, and the committed paddle trace (one thread, operators with
 * inner ranges). */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PADDLE SP_SOURCE_DIR "/tests/data/paddle_cpu_tiny.paddle_trace.pb"

static char text[1 << 17];

/* Runs `stepprof summary --views OperatorView --time-unit us FLAGS FILE`
 * into text; returns the exit code. */
static int summary_of(const char *flags, const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s summary --views OperatorView --time-unit us %s %s", SP_CLI, flags, file);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int summary(const char *flags) { return summary_of(flags, PADDLE); }

typedef struct op_row {
    char name[64];
    double total, avg, max, min;
} op_row;

/* The operator rows (not indented) under the group titles, and in *inner
 * the number of indented (inner) rows. */
static int op_rows(op_row rows[], int cap, int *inner)
{
    int n = 0;
    *inner = 0;
    const char *p = strstr(text, "Thread: ");
    while (p && (p = strchr(p, '\n')) != NULL) {
        p++;
        const char *eol = strchr(p, '\n');
        if (*p == '\0') break;
        if (*p == '-') {
            const char *t = strstr(p, "Thread: ");
            if (t && (!eol || t < eol)) continue; /* another group's title */
            break;
        }
        if (*p == ' ') {
            (*inner)++;
            continue;
        }
        const char *cell = strstr(p, " / ");
        if (!cell || (eol && cell > eol) || n >= cap) continue;
        while (cell > p && cell[-1] != ' ') cell--;
        op_row *r = &rows[n];
        const char *name_end = strstr(p, "  ");
        size_t len = name_end ? (size_t)(name_end - p) : 0;
        if (len >= sizeof r->name) len = sizeof r->name - 1;
        memcpy(r->name, p, len);
        r->name[len] = '\0';
        if (sscanf(cell, "%lf / %lf / %lf / %lf", &r->total, &r->avg, &r->max, &r->min) == 4) n++;
    }
    return n;
}

/* Four operators whose CPU times order them differently under each key
 * (us per call): op_a 90; op_b 10, 40; op_c 70, 80, 20; op_d 30. CPUTotal:
 * c a b d; CPUAvg: a c d b; CPUMax: a c b d; CPUMin (ascending): b c d a. */
static void write_ops_trace(const char *path)
{
    static const struct {
        char name;
        int start, dur;
    } calls[] = {{'a', 10, 90}, {'b', 210, 10}, {'c', 410, 70}, {'d', 610, 30},
                 {'b', 810, 40}, {'c', 1010, 80}, {'c', 1210, 20}};
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"schemaVersion\":1,\"baseTimeNanoseconds\":1795000000000000000,\"traceEvents\":[\n"
          "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":5,\"tid\":7,"
          "\"ts\":1.000,\"dur\":2000.000,\"args\":{\"Event Type\":\"ProfileStep\"}}",
          f);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        fprintf(f,
                ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op_%c\",\"pid\":5,\"tid\":7,\"ts\":%d.000,"
                "\"dur\":%d.000,\"args\":{\"Event Type\":\"Operator\"}}",
                calls[i].name, calls[i].start, calls[i].dur);
    fputs("\n]}\n", f);
    fclose(f);
}

static void test_cli_flags_sorted_by_orders_the_rows(void)
{
    char path[] = "/tmp/sp_cli_flags_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    write_ops_trace(path);
    static const struct {
        const char *flag, *want;
    } keys[] = {
        {"", "cabd"},
        {"--sorted-by CPUTotal", "cabd"},
        {"--sorted-by CPUAvg", "acdb"},
        {"--sorted-by CPUMax", "acbd"},
        {"--sorted-by CPUMin", "bcda"},
    };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        CHECK_EQ(0, summary_of(keys[k].flag, path));
        op_row rows[8];
        int inner;
        int n = op_rows(rows, 8, &inner);
        char got[9] = "";
        for (int i = 0; i < n && i < 8; i++) got[i] = rows[i].name[3];
        got[n < 8 ? n : 8] = '\0';
        if (strcmp(got, keys[k].want) != 0) fprintf(stderr, "'%s':\n", keys[k].flag);
        CHECK_STR_EQ(keys[k].want, got);
    }
    remove(path);
    /* On the paddle trace too, each key orders the rows by its own column. */
    op_row rows[32];
    int inner;
    static const struct {
        const char *flag;
        int field; /* 0 total, 1 avg, 2 max, 3 min */
        int ascending;
    } cols[] = {
        {"--sorted-by CPUTotal", 0, 0},
        {"--sorted-by CPUAvg", 1, 0},
        {"--sorted-by CPUMax", 2, 0},
        {"--sorted-by CPUMin", 3, 1},
    };
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
        CHECK_EQ(0, summary(cols[k].flag));
        int m = op_rows(rows, 32, &inner);
        CHECK(m >= 6);
        for (int i = 1; i < m; i++) {
            const double *u = &rows[i - 1].total, *v = &rows[i].total;
            if (cols[k].ascending)
                CHECK(u[cols[k].field] <= v[cols[k].field]);
            else
                CHECK(u[cols[k].field] >= v[cols[k].field]);
        }
    }
}

static void test_cli_flags_thread_sep_and_op_detail(void)
{
    op_row rows[32];
    int inner;
    CHECK_EQ(0, summary(""));
    CHECK(strstr(text, "Thread: All threads merged") != NULL);
    int n = op_rows(rows, 32, &inner);
    CHECK(inner > 0);
    CHECK_EQ(0, summary("--thread-sep"));
    CHECK(strstr(text, "All threads merged") == NULL);
    const char *title = strstr(text, "Thread: ");
    CHECK(title != NULL && title[8] >= '0' && title[8] <= '9');
    int inner_sep;
    CHECK_EQ(n, op_rows(rows, 32, &inner_sep));
    CHECK_EQ(inner, inner_sep);
    CHECK_EQ(0, summary("--no-op-detail"));
    int inner_off = -1;
    CHECK_EQ(n, op_rows(rows, 32, &inner_off));
    CHECK_EQ(0, inner_off);
    CHECK_EQ(0, summary("--no-op-detail --op-detail"));
    CHECK_EQ(n, op_rows(rows, 32, &inner_off));
    CHECK_EQ(inner, inner_off);
}

int main(void)
{
    RUN_TEST(test_cli_flags_sorted_by_orders_the_rows);
    RUN_TEST(test_cli_flags_thread_sep_and_op_detail);
    return TEST_SUMMARY();
}
