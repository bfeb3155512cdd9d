/* alloc.c: the one place stepprof allocates memory. Routing every allocation
 * here lets tests make the Nth allocation fail and check that each caller
 * turns that into SP_ENOMEM without crashing or leaking. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "sys.h"

#include <stdlib.h>
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

void *sp__alloc(size_t bytes)
{
    if (should_fail()) return NULL;
    return calloc(1, bytes ? bytes : 1);
}

void *sp__realloc(void *ptr, size_t bytes)
{
    if (should_fail()) return NULL;
    return realloc(ptr, bytes ? bytes : 1);
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
