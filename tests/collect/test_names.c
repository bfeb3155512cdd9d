/* test_names.c: the string table of a result (src/collect/names.c). Issue
 * 17: a NUL byte inside a copied name silently ended the name there (the
 * table stores NUL-terminated strings), and nothing counted it. Now each
 * NUL becomes U+FFFD, the bytes after it are kept, the name counts as cut,
 * and the same bytes intern to the same id. */
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"
#include "utf8.h"

#include <string.h>

static void test_names_nul_is_replaced_and_flagged(void)
{
    sp__names n;
    CHECK_EQ(0, sp__names_init(&n));
    uint32_t id = sp__names_from_bytes(&n, "ab\0cd\0", 6);
    CHECK_STR_EQ("ab\xef\xbf\xbd" "cd\xef\xbf\xbd", sp__names_get(&n, id));
    CHECK(n.fixes[id] & SP__UTF8_CUT);
    CHECK_EQ(id, sp__names_from_bytes(&n, "ab\0cd\0", 6)); /* interned once */
    uint32_t plain = sp__names_from_bytes(&n, "ab", 2);
    CHECK(plain != id);
    CHECK_STR_EQ("ab", sp__names_get(&n, plain));
    CHECK_EQ(0, n.fixes[plain]);
    /* With invalid UTF-8 in the same name: both repairs. */
    uint32_t both = sp__names_from_bytes(&n, "x\xff\0y", 4);
    CHECK_STR_EQ("x\xef\xbf\xbd\xef\xbf\xbdy", sp__names_get(&n, both));
    CHECK(n.fixes[both] & SP__UTF8_CUT);
    CHECK(n.fixes[both] & SP__UTF8_INVALID);
    sp__names_fini(&n);
}

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

/* Through the public API: a copied name with a NUL in it is recorded
 * whole, made visible and counted as names_cut. */
static void test_names_nul_in_copied_name_is_counted(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    if (!p) return;
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, "left\0right", 10);
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (r) {
        int found = 0;
        sp_event_info e;
        for (size_t t = 0; t < sp_result_thread_count(r); t++)
            for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
                found += strcmp(e.name, "left\xef\xbf\xbdright") == 0;
        CHECK_EQ(1, found);
        CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_NAMES_CUT));
    }
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_names_nul_is_replaced_and_flagged);
    RUN_TEST(test_names_nul_in_copied_name_is_counted);
    return TEST_SUMMARY();
}
