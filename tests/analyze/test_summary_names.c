/* test_summary_names.c: every table that prints recorded names, fed names
 * with a newline, a tab, other control characters (C0, DEL, C1) and 4,096
 * characters (issue 17: they broke the Operator table's layout, and each
 * table cut names its own way or not at all). One golden file per table;
 * each must keep its layout: no raw control character, and no line longer
 * than the table's title line plus the two trailing spaces. */
#include "fixture.h"
#include "stepprof/stepprof.h"
#include "table.h"

#include <stdio.h>

#define US 1000ll

static char long_op[4097], long_inner[4097], long_user[4097], long_copy[4097], long_kernel[4097];

static void fill(char *s, const char *head, char c)
{
    size_t n = strlen(head);
    memcpy(s, head, n);
    memset(s + n, c, 4096 - n);
    s[4096] = '\0';
}

/* Times in us. Thread 1: ProfileStep#0 [0,100] > "op\nnewline" Operator
 * [0,40] > "inner\ttab" OperatorInner [0,10], the 4096-character inner
 * [10,20]; the 4096-character op [40,60] > "c1\xc2\x85" inner [40,45];
 * "user\x01\x7f" UserDefined [60,70], the 4096-character user range [70,80],
 * "memcpy\tcopy" UserDefined [80,85], a 4096-character memcpy range [85,90].
 * Kernels "kernel\nline" and a 4096-character one; memory events at
 * "Place(\tcpu)" inside the long op. */
static sp_result *odd_names(void)
{
    fill(long_op, "op_", 'o');
    fill(long_inner, "inner_", 'i');
    fill(long_user, "user_", 'u');
    fill(long_copy, "memcpy_", 'c');
    fill(long_kernel, "kernel_", 'k');
    const fixture_range ev[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"op\nnewline", SP_EVENT_OPERATOR, 0, 40 * US},
        {"inner\ttab", SP_EVENT_OPERATOR_INNER, 0, 10 * US},
        {long_inner, SP_EVENT_OPERATOR_INNER, 10 * US, 20 * US},
        {long_op, SP_EVENT_OPERATOR, 40 * US, 60 * US},
        {"c1\xc2\x85", SP_EVENT_OPERATOR_INNER, 40 * US, 45 * US},
        {"user\x01\x7f", SP_EVENT_USER_DEFINED, 60 * US, 70 * US},
        {long_user, SP_EVENT_PYTHON_USER_DEFINED, 70 * US, 80 * US},
        {"memcpy\tcopy", SP_EVENT_USER_DEFINED, 80 * US, 85 * US},
        {long_copy, SP_EVENT_USER_DEFINED, 85 * US, 90 * US},
    };
    sp_result *r = sp__result_new();
    CHECK(r != NULL);
    if (!r) return NULL;
    r->span_start_ns = 0;
    r->span_end_ns = 100 * US;
    fixture_add_thread(r, 1, "main", ev, sizeof ev / sizeof *ev);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 1 * US, 2 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 41 * US, 42 * US, 2);
    fixture_add_device(r, "kernel\nline", SP_EVENT_KERNEL, 3 * US, 8 * US, 0, 7, 1);
    fixture_add_device(r, long_kernel, SP_EVENT_KERNEL, 43 * US, 50 * US, 0, 7, 2);
    fixture_add_mem(r, t, 41 * US, SP_MEM_ALLOCATE, "Place(\tcpu)", 0x10, 256, 256, 0, 256, 0);
    fixture_add_mem(r, t, 61 * US, SP_MEM_ALLOCATE, "Place(\tcpu)", 0x20, 64, 320, 0, 320, 0);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

/* Code points of s up to a newline. */
static size_t line_cps(const char *s)
{
    size_t n = 0;
    for (; *s && *s != '\n'; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* Checks the layout of one table's text and returns it. */
static void check_layout(const char *text)
{
    size_t title = line_cps(text), longest = 0;
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        CHECK(c >= 0x20 || c == '\n');
        CHECK(c != 0x7F);
        CHECK(!(c == 0xC2 && (unsigned char)p[1] >= 0x80 && (unsigned char)p[1] < 0xA0));
    }
    for (const char *p = text; *p;) {
        size_t n = line_cps(p);
        /* A header cell longer than its column overflows in paddle too
         * ("Allocation Count" in 15); only names must fit. */
        if (n > longest && strncmp(p, "Name ", 5) != 0) longest = n;
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
    CHECK(title > 0);
    CHECK(longest <= title + 2);
}

static const char *view_text(const sp_result *r, sp_summary_view view)
{
    static char text[1 << 16];
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << view;
    o.time_unit = "us";
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK(f != NULL);
    if (!f) return "";
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    /* The span's counters line is not part of the table. */
    char *counters = strstr(text, "Counters:");
    if (counters) *counters = '\0';
    return text;
}

#define NAMES_TEST(fn, view, golden)                                                               \
    static void fn(void)                                                                           \
    {                                                                                              \
        sp_result *r = odd_names();                                                                \
        if (!r) return;                                                                            \
        const char *text = view_text(r, view);                                                     \
        fixture_check_golden(golden, text);                                                        \
        check_layout(text);                                                                        \
        sp_result_release(r);                                                                      \
    }

NAMES_TEST(test_summary_names_operator, SP_VIEW_OPERATOR, "names_operator.txt")
NAMES_TEST(test_summary_names_kernel, SP_VIEW_KERNEL, "names_kernel.txt")
NAMES_TEST(test_summary_names_userdefined, SP_VIEW_UDF, "names_userdefined.txt")
NAMES_TEST(test_summary_names_memory_manipulation, SP_VIEW_MEMORY_MANIPULATION, "names_memcpy.txt")
NAMES_TEST(test_summary_names_memory, SP_VIEW_MEMORY, "names_memory.txt")

/* torch's table: its own cut (52 code points + "..."), same visible form. */
static void test_summary_names_torch(void)
{
    sp_result *r = odd_names();
    if (!r) return;
    static char text[1 << 16];
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(sp_result_table_torch(r, NULL, -1, f));
        fclose(f);
        fixture_check_golden("names_torch.txt", text);
        for (const char *p = text; *p; p++) CHECK((unsigned char)*p >= 0x20 || *p == '\n');
        /* No line of the table is longer than its first separator (the
         * header is: torch's "CUDA time avg" overflows its 12 too). */
        size_t sep = line_cps(text);
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            if (!strstr(p, "# of Calls") || (nl && strstr(p, "# of Calls") > nl)) CHECK(line_cps(p) <= sep);
            p = strchr(p, '\n');
            if (!p) break;
            p++;
        }
    }
    sp_result_release(r);
}

/* The one rule itself: escapes, a cut that never splits one, the prefix
 * counted in the width. */
static void test_summary_names_fmt_name(void)
{
    char out[SP__NAME_CELL_BYTES];
    sp__fmt_name(out, sizeof out, "  ", "a\nb\tc\rd\x01" "e\x7f", 52, 49);
    CHECK_STR_EQ("  a\\nb\\tc\\rd\\x01e\\x7f", out);
    sp__fmt_name(out, sizeof out, "", "abcdefgh", 5, 2);
    CHECK_STR_EQ("ab...", out);
    sp__fmt_name(out, sizeof out, "", "a\nbcdef", 5, 2); /* "\n" does not fit whole */
    CHECK_STR_EQ("a...", out);
    sp__fmt_name(out, sizeof out, "", "\xc2\x85x", 10, 7);
    CHECK_STR_EQ("\\u0085x", out);
    sp__fmt_name(out, sizeof out, "", "\xe2\x82", 10, 7); /* a cut sequence */
    CHECK_STR_EQ("??", out);
    sp__fmt_name(out, sizeof out, "", "\xc3\xa9t\xc3\xa9", 3, 0); /* "été" fits: 3 code points */
    CHECK_STR_EQ("\xc3\xa9t\xc3\xa9", out);
    sp__fmt_name(out, 4, "", "abcdef", 52, 49); /* never past size */
    CHECK_STR_EQ("abc", out);
}

int main(void)
{
    RUN_TEST(test_summary_names_fmt_name);
    RUN_TEST(test_summary_names_operator);
    RUN_TEST(test_summary_names_kernel);
    RUN_TEST(test_summary_names_userdefined);
    RUN_TEST(test_summary_names_memory_manipulation);
    RUN_TEST(test_summary_names_memory);
    RUN_TEST(test_summary_names_torch);
    return TEST_SUMMARY();
}
