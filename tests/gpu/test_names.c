/* test_names.c: the interned names of a GPU batch (names.c): equal strings
 * give one stored copy that outlives the caller's string, plain and kernel
 * names stay apart, the table grows past many names and long ones, and a
 * failed allocation returns NULL and leaves the store usable. Skipped
 * without CUPTI's headers (names.c is part of the CUPTI recorder). */
#ifndef SP_HAVE_CUPTI
#include <stdio.h>

int main(void)
{
    printf("skip: built without CUPTI's headers\n");
    return 77;
}
#else

#include "check.h"
#include "cupti_records.h"
#include "sys.h"

#include <stdlib.h>

static void test_names_intern_stores_once(void)
{
    sp__gpu_names *n = sp__gpu_names_create();
    CHECK(n != NULL);
    char a[] = "cudaLaunchKernel_v7000";
    const char *x = sp__gpu_names_intern(n, a);
    CHECK_STR_EQ("cudaLaunchKernel_v7000", x);
    CHECK(x != a);
    a[0] = 'X'; /* the caller's string changes; the stored one does not */
    CHECK_STR_EQ("cudaLaunchKernel_v7000", x);
    CHECK(x == sp__gpu_names_intern(n, "cudaLaunchKernel_v7000"));
    CHECK(x != sp__gpu_names_intern(n, "cudaMemcpyAsync_v3020"));
    CHECK(sp__gpu_names_intern(n, NULL) == NULL);
    CHECK(sp__gpu_names_intern(NULL, "x") == NULL);
    sp__gpu_names_destroy(n);
    sp__gpu_names_destroy(NULL);
}

static void test_names_plain_and_kernel_apart(void)
{
    sp__gpu_names *n = sp__gpu_names_create();
    const char *k = sp__gpu_names_kernel(n, "relu_kernel");
    const char *p = sp__gpu_names_intern(n, "relu_kernel");
    CHECK_STR_EQ("relu_kernel", k);
    CHECK_STR_EQ("relu_kernel", p);
    CHECK(k == sp__gpu_names_kernel(n, "relu_kernel"));
    CHECK(p == sp__gpu_names_intern(n, "relu_kernel"));
    sp__gpu_names_destroy(n);
}

static void test_names_grow_many_and_long(void)
{
    sp__gpu_names *n = sp__gpu_names_create();
    enum { COUNT = 5000 };
    const char **kept = calloc(COUNT, sizeof *kept);
    char name[64];
    for (int i = 0; i < COUNT; i++) {
        snprintf(name, sizeof name, "kernel_%d", i);
        kept[i] = sp__gpu_names_intern(n, name);
        CHECK(kept[i] != NULL);
    }
    size_t long_len = 200 * 1024; /* bigger than a chunk */
    char *big = malloc(long_len + 1);
    memset(big, 'a', long_len);
    big[long_len] = '\0';
    const char *b = sp__gpu_names_intern(n, big);
    CHECK(b != NULL && strlen(b) == long_len);
    for (int i = 0; i < COUNT; i++) {
        snprintf(name, sizeof name, "kernel_%d", i);
        CHECK(kept[i] == sp__gpu_names_intern(n, name));
    }
    CHECK(b == sp__gpu_names_intern(n, big));
    free(big);
    free(kept);
    sp__gpu_names_destroy(n);
}

static void test_names_allocation_failure(void)
{
    sp__alloc_fail_at(1);
    CHECK(sp__gpu_names_create() == NULL);
    sp__alloc_fail_at(2);
    CHECK(sp__gpu_names_create() == NULL);
    sp__alloc_fail_at(0);
    sp__gpu_names *n = sp__gpu_names_create();
    sp__alloc_fail_at(1);
    CHECK(sp__gpu_names_intern(n, "a") == NULL);
    sp__alloc_fail_at(0);
    CHECK_STR_EQ("a", sp__gpu_names_intern(n, "a"));
    sp__gpu_names_destroy(n);
}

int main(void)
{
    RUN_TEST(test_names_intern_stores_once);
    RUN_TEST(test_names_plain_and_kernel_apart);
    RUN_TEST(test_names_grow_many_and_long);
    RUN_TEST(test_names_allocation_failure);
    return TEST_SUMMARY();
}

#endif /* SP_HAVE_CUPTI */
