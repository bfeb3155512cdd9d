/* check.h: the assertion macros of stepprof's C tests. A failed check prints
 * the file, line, expression and both values, and marks the test failed; the
 * test goes on so one run shows every failure. RUN_TEST runs a test function
 * and TEST_SUMMARY prints the "N passed, N failed" closing line that the CI
 * reads, then returns the exit code. */
#ifndef SP_TESTS_CHECK_H
#define SP_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check__failed_in_test;
static int check__passed, check__failed;

#define CHECK_FAIL_(fmt, ...)                                                  \
    do {                                                                       \
        fprintf(stderr, "%s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__);  \
        check__failed_in_test = 1;                                             \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) CHECK_FAIL_("CHECK(%s) failed", #cond);                   \
    } while (0)

#define CHECK_EQ(expected, actual)                                             \
    do {                                                                       \
        long long check__e = (long long)(expected);                            \
        long long check__a = (long long)(actual);                              \
        if (check__e != check__a)                                              \
            CHECK_FAIL_("CHECK_EQ(%s, %s): expected %lld, got %lld", #expected, \
                        #actual, check__e, check__a);                          \
    } while (0)

#define CHECK_U64_EQ(expected, actual)                                         \
    do {                                                                       \
        uint64_t check__e = (uint64_t)(expected);                              \
        uint64_t check__a = (uint64_t)(actual);                                \
        if (check__e != check__a)                                              \
            CHECK_FAIL_("CHECK_U64_EQ(%s, %s): expected %" PRIu64 ", got %" PRIu64, \
                        #expected, #actual, check__e, check__a);               \
    } while (0)

#define CHECK_STR_EQ(expected, actual)                                         \
    do {                                                                       \
        const char *check__e = (expected);                                     \
        const char *check__a = (actual);                                       \
        if (!check__e || !check__a || strcmp(check__e, check__a) != 0)         \
            CHECK_FAIL_("CHECK_STR_EQ(%s, %s): expected \"%s\", got \"%s\"",   \
                        #expected, #actual, check__e ? check__e : "(null)",    \
                        check__a ? check__a : "(null)");                       \
    } while (0)

#define CHECK_MEM_EQ(expected, expected_len, actual, actual_len)               \
    do {                                                                       \
        size_t check__el = (expected_len), check__al = (actual_len);           \
        if (check__el != check__al ||                                          \
            memcmp((expected), (actual), check__el) != 0)                      \
            CHECK_FAIL_("CHECK_MEM_EQ(%s, %s): expected %zu bytes \"%.*s\", "  \
                        "got %zu bytes \"%.*s\"",                              \
                        #expected, #actual, check__el, (int)check__el,         \
                        (const char *)(expected), check__al, (int)check__al,   \
                        (const char *)(actual));                               \
    } while (0)

#define CHECK_OK(call)                                                         \
    do {                                                                       \
        int check__s = (int)(call);                                            \
        if (check__s != 0)                                                     \
            CHECK_FAIL_("CHECK_OK(%s): status %d (%s)", #call, check__s,       \
                        sp_last_error());                                      \
    } while (0)

#define RUN_TEST(fn)                                                           \
    do {                                                                       \
        check__failed_in_test = 0;                                             \
        fn();                                                                  \
        if (check__failed_in_test) {                                           \
            fprintf(stderr, "FAIL %s\n", #fn);                                 \
            check__failed++;                                                   \
        } else {                                                               \
            printf("ok   %s\n", #fn);                                          \
            check__passed++;                                                   \
        }                                                                      \
    } while (0)

#define TEST_SUMMARY()                                                         \
    (printf("%d passed, %d failed\n", check__passed, check__failed),           \
     check__failed ? 1 : 0)

#endif
