/* sys.h: the operating-system layer every stage uses: allocation (with
 * failure injection for tests), error reporting, growable byte buffers,
 * threads and files. It depends on nothing else in stepprof. */
#ifndef SP_SYS_H
#define SP_SYS_H

#include "stepprof/stepprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SP__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define SP__LIKELY(x) __builtin_expect(!!(x), 1)
#define SP__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SP__PRINTF(fmt, args)
#define SP__LIKELY(x) (x)
#define SP__UNLIKELY(x) (x)
#endif

/* ---- alloc.c: every allocation goes through here ---- */
void *sp__alloc(size_t bytes);              /* zeroed, NULL on failure */
void *sp__realloc(void *ptr, size_t bytes); /* NULL on failure, ptr kept */
void sp__free(void *ptr);
char *sp__strdup(const char *s);
char *sp__strndup(const char *s, size_t len);
/* Zeroed pages straight from the kernel, followed by one inaccessible guard
 * page, so that a write past the end faults. Unlike sp__alloc, safe to call
 * from a signal handler that interrupted malloc. NULL on failure (counted by
 * the same failure injection). */
void *sp__alloc_pages(size_t bytes);
void sp__free_pages(void *pages, size_t bytes);
/* Tests: make the nth allocation from now fail (1 = the next one); 0 turns
 * injection off. Returns how many allocations were made since the last call. */
uint64_t sp__alloc_fail_at(uint64_t nth);

/* ---- error.c: thread-local last error ---- */
/* Sets the calling thread's last error to the formatted message and returns
 * code, so that `return sp__fail(SP_EINVAL, "...")` reads naturally. */
sp_status sp__fail(sp_status code, const char *fmt, ...) SP__PRINTF(2, 3);
void sp__clear_error(void);

/* ---- buf.c: growable byte buffer ---- */
/* A buffer that failed to grow stays valid with its old contents and sets
 * `failed`, so a writer can check once at the end. */
typedef struct sp__buf {
    char *data;
    size_t len;
    size_t cap;
    int failed;
} sp__buf;

void sp__buf_init(sp__buf *b);
void sp__buf_fini(sp__buf *b);
int sp__buf_reserve(sp__buf *b, size_t extra); /* 0 on success */
void sp__buf_append(sp__buf *b, const void *data, size_t len);
void sp__buf_puts(sp__buf *b, const char *s);
void sp__buf_putc(sp__buf *b, char c);
void sp__buf_printf(sp__buf *b, const char *fmt, ...) SP__PRINTF(2, 3);
/* NUL-terminated view of the contents ("" if empty or failed to grow). */
const char *sp__buf_cstr(sp__buf *b);

#endif
