/* buf.c: a growable byte buffer used by writers and name tables. Growth
 * failure is sticky (`failed`), so callers append freely and check once. */
#include "sys.h"

#include <stdio.h>
#include <string.h>

void sp__buf_init(sp__buf *b) { memset(b, 0, sizeof *b); }

void sp__buf_fini(sp__buf *b)
{
    sp__free(b->data);
    sp__buf_init(b);
}

int sp__buf_reserve(sp__buf *b, size_t extra)
{
    if (b->failed) return -1;
    if (extra <= b->cap - b->len && b->data) return 0;
    size_t need = b->len + extra + 1; /* room for a terminator */
    if (need < b->len) goto fail;     /* overflow */
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) goto fail;
        cap *= 2;
    }
    char *data = sp__realloc(b->data, cap);
    if (!data) goto fail;
    b->data = data;
    b->cap = cap - 1;
    return 0;
fail:
    b->failed = 1;
    return -1;
}

void sp__buf_append(sp__buf *b, const void *data, size_t len)
{
    if (len == 0 || sp__buf_reserve(b, len) != 0) return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

void sp__buf_puts(sp__buf *b, const char *s) { sp__buf_append(b, s, strlen(s)); }

void sp__buf_putc(sp__buf *b, char c)
{
    if (sp__buf_reserve(b, 1) != 0) return;
    b->data[b->len++] = c;
}

void sp__buf_printf(sp__buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sp__buf_append(b, small, (size_t)n);
        return;
    }
    if (sp__buf_reserve(b, (size_t)n) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *sp__buf_cstr(sp__buf *b)
{
    if (!b->data) return "";
    b->data[b->len] = '\0';
    return b->data;
}
