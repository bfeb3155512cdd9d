/* test_table.c: checks table.c against semantics.md §6.0 and the decisions
 * written in table.h: whole-text goldens (expected text spelled out below)
 * for an Overview-like table, growing and overflowing columns, a title
 * longer than the line, a table with no rows; the data accessors; the cell
 * formatting helpers (units, rounding, +inf, zero and NaN denominators);
 * and allocation failure at every allocation of a small build (run under
 * the sanitizer build for leaks). */
#include "check.h"
#include "sys.h"
#include "table.h"

#include <math.h>
#include <string.h>

/* Renders t and compares the whole text with expected. */
static void check_render(const char *expected, const sp__table *t)
{
    sp__buf b;
    sp__buf_init(&b);
    sp__table_render(t, &b);
    CHECK(!b.failed);
    CHECK_STR_EQ(expected, sp__buf_cstr(&b));
    sp__buf_fini(&b);
}

static void row4(sp__table *t, const char *a, const char *b, const char *c, const char *d)
{
    const char *cells[4] = {a, b, c, d};
    sp__table_row(t, cells);
}

static void header4(sp__table *t, const char *a, const char *b, const char *c, const char *d)
{
    const char *cells[4] = {a, b, c, d};
    sp__table_header(t, cells);
}

/* Overview layout: 4 columns of 25, so L = 4 * (25 + 2) - 2 = 106; the
 * title "Overview Summary" is 16 long: (106 - 16) / 2 = 45 dashes on each
 * side. The second header row sits mid-table; its first cell is empty. */
static void test_table_renders_overview_layout(void)
{
    sp__table *t = sp__table_new(4);
    CHECK(t != NULL);
    for (size_t c = 0; c < 4; c++) sp__table_column(t, c, 25, 0);
    sp__table_title(t, "Overview Summary");
    sp__table_text(t, "Time unit: ms");
    sp__table_separator(t);
    header4(t, "Event Type", "Calls", "CPU Time", "Ratio (%)");
    sp__table_separator(t);
    row4(t, "ProfileStep", "8", "4945.15", "100.00");
    row4(t, "  CudaRuntime", "28336", "2435.63", "49.25");
    row4(t, "  Operator", "8056", "1244.41", "25.16");
    sp__table_separator(t);
    header4(t, "", "Calls", "GPU Time", "Ratio (%)");
    sp__table_separator(t);
    row4(t, "  Kernel", "13688", "2744.61", "55.50");
    row4(t, "  Memcpy", "496", "29.82", "0.60");
    sp__table_separator(t);
    sp__table_text(t, "Note:");
    sp__table_text(t, "In this table, We sum up all collected events in terms of event type.");
    sp__table_dashes(t);
    sp__table_blank(t);
    sp__table_blank(t);
    CHECK(!sp__table_failed(t));
    check_render(
        "---------------------------------------------Overview Summary---------------------------------------------\n"
        "Time unit: ms\n"
        "-------------------------  -------------------------  -------------------------  -------------------------  \n"
        "Event Type                 Calls                      CPU Time                   Ratio (%)                  \n"
        "-------------------------  -------------------------  -------------------------  -------------------------  \n"
        "ProfileStep                8                          4945.15                    100.00                     \n"
        "  CudaRuntime              28336                      2435.63                    49.25                      \n"
        "  Operator                 8056                       1244.41                    25.16                      \n"
        "-------------------------  -------------------------  -------------------------  -------------------------  \n"
        "                           Calls                      GPU Time                   Ratio (%)                  \n"
        "-------------------------  -------------------------  -------------------------  -------------------------  \n"
        "  Kernel                   13688                      2744.61                    55.50                      \n"
        "  Memcpy                   496                        29.82                      0.60                       \n"
        "-------------------------  -------------------------  -------------------------  -------------------------  \n"
        "Note:\n"
        "In this table, We sum up all collected events in terms of event type.\n"
        "----------------------------------------------------------------------------------------------------------\n"
        "\n"
        "\n",
        t);
    sp__table_free(t);
}

/* Model layout: Name 15 fixed; Calls starts at 6 and grows to 8
 * ("12345678"); CPU starts at 40 and grows to the 50-character cell; GPU
 * stays 40. L = 17 + 10 + 52 + 42 - 2 = 119; "Model Summary" is 13 long:
 * (119 - 13) / 2 = 53 dashes each side. */
static void test_table_grows_columns_to_longest_cell(void)
{
    const char *cpu = "1234567.89 / 123456.79 / 999999.99 / 0.01 / 100.00";
    sp__table *t = sp__table_new(4);
    sp__table_column(t, 0, 15, 0);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_column(t, 3, 40, 1);
    sp__table_title(t, "Model Summary");
    sp__table_text(t, "Time unit: ms");
    sp__table_separator(t);
    header4(t, "Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
            "GPU Total / Avg / Max / Min / Ratio(%)");
    sp__table_separator(t);
    row4(t, "ProfileStep", "12345678", cpu, "0.00 / 0.00 / 0.00 / 0.00 / 0.00");
    row4(t, "  Others", "-", "1.00 / - / - / - / 0.01", "0.00 / - / - / - / 0.00");
    sp__table_separator(t);
    sp__table_blank(t);
    sp__table_blank(t);
    CHECK_EQ(15, sp__table_width(t, 0));
    CHECK_EQ(8, sp__table_width(t, 1));
    CHECK_EQ(50, sp__table_width(t, 2));
    CHECK_EQ(40, sp__table_width(t, 3));
    check_render(
        "-----------------------------------------------------Model Summary-----------------------------------------------------\n"
        "Time unit: ms\n"
        "---------------  --------  --------------------------------------------------  ----------------------------------------  \n"
        "Name             Calls     CPU Total / Avg / Max / Min / Ratio(%)              GPU Total / Avg / Max / Min / Ratio(%)    \n"
        "---------------  --------  --------------------------------------------------  ----------------------------------------  \n"
        "ProfileStep      12345678  1234567.89 / 123456.79 / 999999.99 / 0.01 / 100.00  0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
        "  Others         -         1.00 / - / - / - / 0.01                             0.00 / - / - / - / 0.00                   \n"
        "---------------  --------  --------------------------------------------------  ----------------------------------------  \n"
        "\n"
        "\n",
        t);
    sp__table_free(t);
}

/* Columns 10 and 8, neither growing: L = 12 + 10 - 2 = 20. The 21-character
 * name overflows: printed whole, then two spaces, shifting the next cell.
 * "Odd" (3): (20 - 3) / 2 = 8 dashes left, the remaining 9 right. */
static void test_table_overflows_fixed_column(void)
{
    sp__table *t = sp__table_new(2);
    sp__table_column(t, 0, 10, 0);
    sp__table_column(t, 1, 8, 0);
    sp__table_title(t, "Odd");
    sp__table_separator(t);
    sp__table_header(t, (const char *const[]){"Name", "Value"});
    sp__table_separator(t);
    sp__table_row(t, (const char *const[]){"averyveryverylongname", "1"});
    sp__table_row(t, (const char *const[]){"short", "2"});
    sp__table_separator(t);
    CHECK_EQ(10, sp__table_width(t, 0));
    check_render("--------Odd---------\n"
                 "----------  --------  \n"
                 "Name        Value     \n"
                 "----------  --------  \n"
                 "averyveryverylongname  1         \n"
                 "short       2         \n"
                 "----------  --------  \n",
                 t);
    sp__table_free(t);
}

/* One column of 4: L = 4. A 17-character title prints alone, no dashes;
 * a header cell longer than a fixed column overflows too (headers never
 * widen a column). */
static void test_table_title_longer_than_line(void)
{
    sp__table *t = sp__table_new(1);
    sp__table_column(t, 0, 4, 1);
    sp__table_title(t, "Much Longer Title");
    sp__table_title(t, "Abcd"); /* len == L: no dashes either */
    sp__table_separator(t);
    sp__table_header(t, (const char *const[]){"Header"});
    sp__table_row(t, (const char *const[]){"ab"});
    sp__table_separator(t);
    check_render("Much Longer Title\n"
                 "Abcd\n"
                 "----  \n"
                 "Header  \n"
                 "ab    \n"
                 "----  \n",
                 t);
    sp__table_free(t);
}

/* Kernel layout with no rows: Name 90, Calls 6, GPU 40, all growing but
 * with nothing to grow to: L = 92 + 8 + 42 - 2 = 140; "Kernel Summary"
 * (14): 63 dashes each side. */
static void test_table_without_rows(void)
{
    sp__table *t = sp__table_new(3);
    sp__table_column(t, 0, 90, 1);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_title(t, "Kernel Summary");
    sp__table_text(t, "Time unit: us");
    sp__table_separator(t);
    sp__table_header(t, (const char *const[]){"Name", "Calls",
                                               "GPU Total / Avg / Max / Min / Ratio(%)"});
    sp__table_separator(t);
    sp__table_separator(t);
    sp__table_blank(t);
    sp__table_blank(t);
    check_render(
        "---------------------------------------------------------------Kernel Summary---------------------------------------------------------------\n"
        "Time unit: us\n"
        "------------------------------------------------------------------------------------------  ------  ----------------------------------------  \n"
        "Name                                                                                        Calls   GPU Total / Avg / Max / Min / Ratio(%)    \n"
        "------------------------------------------------------------------------------------------  ------  ----------------------------------------  \n"
        "------------------------------------------------------------------------------------------  ------  ----------------------------------------  \n"
        "\n"
        "\n",
        t);
    sp__table_free(t);
}

/* A table of zero columns is refused; an unconfigured column grows from 0. */
static void test_table_default_columns(void)
{
    CHECK(sp__table_new(0) == NULL);
    sp__table *t = sp__table_new(2);
    sp__table_row(t, (const char *const[]){"abc", NULL}); /* NULL stored as "" */
    CHECK_EQ(3, sp__table_width(t, 0));
    CHECK_EQ(0, sp__table_width(t, 1));
    check_render("abc    \n", t);
    sp__table_free(t);
    sp__table_free(NULL);
}

/* Widths count UTF-8 code points, as Python's padding does: "µs" is 2. */
static void test_table_counts_code_points(void)
{
    sp__table *t = sp__table_new(2);
    sp__table_column(t, 0, 4, 1);
    sp__table_column(t, 1, 1, 1);
    sp__table_row(t, (const char *const[]){"\xc2\xb5s", "x"});
    sp__table_row(t, (const char *const[]){"\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5", "y"});
    CHECK_EQ(5, sp__table_width(t, 0));
    check_render("\xc2\xb5s     x  \n"
                 "\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5  y  \n",
                 t);
    sp__table_free(t);
}

static void test_table_data_accessors(void)
{
    sp__table *t = sp__table_new(3);
    sp__table_column(t, 0, 10, 0);
    sp__table_column(t, 1, 6, 1);
    sp__table_title(t, "Title");
    sp__table_text(t, "Time unit: ms");
    sp__table_separator(t);
    sp__table_header(t, (const char *const[]){"Name", "Calls", "Ratio"});
    sp__table_row(t, (const char *const[]){"op", "1234567", "50.00"});
    sp__table_dashes(t);
    sp__table_blank(t);

    CHECK_EQ(7, sp__table_lines(t));
    CHECK_EQ(SP__LINE_TITLE, sp__table_line_kind(t, 0));
    CHECK_EQ(SP__LINE_TEXT, sp__table_line_kind(t, 1));
    CHECK_EQ(SP__LINE_SEPARATOR, sp__table_line_kind(t, 2));
    CHECK_EQ(SP__LINE_HEADER, sp__table_line_kind(t, 3));
    CHECK_EQ(SP__LINE_ROW, sp__table_line_kind(t, 4));
    CHECK_EQ(SP__LINE_DASHES, sp__table_line_kind(t, 5));
    CHECK_EQ(SP__LINE_BLANK, sp__table_line_kind(t, 6));
    CHECK_EQ(SP__LINE_BLANK, sp__table_line_kind(t, 99));

    CHECK_STR_EQ("Title", sp__table_cell(t, 0, 0));
    CHECK_STR_EQ("", sp__table_cell(t, 0, 1));
    CHECK_STR_EQ("Time unit: ms", sp__table_cell(t, 1, 0));
    CHECK_STR_EQ("", sp__table_cell(t, 2, 0));
    CHECK_STR_EQ("Name", sp__table_cell(t, 3, 0));
    CHECK_STR_EQ("Ratio", sp__table_cell(t, 3, 2));
    CHECK_STR_EQ("op", sp__table_cell(t, 4, 0));
    CHECK_STR_EQ("1234567", sp__table_cell(t, 4, 1));
    CHECK_STR_EQ("50.00", sp__table_cell(t, 4, 2));
    CHECK_STR_EQ("", sp__table_cell(t, 4, 3));
    CHECK_STR_EQ("", sp__table_cell(t, 5, 0));
    CHECK_STR_EQ("", sp__table_cell(t, 99, 0));

    CHECK_EQ(10, sp__table_width(t, 0));
    CHECK_EQ(7, sp__table_width(t, 1));
    CHECK_EQ(5, sp__table_width(t, 2)); /* unconfigured: grows from 0 */
    CHECK_EQ(0, sp__table_width(t, 3));
    /* Reconfiguring after the rows still sees them. */
    sp__table_column(t, 0, 1, 1);
    CHECK_EQ(2, sp__table_width(t, 0));
    sp__table_column(t, 1, 3, 0);
    CHECK_EQ(3, sp__table_width(t, 1));
    CHECK(!sp__table_failed(t));
    sp__table_free(t);
}

static void test_table_fmt_time_units(void)
{
    char s[64];
    sp__fmt_time(s, sizeof s, 1234567, "ms");
    CHECK_STR_EQ("1.23", s);
    sp__fmt_time(s, sizeof s, 1235000, "ms"); /* binary 1.235 is just above */
    CHECK_STR_EQ("1.24", s);
    sp__fmt_time(s, sizeof s, 2500000000.0, "s");
    CHECK_STR_EQ("2.50", s);
    sp__fmt_time(s, sizeof s, 1234567, "us");
    CHECK_STR_EQ("1234.57", s);
    sp__fmt_time(s, sizeof s, 42, "ns");
    CHECK_STR_EQ("42.00", s);
    sp__fmt_time(s, sizeof s, 0, "ms");
    CHECK_STR_EQ("0.00", s);
    sp__fmt_time(s, sizeof s, 4945150000.0, "ms");
    CHECK_STR_EQ("4945.15", s);
    sp__fmt_time(s, sizeof s, 3000000, NULL); /* default unit: ms */
    CHECK_STR_EQ("3.00", s);
    sp__fmt_time(s, sizeof s, INFINITY, "ms");
    CHECK_STR_EQ("-", s);
    sp__fmt_time(s, sizeof s, -INFINITY, "ms");
    CHECK_STR_EQ("-", s);
    sp__fmt_time(s, sizeof s, NAN, "us");
    CHECK_STR_EQ("0.00", s);
    sp__fmt_time(s, 4, 123456789, "ns"); /* cut to size, NUL-terminated */
    CHECK_STR_EQ("123", s);
}

static void test_table_fmt_ratio(void)
{
    char s[64];
    sp__fmt_ratio(s, sizeof s, 1, 4);
    CHECK_STR_EQ("25.00", s);
    sp__fmt_ratio(s, sizeof s, 2, 3);
    CHECK_STR_EQ("66.67", s);
    sp__fmt_ratio(s, sizeof s, 5, 5);
    CHECK_STR_EQ("100.00", s);
    sp__fmt_ratio(s, sizeof s, 5, 0);
    CHECK_STR_EQ("0.00", s);
    sp__fmt_ratio(s, sizeof s, 0, 0);
    CHECK_STR_EQ("0.00", s);
    sp__fmt_ratio(s, sizeof s, NAN, 3);
    CHECK_STR_EQ("0.00", s);
    sp__fmt_ratio(s, sizeof s, 3, NAN);
    CHECK_STR_EQ("0.00", s);
    sp__fmt_ratio(s, sizeof s, INFINITY, 3);
    CHECK_STR_EQ("0.00", s);
    sp__fmt_ratio(s, sizeof s, 1e308, 1e-308); /* overflows to inf */
    CHECK_STR_EQ("0.00", s);
}

static void test_table_fmt_composite(void)
{
    char s[256];
    /* Model Summary's ProfileStep row: 8 calls. */
    sp__fmt_composite(s, sizeof s, 4945150000.0, 8, 839150000.0, 386340000.0, 1, 1, "ms");
    CHECK_STR_EQ("4945.15 / 618.14 / 839.15 / 386.34 / 100.00", s);
    /* No calls: avg 0; an empty min prints "-"; zero denominator. */
    sp__fmt_composite(s, sizeof s, 0, 0, 0, INFINITY, 0, 0, "us");
    CHECK_STR_EQ("0.00 / 0.00 / 0.00 / - / 0.00", s);
    sp__fmt_composite(s, sizeof s, 3000, 2, 2000, 1000, 1, 3, "us");
    CHECK_STR_EQ("3.00 / 1.50 / 2.00 / 1.00 / 33.33", s);
    sp__fmt_composite(s, sizeof s, NAN, 1, NAN, NAN, NAN, NAN, "s");
    CHECK(strstr(s, "nan") == NULL && strstr(s, "inf") == NULL);
    CHECK_STR_EQ("0.00 / 0.00 / 0.00 / 0.00 / 0.00", s);
}

/* Builds a small table: title, separator, header, 20 rows (the line array
 * grows past its first 16), dashes. Returns the table (maybe NULL). */
static sp__table *build_small(void)
{
    sp__table *t = sp__table_new(2);
    sp__table_column(t, 0, 8, 1);
    sp__table_title(t, "Small");
    sp__table_separator(t);
    sp__table_header(t, (const char *const[]){"Name", "Calls"});
    for (int i = 0; i < 20; i++) sp__table_row(t, (const char *const[]){"row", "1"});
    sp__table_dashes(t);
    return t;
}

static void test_table_survives_every_allocation_failure(void)
{
    sp__alloc_fail_at(0);
    sp__table *full = build_small();
    uint64_t total = sp__alloc_fail_at(0);
    CHECK(total > 40);
    CHECK(!sp__table_failed(full));
    CHECK_EQ(24, sp__table_lines(full));
    sp__table_free(full);

    for (uint64_t nth = 1; nth <= total; nth++) {
        sp__alloc_fail_at(nth);
        sp__table *t = build_small();
        sp__alloc_fail_at(0);
        if (nth <= 2) { /* the table itself or its columns */
            CHECK(t == NULL);
            continue;
        }
        CHECK(t != NULL);
        CHECK(sp__table_failed(t));
        CHECK(sp__table_lines(t) < 24);
        /* Stored lines stay whole and readable; render flags the buffer. */
        for (size_t i = 0; i < sp__table_lines(t); i++) CHECK(sp__table_cell(t, i, 0) != NULL);
        sp__buf b;
        sp__buf_init(&b);
        sp__table_render(t, &b);
        CHECK(b.failed);
        sp__buf_fini(&b);
        sp__table_free(t);
    }
}

int main(void)
{
    RUN_TEST(test_table_renders_overview_layout);
    RUN_TEST(test_table_grows_columns_to_longest_cell);
    RUN_TEST(test_table_overflows_fixed_column);
    RUN_TEST(test_table_title_longer_than_line);
    RUN_TEST(test_table_without_rows);
    RUN_TEST(test_table_default_columns);
    RUN_TEST(test_table_counts_code_points);
    RUN_TEST(test_table_data_accessors);
    RUN_TEST(test_table_fmt_time_units);
    RUN_TEST(test_table_fmt_ratio);
    RUN_TEST(test_table_fmt_composite);
    RUN_TEST(test_table_survives_every_allocation_failure);
    return TEST_SUMMARY();
}
