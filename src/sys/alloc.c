/* alloc.c: the one place stepprof allocates memory. Routing every allocation
 * here lets tests make the Nth allocation fail and check that each caller
 * turns that into SP_ENOMEM without crashing or leaking. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "sys.h"

#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h> /* malloc_usable_size */
#endif
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic uint64_t alloc_count;
static _Atomic uint64_t fail_at; /* alloc_count value that fails; 0 = never */

static int should_fail(void)
{
    uint64_t n = ++alloc_count;
    uint64_t target = fail_at;
    return target != 0 && n == target;
}

uint64_t sp__alloc_fail_at(uint64_t nth)
{
    uint64_t made = alloc_count;
    alloc_count = 0;
    fail_at = nth;
    return made;
}

/* Arrays this large (a loaded trace's events, the summary's per-event
 * tables) are asked to be backed by 2 MiB pages where the kernel offers
 * them on request (transparent huge pages in "madvise" mode): filling
 * one then costs one fault per 2 MiB instead of per 4 KiB, and walking it
 * fewer TLB misses. At most one huge page's worth of memory more per array. */
#define HUGE_HINT_BYTES ((size_t)2 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void *hint_huge(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE)
    if (p && bytes >= HUGE_HINT_BYTES) {
        uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
        if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#else
    (void)bytes;
#endif
    return p;
}

void *sp__alloc(size_t bytes)
{
    if (should_fail()) return NULL;
    return hint_huge(calloc(1, bytes ? bytes : 1), bytes);
}

void *sp__realloc(void *ptr, size_t bytes)
{
    if (should_fail()) return NULL;
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    /* A large array that grows: the new block is hinted before the old
     * contents are copied in, since realloc copying them into a block
     * from the heap would fault every 4 KiB of it first. */
    size_t old = ptr && bytes >= HUGE_HINT_BYTES ? malloc_usable_size(ptr) : SIZE_MAX;
    if (old < bytes) {
        void *grown = hint_huge(malloc(bytes), bytes);
        if (!grown) return NULL;
        memcpy(grown, ptr, old);
        free(ptr);
        return grown;
    }
#endif
    return hint_huge(realloc(ptr, bytes ? bytes : 1), bytes);
}

void sp__free(void *ptr) { free(ptr); }

static size_t round_to_pages(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page;
}

void *sp__alloc_pages(size_t bytes)
{
    if (should_fail()) return NULL;
    size_t mapped = round_to_pages(bytes ? bytes : 1);
    size_t guard = round_to_pages(1);
    char *p = mmap(NULL, mapped + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (mprotect(p + mapped, guard, PROT_NONE) != 0) {
        munmap(p, mapped + guard);
        return NULL;
    }
    return p;
}

void sp__free_pages(void *pages, size_t bytes)
{
    if (pages) munmap(pages, round_to_pages(bytes ? bytes : 1) + round_to_pages(1));
}

char *sp__strndup(const char *s, size_t len)
{
    char *copy = sp__alloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

char *sp__strdup(const char *s) { return sp__strndup(s, strlen(s)); }
