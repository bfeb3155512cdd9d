/* test_json_escape.c: checks sp__json_put_string and sp__json_put_double.
 * The strongest checks hand the output to Python's json module, the parser
 * the trace consumers use; they are skipped, with a note, where python3 is
 * not on PATH. Expected numbers are Python's repr() of the same doubles. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */

#include "check.h"
#include "json_escape.h"
#include "sys.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define R "\xEF\xBF\xBD" /* U+FFFD */

/* Quotes s[0..len) into a fresh buffer and compares with want. */
static void check_string(const char *s, size_t len, const char *want)
{
    sp__buf b;
    sp__buf_init(&b);
    sp__json_put_string(&b, s, len);
    CHECK(!b.failed);
    CHECK_MEM_EQ(want, strlen(want), sp__buf_cstr(&b), b.len);
    sp__buf_fini(&b);
}

/* Formats v into a fresh buffer, compares with want and returns the result
 * of sp__json_put_double. */
/* For literals: the length comes from the literal, NULs included. */
#define CHECK_QUOTED(lit, want) check_string(lit, sizeof lit - 1, want)

static int check_double(double v, const char *want)
{
    sp__buf b;
    sp__buf_init(&b);
    int ret = sp__json_put_double(&b, v);
    CHECK_STR_EQ(want, sp__buf_cstr(&b));
    sp__buf_fini(&b);
    return ret;
}

static int have_python(void)
{
    if (system("python3 -c pass >/dev/null 2>&1") == 0) return 1;
    printf("note: python3 not on PATH, skipping the json.load check\n");
    return 0;
}

/* Writes text to a new temp file, runs `python3 -c script file` on it and
 * returns the exit status (0: the script accepted the file). */
static int run_python_on(const char *script, const char *text, size_t len)
{
    char path[] = "/tmp/test_json_escape_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        remove(path);
        return -1;
    }
    int wrote = fwrite(text, 1, len, f) == len;
    wrote &= fclose(f) == 0;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 -c '%s' '%s'", script, path);
    int status = wrote ? system(cmd) : -1;
    remove(path);
    return status;
}

static void test_json_escape_plain_ascii_copied(void)
{
    check_string("", 0, "\"\"");
    check_string(NULL, 0, "\"\"");
    CHECK_QUOTED("aten::matmul (fwd) #3", "\"aten::matmul (fwd) #3\"");
    CHECK_QUOTED("a/b", "\"a/b\""); /* '/' may stay unescaped */
}

static void test_json_escape_quotes_and_backslashes(void)
{
    CHECK_QUOTED("\"", "\"\\\"\"");
    CHECK_QUOTED("\\", "\"\\\\\"");
    CHECK_QUOTED("say \"hi\" C:\\tmp\\", "\"say \\\"hi\\\" C:\\\\tmp\\\\\"");
    CHECK_QUOTED("\\\"", "\"\\\\\\\"\"");
}

static void test_json_escape_every_control_byte(void)
{
    static const char *const want[32] = {
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
        "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
        "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    };
    char quoted[16];
    for (int c = 0; c < 32; c++) {
        char in[3] = {'x', (char)c, 'y'};
        snprintf(quoted, sizeof quoted, "\"x%sy\"", want[c]);
        check_string(in, sizeof in, quoted);
    }
    CHECK_QUOTED("a\0b", "\"a\\u0000b\"");
}

static void test_json_escape_del_and_valid_utf8_pass(void)
{
    CHECK_QUOTED("\x7F", "\"\x7F\"");
    CHECK_QUOTED("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5",
                 "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5\"");
    CHECK_QUOTED(R, "\"" R "\""); /* a literal U+FFFD is just text */
}

static void test_json_escape_invalid_utf8_replaced(void)
{
    CHECK_QUOTED("a\xFF" "b", "\"a" R "b\"");
    CHECK_QUOTED("\xC0\x80", "\"" R R "\"");
    CHECK_QUOTED("\xE2\x82\"", "\"" R "\\\"\""); /* truncated before a quote */
    CHECK_QUOTED("\xF0\x90\x80" "A", "\"" R "A\"");
    CHECK_QUOTED("\xED\xA0\x80\n", "\"" R R R "\\n\"");
    CHECK_QUOTED("ok\xC3\xA9\xFF\xC3\xA9", "\"ok\xC3\xA9" R "\xC3\xA9\"");
}

static void test_json_escape_appends_after_existing_content(void)
{
    sp__buf b;
    sp__buf_init(&b);
    sp__buf_puts(&b, "{\"name\":");
    sp__json_put_string(&b, "x\ty", 3);
    sp__buf_putc(&b, '}');
    CHECK_STR_EQ("{\"name\":\"x\\ty\"}", sp__buf_cstr(&b));
    sp__buf_fini(&b);
}

static void test_json_escape_all_bytes_load_in_python(void)
{
    char all[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    sp__buf b;
    sp__buf_init(&b);
    sp__json_put_string(&b, all, sizeof all);
    CHECK(!b.failed);
    /* The plain parse the brief asks for, then the decoded text checked
     * against Python's own repair of the same bytes. */
    if (have_python()) {
        CHECK_EQ(0, run_python_on("import json,sys; json.load(open(sys.argv[1]))", b.data,
                                  b.len));
        CHECK_EQ(0, run_python_on("import json,sys; s=json.load(open(sys.argv[1],encoding=\"utf-8\")); "
                                  "sys.exit(s != bytes(range(256)).decode(\"utf-8\",\"replace\"))",
                                  b.data, b.len));
    }
    sp__buf_fini(&b);
}

static void test_json_double_shortest_forms(void)
{
    CHECK_EQ(0, check_double(1.25, "1.25"));
    CHECK_EQ(0, check_double(10, "10.0"));
    CHECK_EQ(0, check_double(0.1, "0.1"));
    CHECK_EQ(0, check_double(0, "0.0"));
    CHECK_EQ(0, check_double(-0.0, "-0.0"));
    CHECK_EQ(0, check_double(-2.5, "-2.5"));
    CHECK_EQ(0, check_double(1.0 / 3, "0.3333333333333333"));
    CHECK_EQ(0, check_double(0.0001, "0.0001"));
    CHECK_EQ(0, check_double(0.00001, "1e-05"));
    CHECK_EQ(0, check_double(1e15, "1000000000000000.0"));
    CHECK_EQ(0, check_double(1e16, "1e+16"));
    CHECK_EQ(0, check_double(9007199254740992.0, "9007199254740992.0"));
    CHECK_EQ(0, check_double(1e23, "1e+23"));
    CHECK_EQ(0, check_double(1.7976931348623157e308, "1.7976931348623157e+308"));
    CHECK_EQ(0, check_double(2.2250738585072014e-308, "2.2250738585072014e-308"));
    CHECK_EQ(0, check_double(5e-324, "5e-324"));
    /* 2^-1017: the nearest 16-digit decimal misses, its upper neighbour hits
     * (the nearest 17-digit one would be 7.1202363472230444e-307). */
    CHECK_EQ(0, check_double(7.120236347223045e-307, "7.120236347223045e-307"));
}

static void test_json_double_1e300_round_trips(void)
{
    sp__buf b;
    sp__buf_init(&b);
    CHECK_EQ(0, sp__json_put_double(&b, 1e300));
    CHECK_STR_EQ("1e+300", sp__buf_cstr(&b));
    CHECK(strtod(sp__buf_cstr(&b), NULL) == 1e300);
    sp__buf_fini(&b);
}

static void test_json_double_non_finite_written_as_zero(void)
{
    CHECK_EQ(1, check_double(NAN, "0"));
    CHECK_EQ(1, check_double(-NAN, "0"));
    CHECK_EQ(1, check_double(INFINITY, "0"));
    CHECK_EQ(1, check_double(-INFINITY, "0"));
}

/* Next value of a fixed-seed xorshift64, so failures reproduce. */
static uint64_t next_bits(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return *state = x;
}

static void test_json_double_random_bits_round_trip(void)
{
    uint64_t state = 0x9E3779B97F4A7C15u;
    int failures = 0;
    sp__buf b;
    sp__buf_init(&b);
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = next_bits(&state);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v)) continue;
        b.len = 0;
        sp__json_put_double(&b, v);
        const char *text = sp__buf_cstr(&b);
        double back = strtod(text, NULL);
        if (memcmp(&back, &v, sizeof v) != 0 || strspn(text, "-+.e0123456789") != b.len) {
            if (failures++ < 5) fprintf(stderr, "bad: %s for %a\n", text, v);
        }
    }
    CHECK_EQ(0, failures);
    sp__buf_fini(&b);
}

static void test_json_double_matches_python_repr(void)
{
    if (!have_python()) return;
    uint64_t state = 0x2545F4914F6CDD1Du;
    sp__buf b;
    sp__buf_init(&b);
    for (int i = 0; i < 3000; i++) {
        uint64_t bits = next_bits(&state);
        double v;
        if (i % 3 == 1) bits = (bits % 4096) << 52; /* +-powers of two, +-0 */
        memcpy(&v, &bits, sizeof v);
        if (i % 3 == 2) { /* short decimals, like bandwidths */
            v = (double)(bits % 1000000) / 1000;
            memcpy(&bits, &v, sizeof v);
        }
        if (!isfinite(v)) continue;
        sp__buf_printf(&b, "%016" PRIx64 " ", bits);
        sp__json_put_double(&b, v);
        sp__buf_putc(&b, '\n');
    }
    CHECK(!b.failed);
    CHECK_EQ(0, run_python_on("import struct,sys\n"
                              "for line in open(sys.argv[1]):\n"
                              "    h, t = line.split()\n"
                              "    v = struct.unpack(\"<d\", int(h, 16).to_bytes(8, \"little\"))[0]\n"
                              "    if repr(v) != t: sys.exit(\"%s: %s vs %r\" % (h, t, v))\n",
                              b.data, b.len));
    sp__buf_fini(&b);
}

static void test_json_double_ignores_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"};
    const char *used = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !used; i++)
        used = setlocale(LC_NUMERIC, names[i]);
    if (!used) {
        printf("note: no locale with a decimal comma installed, skipping\n");
        return;
    }
    check_double(1.25, "1.25");
    check_double(1.5e-300, "1.5e-300");
    check_double(0.001, "0.001");
    setlocale(LC_NUMERIC, "C");
}

/* A buffer that cannot grow must leave both writers harmless. */
static void test_json_escape_failed_allocation_is_sticky(void)
{
    sp__buf b;
    sp__buf_init(&b);
    sp__alloc_fail_at(1);
    sp__json_put_string(&b, "a\"\xFF\n", 4);
    CHECK_EQ(0, sp__json_put_double(&b, 1.25));
    sp__alloc_fail_at(0);
    CHECK(b.failed);
    CHECK_EQ(0, b.len);
    sp__buf_fini(&b);
}

int main(void)
{
    RUN_TEST(test_json_escape_plain_ascii_copied);
    RUN_TEST(test_json_escape_quotes_and_backslashes);
    RUN_TEST(test_json_escape_every_control_byte);
    RUN_TEST(test_json_escape_del_and_valid_utf8_pass);
    RUN_TEST(test_json_escape_invalid_utf8_replaced);
    RUN_TEST(test_json_escape_appends_after_existing_content);
    RUN_TEST(test_json_escape_all_bytes_load_in_python);
    RUN_TEST(test_json_double_shortest_forms);
    RUN_TEST(test_json_double_1e300_round_trips);
    RUN_TEST(test_json_double_non_finite_written_as_zero);
    RUN_TEST(test_json_double_random_bits_round_trip);
    RUN_TEST(test_json_double_matches_python_repr);
    RUN_TEST(test_json_double_ignores_locale);
    RUN_TEST(test_json_escape_failed_allocation_is_sticky);
    return TEST_SUMMARY();
}
