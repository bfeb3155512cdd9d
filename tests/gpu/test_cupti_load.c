/* test_cupti_load.c: the loaders of cupti_load.c on whatever this machine
 * has. Without a driver, sp__cuda_load fails with one line naming
 * libcuda.so.1; with one, its required slots are filled. libcupti either
 * loads (required slots filled, version at least the minimum) or the line
 * says to add CUPTI's lib64 to LD_LIBRARY_PATH. Skipped without CUPTI's
 * headers. */
#ifndef SP_HAVE_CUPTI
#include <stdio.h>

int main(void)
{
    printf("skip: built without CUPTI's headers\n");
    return 77;
}
#else

#include "check.h"
#include "cupti_load.h"

static void check_line(const char *why)
{
    CHECK(strncmp(why, SP__GPU_OFF, strlen(SP__GPU_OFF)) == 0);
    CHECK(strchr(why, '\n') == NULL);
    CHECK(strstr(why, "recording the CPU only") != NULL);
}

static void test_cupti_load_driver(void)
{
    sp__cuda_api cu;
    char why[512] = "";
    if (sp__cuda_load(&cu, why, sizeof why) == 0) {
        printf("note: libcuda.so.1 loaded\n");
        CHECK(cu.Init && cu.DeviceGetCount && cu.DeviceGet && cu.DeviceGetAttribute);
        CHECK(cu.CtxGetCurrent && cu.CtxSynchronize && cu.DeviceTotalMem && cu.DeviceGetName);
        return;
    }
    printf("reason: %s\n", why);
    check_line(why);
    CHECK(strstr(why, "libcuda.so.1") != NULL);
    CHECK(cu.Init == NULL);
}

static void test_cupti_load_cupti(void)
{
    sp__cupti_api api;
    char why[512] = "";
    if (sp__cupti_load(&api, why, sizeof why) != 0) {
        printf("reason: %s\n", why);
        check_line(why);
        CHECK(strstr(why, "LD_LIBRARY_PATH") != NULL || strstr(why, "CUPTI") != NULL);
        return;
    }
    CHECK(api.handle != NULL);
    CHECK(api.version >= SP__CUPTI_MIN_VERSION);
    CHECK(api.Subscribe && api.ActivityEnable && api.ActivityFlushAll && api.ActivityGetNextRecord);
    CHECK(api.ActivityGetNumDroppedRecords && api.ActivityRegisterCallbacks && api.GetCallbackName);
    CHECK_STR_EQ("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
                 sp__cupti_result_name(&api, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED));
    /* Loading twice finds the library already in the process. */
    sp__cupti_api again;
    CHECK_EQ(0, sp__cupti_load(&again, why, sizeof why));
    CHECK(again.handle == api.handle);
}

static void test_cupti_load_result_name_without_library(void)
{
    CHECK_STR_EQ("CUPTI error 39", sp__cupti_result_name(NULL, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED));
}

int main(void)
{
    RUN_TEST(test_cupti_load_driver);
    RUN_TEST(test_cupti_load_cupti);
    RUN_TEST(test_cupti_load_result_name_without_library);
    return TEST_SUMMARY();
}

#endif /* SP_HAVE_CUPTI */
