/* merge_scan.c: the merge's fast path for one event. Most events lie whole
 * inside the lexer's 64 KiB buffer and hold no escapes, so they are read
 * here straight from memory, without a call per token. Anything this
 * reader is unsure of (an escape, the buffer's end, deep nesting, a
 * malformed value) makes it give up before consuming a byte, and the
 * event is read again by sp__merge_read_event, which reads every form and
 * words the errors. Both set the same fields of mg_event. */
#include "merge.h"

#include <string.h>

typedef const unsigned char *ptr;

static ptr ws(ptr p, ptr end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* A string without escapes: p at its quote; returns past the closing
 * quote (its text is [p+1, ret-1)), or NULL. */
static ptr str(ptr p, ptr end)
{
    if (p >= end || *p != '"') return NULL;
    /* Most strings (keys, short names) end within 16 bytes: byte by byte.
     * Past that, eight bytes at a time while none is a quote, a backslash
     * or a control byte (the classic zero-byte and less-than tests). */
    ptr stop = end - p > 17 ? p + 17 : end;
    for (p++; p < stop; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\' || *p < 0x20) return NULL;
    }
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (; end - p >= 8; p += 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
        if (((q - ones) & ~q & highs) | ((b - ones) & ~b & highs) |
            ((x - ones * 0x20) & ~x & highs))
            break;
    }
    for (; p < end; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\' || *p < 0x20) return NULL;
    }
    return NULL;
}

static int is_num_char(int c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || (c | 0x20) == 'e';
}

/* A number in one pass: past it, or NULL when it is malformed or reaches
 * end (a number cut by the buffer's end may go on beyond it). */
static ptr num(ptr p, ptr end)
{
    if (p < end && *p == '-') p++;
    ptr d = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    if (p == d || p == end) return NULL;
    if (*p == '.') {
        d = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d || p == end) return NULL;
    }
    if ((*p | 0x20) == 'e') {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d || p == end) return NULL;
    }
    return is_num_char(*p) ? NULL : p;
}

static ptr value(ptr p, ptr end);

/* A value, strings and numbers without a call (most of an event's). */
static inline ptr scalar_or_value(ptr p, ptr end)
{
    if (*p == '"') return str(p, end);
    if (*p == '-' || (*p >= '0' && *p <= '9')) return num(p, end);
    return value(p, end);
}

/* Any value; returns past it, or NULL. Containers are walked with a depth
 * count, as sp__jlex_skip does. */
static ptr value(ptr p, ptr end)
{
    int depth = 0;
    char closers[SP__JSON_MAX_DEPTH];
    for (;;) {
        p = ws(p, end);
        if (p >= end) return NULL;
        int c = *p;
        if (c == '{' || c == '[') {
            if (depth == SP__JSON_MAX_DEPTH) return NULL;
            closers[depth++] = c == '{' ? '}' : ']';
            p = ws(p + 1, end);
            if (p < end && *p == closers[depth - 1]) {
                p++;
                depth--;
            } else {
                if (c == '{') {
                    if (!(p = str(p, end))) return NULL;
                    p = ws(p, end);
                    if (p >= end || *p != ':') return NULL;
                    p++;
                }
                continue;
            }
        } else if (c == '"') {
            if (!(p = str(p, end))) return NULL;
        } else if (c == 't' || c == 'f' || c == 'n') {
            const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t n = strlen(w);
            if ((size_t)(end - p) < n || memcmp(p, w, n) != 0) return NULL;
            p += n;
        } else if (!(p = num(p, end))) {
            return NULL;
        }
        /* after a value: close containers or go to the next element */
        for (;;) {
            if (depth == 0) return p;
            p = ws(p, end);
            if (p >= end) return NULL;
            if (*p == closers[depth - 1]) {
                p++;
                depth--;
                continue;
            }
            if (*p != ',') return NULL;
            p++;
            if (closers[depth - 1] == '}') {
                p = ws(p, end);
                if (!(p = str(p, end))) return NULL;
                p = ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            break;
        }
    }
}

/* s[0..n) is the literal word: the length first, so most keys cost one
 * compare, and a memcmp of a known size the compiler inlines. */
#define EQ(s, n, word) ((n) == sizeof(word) - 1 && memcmp((s), (word), sizeof(word) - 1) == 0)

/* An integer as strtoll reads it whole; 0 on success. */
static int integer(ptr p, ptr end, int64_t *out)
{
    int neg = p < end && *p == '-';
    if (neg) p++;
    if (p == end || end - p > 18) return -1;
    int64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static int us_to_ns(ptr p, ptr end, int64_t *ns)
{
    /* the usual "<digits>.<three digits>" directly; any other form as text */
    ptr q = p;
    int64_t v = 0;
    while (q < end && *q >= '0' && *q <= '9' && q - p < 15)
        v = v * 10 + (*q++ - '0');
    if (q > p && end - q == 4 && q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] >= '0' &&
        q[2] <= '9' && q[3] >= '0' && q[3] <= '9') {
        *ns = v * 1000 + (q[1] - '0') * 100 + (q[2] - '0') * 10 + (q[3] - '0');
        return 0;
    }
    char text[64];
    size_t n = (size_t)(end - p);
    if (n >= sizeof text) return -1;
    memcpy(text, p, n);
    text[n] = '\0';
    return sp__merge_us_to_ns(text, ns);
}

/* The args object at p; NULL to give up. */
static ptr args(ptr p, ptr end, mg_event *ev)
{
    if (*p != '{') return value(p, end);
    p = ws(p + 1, end);
    if (p < end && *p == '}') return p + 1;
    for (;;) {
        ptr k = p, ke = str(p, end);
        if (!ke) return NULL;
        p = ws(ke, end);
        if (p >= end || *p != ':') return NULL;
        p = ws(p + 1, end);
        if (p >= end) return NULL;
        ptr v = p, ve = scalar_or_value(p, end);
        if (!ve) return NULL;
        const unsigned char *key = k + 1;
        size_t kn = (size_t)(ke - k - 2);
        int s = *v == '"';
        ptr t = s ? v + 1 : v; /* the value's text */
        size_t tn = (size_t)(ve - v) - (s ? 2 : 0);
        if (EQ(key, kn, "Event Type")) {
            ev->comm = s && EQ(t, tn, "Communication");
        } else if (EQ(key, kn, "Process Group Name")) {
            if (s || (*v == '-' || (*v >= '0' && *v <= '9')))
                ev->group = sp__merge_hash((const char *)t, tn);
        } else if (EQ(key, kn, "Collective name")) {
            if (s || (*v == '-' || (*v >= '0' && *v <= '9')))
                ev->coll = sp__merge_hash((const char *)t, tn);
        } else if (EQ(key, kn, "seq")) {
            int64_t x;
            if (!s && integer(t, t + tn, &x) == 0 && x >= 0) ev->seq = x;
        } else if (EQ(key, kn, "name") || EQ(key, kn, "labels")) {
            if (s && tn >= 4 && memcmp(t, "GPU ", 4) == 0) ev->gpu_meta = 1;
        }
        p = ws(ve, end);
        if (p >= end) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p = ws(p + 1, end);
    }
}

size_t sp__merge_scan_event(const unsigned char *start, const unsigned char *end, mg_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->seq = -1;
    ptr p = start;
    if (p >= end || *p != '{') return 0;
    p = ws(p + 1, end);
    if (p < end && *p == '}') return (size_t)(p + 1 - start);
    int args_done = 0;
    for (;;) {
        ptr k = p, ke = str(p, end);
        if (!ke) return 0;
        p = ws(ke, end);
        if (p >= end || *p != ':') return 0;
        p = ws(p + 1, end);
        if (p >= end) return 0;
        ptr v = p, ve;
        const unsigned char *key = k + 1;
        size_t kn = (size_t)(ke - k - 2);
        if (EQ(key, kn, "args") && !args_done) {
            args_done = 1;
            ve = args(v, end, ev);
        } else {
            ve = scalar_or_value(v, end);
        }
        if (!ve) return 0;
        int s = *v == '"';
        ptr t = s ? v + 1 : v;
        size_t tn = (size_t)(ve - v) - (s ? 2 : 0);
        int num = *v == '-' || (*v >= '0' && *v <= '9');
        if (kn == 2 && key[0] == 'p' && key[1] == 'h') {
            ev->ph = s && tn ? (char)t[0] : 0;
        } else if (EQ(key, kn, "cat")) {
            ev->gpu_cat = s && (EQ(t, tn, "kernel") || EQ(t, tn, "gpu_memcpy") ||
                                EQ(t, tn, "gpu_memset") || EQ(t, tn, "gpu_user_annotation") ||
                                EQ(t, tn, "Kernel") || EQ(t, tn, "Memcpy") || EQ(t, tn, "Memset"));
        } else if (EQ(key, kn, "name")) {
            if (s && EQ(t, tn, "process_name")) ev->process_meta = 1;
            if (s && EQ(t, tn, "process_sort_index")) ev->process_meta = 2;
            if (s && EQ(t, tn, "process_labels")) ev->process_meta = 3;
        } else if (EQ(key, kn, "pid")) {
            int64_t x;
            ev->pid_kind = num && integer(t, t + tn, &x) == 0 ? 1 : 2;
            ev->pid = ev->pid_kind == 1 ? x : 0;
            ev->pid_at = (size_t)(v - start);
            ev->pid_end = (size_t)(ve - start);
        } else if (kn == 2 && key[0] == 't' && key[1] == 's') {
            if (num && us_to_ns(t, t + tn, &ev->ts_ns) == 0) {
                ev->has_ts = 1;
                ev->ts_at = (size_t)(v - start);
                ev->ts_end = (size_t)(ve - start);
            }
        } else if (EQ(key, kn, "dur")) {
            if (num && us_to_ns(t, t + tn, &ev->dur_ns) == 0) ev->has_dur = 1;
        } else if (kn == 2 && key[0] == 'i' && key[1] == 'd') {
            if (num && integer(t, t + tn, &ev->id) == 0) {
                ev->has_id = 1;
                ev->id_at = (size_t)(v - start);
                ev->id_end = (size_t)(ve - start);
            }
        }
        p = ws(ve, end);
        if (p >= end) return 0;
        if (*p == '}') break;
        if (*p != ',') return 0;
        p = ws(p + 1, end);
    }
    if (ev->ph != 'M' || (ev->process_meta != 1 && ev->process_meta != 3)) ev->gpu_meta = 0;
    return (size_t)(p + 1 - start);
}

int sp__merge_next_event(sp__jlex *lx, mg_event *ev)
{
    if (sp__jlex_peek(lx) == '{') {
        size_t n = sp__merge_scan_event(lx->buf + lx->pos, lx->buf + lx->len, ev);
        if (n) {
            lx->pos += n;
            lx->offset += n;
            return 0;
        }
    }
    return sp__merge_read_event(lx, ev);
}
