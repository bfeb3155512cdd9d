/* test_kinds.c: the copy and memory kind spellings of kinds.c round-trip
 * through their parsers, out-of-range indexes and unknown or NULL strings
 * give "Unknown", and the order is the one trace-format.md §6 fixes. */
#include "check.h"
#include "gpu.h"

static void test_kinds_copy_round_trip(void)
{
    for (unsigned k = 0; k < SP__GPU_COPY_KINDS; k++)
        CHECK_EQ(k, sp__gpu_copy_kind_parse(sp__gpu_copy_kind_name(k)));
}

static void test_kinds_memory_round_trip(void)
{
    for (unsigned k = 0; k < SP__GPU_MEMORY_KINDS; k++)
        CHECK_EQ(k, sp__gpu_memory_kind_parse(sp__gpu_memory_kind_name(k)));
}

static void test_kinds_order_matches_trace_format(void)
{
    static const char *const copies[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                         "DtoA", "DtoD", "HtoH", "PtoP", "Unknown"};
    static const char *const memories[] = {"Pageable", "Pinned", "Device", "Array",
                                           "Managed", "Device Static", "Managed Static", "Unknown"};
    for (unsigned k = 0; k < SP__GPU_COPY_KINDS; k++) CHECK_STR_EQ(copies[k], sp__gpu_copy_kind_name(k));
    for (unsigned k = 0; k < SP__GPU_MEMORY_KINDS; k++) CHECK_STR_EQ(memories[k], sp__gpu_memory_kind_name(k));
}

static void test_kinds_unknown_values(void)
{
    CHECK_STR_EQ("Unknown", sp__gpu_copy_kind_name(SP__GPU_COPY_KINDS));
    CHECK_STR_EQ("Unknown", sp__gpu_copy_kind_name(1000));
    CHECK_STR_EQ("Unknown", sp__gpu_memory_kind_name(SP__GPU_MEMORY_KINDS));
    CHECK_EQ(SP__GPU_COPY_KINDS - 1, sp__gpu_copy_kind_parse("HtoX"));
    CHECK_EQ(SP__GPU_COPY_KINDS - 1, sp__gpu_copy_kind_parse(NULL));
    CHECK_EQ(SP__GPU_MEMORY_KINDS - 1, sp__gpu_memory_kind_parse("pinned")); /* case matters */
    CHECK_EQ(SP__GPU_MEMORY_KINDS - 1, sp__gpu_memory_kind_parse(NULL));
}

int main(void)
{
    RUN_TEST(test_kinds_copy_round_trip);
    RUN_TEST(test_kinds_memory_round_trip);
    RUN_TEST(test_kinds_order_matches_trace_format);
    RUN_TEST(test_kinds_unknown_values);
    return TEST_SUMMARY();
}
