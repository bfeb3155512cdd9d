/* json_lex.c: the streaming JSON tokenizer of json_lex.h. Strings are
 * decoded into one reused buffer (a token is at most SP__JSON_MAX_STRING
 * bytes, and usually a name); every other value can be skipped without
 * storing it.
 * Skipping is iterative with an explicit depth count, so hostile nesting
 * costs neither stack nor memory. */
#include "json_lex.h"

#include <errno.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define READ_BYTES ((size_t)1 << 16)

int sp__jlex_error(sp__jlex *lx, const char *what)
{
    if (lx->status == SP_OK)
        lx->status = sp__fail(SP_EFORMAT, "%s: not a valid JSON trace: %s at byte %llu", lx->path, what,
                              (unsigned long long)lx->offset);
    return -1;
}

sp_status sp__jlex_open(sp__jlex *lx, FILE *f, const char *path)
{
    memset(lx, 0, sizeof *lx);
    lx->path = path;
    lx->f = f;
    sp__buf_init(&lx->tok);
    lx->buf = sp__alloc(READ_BYTES + SP__JSON_SLACK);
    lx->raw = sp__alloc(READ_BYTES);
    if (!lx->buf || !lx->raw) {
        sp__jlex_close(lx);
        return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    }
    /* Gzip or not, by the magic (as zlib's gzread tells them). */
    size_t n = fread(lx->raw, 1, READ_BYTES, f);
    if (ferror(f)) {
        sp__jlex_close(lx);
        return sp__fail(SP_EIO, "%s: read error: %s", path, strerror(errno));
    }
    if (n < READ_BYTES) lx->raw_eof = 1;
    if (n >= 2 && lx->raw[0] == 0x1f && lx->raw[1] == 0x8b) {
        lx->gzip = 1;
        if (inflateInit2(&lx->z, 15 + 16) != Z_OK) {
            sp__jlex_close(lx);
            return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
        }
        lx->z_ready = 1;
        lx->z.next_in = lx->raw;
        lx->z.avail_in = (uInt)n;
    } else {
        memcpy(lx->buf, lx->raw, n);
        lx->len = n;
        if (n == 0) lx->eof = 1;
    }
    return SP_OK;
}

void sp__jlex_close(sp__jlex *lx)
{
    if (lx->z_ready) inflateEnd(&lx->z);
    lx->z_ready = 0;
    sp__free(lx->buf);
    sp__free(lx->raw);
    sp__buf_fini(&lx->tok);
    lx->buf = NULL;
    lx->raw = NULL;
}

void sp__jlex_tee(sp__jlex *lx, sp__buf *tee)
{
    if (lx->tee) sp__buf_append(lx->tee, lx->buf + lx->tee_from, lx->pos - lx->tee_from);
    lx->tee = tee;
    lx->tee_from = lx->pos;
}

size_t sp__jlex_tee_pos(const sp__jlex *lx)
{
    return lx->tee->len + (lx->pos - lx->tee_from);
}

static int read_error(sp__jlex *lx)
{
    if (lx->status == SP_OK) lx->status = sp__fail(SP_EIO, "%s: read error: %s", lx->path, strerror(errno));
    return -1;
}

/* Tops up the compressed input to at least want bytes (or to the end of
 * the file). */
static int read_raw(sp__jlex *lx, size_t want)
{
    if (lx->z.avail_in >= want || lx->raw_eof) return 0;
    memmove(lx->raw, lx->z.next_in, lx->z.avail_in);
    lx->z.next_in = lx->raw;
    while (lx->z.avail_in < want && !lx->raw_eof) {
        size_t n = fread(lx->raw + lx->z.avail_in, 1, READ_BYTES - lx->z.avail_in, lx->f);
        if (n == 0) {
            if (ferror(lx->f)) return read_error(lx);
            lx->raw_eof = 1;
        }
        lx->z.avail_in += (uInt)n;
    }
    return 0;
}

/* After a gzip member: another member, or the end (bytes that are not a
 * member are counted as trailing and not read as JSON). 1 at the end. */
static int next_member(sp__jlex *lx)
{
    if (read_raw(lx, 2) != 0) return -1;
    if (lx->z.avail_in == 0) return 1;
    if (lx->z.avail_in >= 2 && lx->z.next_in[0] == 0x1f && lx->z.next_in[1] == 0x8b) {
        inflateReset(&lx->z);
        lx->member_done = 0;
        return 0;
    }
    lx->trailing_bytes += lx->z.avail_in;
    lx->z.avail_in = 0;
    while (!lx->raw_eof) {
        size_t n = fread(lx->raw, 1, READ_BYTES, lx->f);
        if (n == 0) {
            if (ferror(lx->f)) return read_error(lx);
            lx->raw_eof = 1;
        }
        lx->trailing_bytes += n;
    }
    return 1;
}

/* Inflates the next piece into buf; its length, 0 at the end, -1 on error. */
static long inflate_some(sp__jlex *lx)
{
    for (;;) {
        if (lx->member_done) {
            int end = next_member(lx);
            if (end != 0) return end < 0 ? -1 : 0;
        }
        if (read_raw(lx, 1) != 0) return -1;
        lx->z.next_out = lx->buf;
        lx->z.avail_out = (uInt)READ_BYTES;
        uInt in_before = lx->z.avail_in;
        int rc = inflate(&lx->z, Z_NO_FLUSH);
        lx->raw_offset += in_before - lx->z.avail_in;
        size_t produced = READ_BYTES - lx->z.avail_out;
        if (rc == Z_STREAM_END) {
            lx->member_done = 1;
        } else if (rc == Z_MEM_ERROR) {
            if (lx->status == SP_OK) lx->status = sp__fail(SP_ENOMEM, "out of memory loading %s", lx->path);
            return -1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            if (lx->status == SP_OK)
                lx->status = sp__fail(
                    SP_EFORMAT,
                    "%s: not a valid gzip file: the data is corrupt (zlib: %s, at "
                    "compressed byte %llu); compress the trace again or use an uncorrupted copy",
                    lx->path, lx->z.msg ? lx->z.msg : "invalid data",
                    (unsigned long long)lx->raw_offset);
            return -1;
        }
        if (produced > 0) return (long)produced;
        if (!lx->member_done && lx->z.avail_in == 0 && lx->raw_eof) {
            if (lx->status == SP_OK)
                lx->status = sp__fail(
                    SP_EFORMAT,
                    "%s: not a valid gzip file: it is truncated or corrupt (zlib: "
                    "unexpected end of file after %llu compressed bytes, %llu bytes "
                    "decompressed); compress the trace again or use a complete copy",
                    lx->path, (unsigned long long)lx->raw_offset, (unsigned long long)lx->offset);
            return -1;
        }
    }
}

/* Makes buf[pos] valid; 0, or -1 at the end of input or on error. */
static int fill(sp__jlex *lx)
{
    if (lx->pos < lx->len) return 0;
    if (lx->eof || lx->status != SP_OK) return -1;
    if (lx->tee) {
        sp__buf_append(lx->tee, lx->buf + lx->tee_from, lx->len - lx->tee_from);
        lx->tee_from = lx->len;
    }
    long n;
    if (lx->gzip) {
        n = inflate_some(lx);
    } else {
        n = (long)fread(lx->buf, 1, READ_BYTES, lx->f);
        if (n == 0 && ferror(lx->f)) n = read_error(lx);
    }
    if (n < 0) return -1;
    if (n == 0) {
        lx->eof = 1;
        return -1;
    }
    lx->pos = 0;
    lx->len = (size_t)n;
    lx->tee_from = 0;
    if (lx->on_refill) lx->on_refill(lx->user, lx->offset);
    return 0;
}

static int get(sp__jlex *lx)
{
    if (fill(lx) != 0) return -1;
    lx->offset++;
    return lx->buf[lx->pos++];
}

int sp__jlex_peek_slow(sp__jlex *lx)
{
    for (;;) {
        if (fill(lx) != 0) return -1;
        int c = lx->buf[lx->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
        lx->pos++;
        lx->offset++;
    }
}

int sp__jlex_expect_slow(sp__jlex *lx, int c)
{
    int got = sp__jlex_peek(lx);
    if (got != c) {
        char what[40];
        if (got < 0)
            snprintf(what, sizeof what, "input ends where '%c' was expected", c);
        else
            snprintf(what, sizeof what, "'%c' expected", c);
        return sp__jlex_error(lx, what);
    }
    get(lx);
    return 0;
}

static int hex4(sp__jlex *lx, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = get(lx);
        if (c >= '0' && c <= '9')
            v = v * 16 + (unsigned)(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            v = v * 16 + (unsigned)((c | 0x20) - 'a' + 10);
        else
            return sp__jlex_error(lx, "invalid \\u escape");
    }
    *out = v;
    return 0;
}

static void put_utf8(sp__buf *b, unsigned cp)
{
    char s[4];
    size_t n;
    if (cp < 0x80) {
        s[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        s[0] = (char)(0xc0 | cp >> 6);
        s[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xe0 | cp >> 12);
        s[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        s[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        s[0] = (char)(0xf0 | cp >> 18);
        s[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        s[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        s[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    sp__buf_append(b, s, n);
}

/* The first byte in [p, end) that ends a plain run of a string: '"', '\\'
 * or a control character; end if none. Sixteen bytes at a time where SSE2
 * is (every x86-64): names and args are mostly longer than a few bytes. */
static inline const unsigned char *plain_end(const unsigned char *p, const unsigned char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* v <= 0x1f (unsigned) exactly when min(v, 0x1f) == v. */
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
        int bits = _mm_movemask_epi8(hit);
        if (bits) return p + __builtin_ctz((unsigned)bits);
        p += 16;
    }
#endif
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20)
        p++;
    return p;
}

/* Reads a string (the opening quote not yet consumed) into tok, or only
 * checks it when keep is 0. */
static int string(sp__jlex *lx, int keep)
{
    if (sp__jlex_expect(lx, '"') != 0) return -1;
    sp__buf *b = &lx->tok;
    b->len = 0;
    if (lx->pos < lx->len) {
        /* The usual string, plain and closed inside the buffer, in one step. */
        const unsigned char *p = lx->buf + lx->pos, *end = lx->buf + lx->len;
        const unsigned char *q = plain_end(p, end);
        size_t n = (size_t)(q - p);
        if (q < end && *q == '"' && n <= SP__JSON_MAX_STRING &&
            (!keep || (b->data && !b->failed && n <= b->cap))) {
            if (keep) {
                memcpy(b->data, p, n);
                b->data[n] = '\0';
                b->len = n;
            }
            lx->pos += n + 1;
            lx->offset += n + 1;
            return 0;
        }
    }
    for (;;) {
        if (fill(lx) != 0) return sp__jlex_error(lx, "input ends inside a string");
        /* Copy a run of plain bytes at once, up to the cap. */
        const unsigned char *p = lx->buf + lx->pos, *end = lx->buf + lx->len;
        const unsigned char *q = plain_end(p, end);
        if (keep && b->len < SP__JSON_MAX_STRING + 4) {
            size_t room = SP__JSON_MAX_STRING + 4 - b->len;
            sp__buf_append(b, p, (size_t)(q - p) < room ? (size_t)(q - p) : room);
        }
        lx->offset += (uint64_t)(q - p);
        lx->pos += (size_t)(q - p);
        if (q == end) continue;
        int c = get(lx);
        if (c == '"') break;
        if (c < 0x20) return sp__jlex_error(lx, "control character in a string");
        c = get(lx);
        unsigned cp;
        switch (c) {
        case '"': case '\\': case '/': cp = (unsigned)c; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (hex4(lx, &cp) != 0) return -1;
            if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair, or U+FFFD */
                unsigned lo;
                if (sp__jlex_peek(lx) == '\\') {
                    get(lx);
                    if (get(lx) != 'u' || hex4(lx, &lo) != 0) return sp__jlex_error(lx, "invalid \\u escape");
                    if (lo >= 0xdc00 && lo < 0xe000)
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    else {
                        if (keep && b->len < SP__JSON_MAX_STRING + 4) put_utf8(b, 0xfffd);
                        cp = lo >= 0xd800 && lo < 0xe000 ? 0xfffd : lo;
                    }
                } else {
                    cp = 0xfffd;
                }
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                cp = 0xfffd;
            }
            break;
        default:
            return sp__jlex_error(lx, "invalid escape in a string");
        }
        if (keep && b->len < SP__JSON_MAX_STRING + 4) put_utf8(b, cp);
    }
    if (keep && b->len > SP__JSON_MAX_STRING) {
        /* Cut at the cap, on a UTF-8 character boundary. */
        size_t n = SP__JSON_MAX_STRING;
        while (n > 0 && ((unsigned char)b->data[n] & 0xc0) == 0x80) n--;
        b->len = n;
        lx->strings_cut++;
    }
    if (b->failed) {
        if (lx->status == SP_OK) lx->status = sp__fail(SP_ENOMEM, "out of memory loading %s", lx->path);
        return -1;
    }
    sp__buf_cstr(b);
    return 0;
}

int sp__jlex_string(sp__jlex *lx) { return string(lx, 1); }

int sp__jlex_string_view(sp__jlex *lx, const char **s, size_t *n)
{
    if (sp__jlex_peek(lx) == '"' && lx->pos + 1 < lx->len) {
        const unsigned char *p = lx->buf + lx->pos + 1, *end = lx->buf + lx->len;
        const unsigned char *q = plain_end(p, end);
        if (q < end && *q == '"' && (size_t)(q - p) <= SP__JSON_MAX_STRING) {
            *s = (const char *)p;
            *n = (size_t)(q - p);
            lx->pos += *n + 2;
            lx->offset += *n + 2;
            return 0;
        }
    }
    if (string(lx, 1) != 0) return -1;
    *s = lx->tok.data ? lx->tok.data : "";
    *n = lx->tok.len;
    return 0;
}

/* The end of the JSON number that starts at p (leading zeros allowed, as
 * the byte-at-a-time path below allows them), or NULL if what starts there
 * is not one, or may go on past end. */
static const unsigned char *number_end(const unsigned char *p, const unsigned char *end)
{
    if (p < end && *p == '-') p++;
    const unsigned char *d = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    if (p == d) return NULL;
    if (p < end && *p == '.') {
        d = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d) return NULL;
    }
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d) return NULL;
    }
    /* What follows must end the number here, not make it malformed. */
    if (p == end || (*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' ||
        (*p | 0x20) == 'e')
        return NULL;
    return p;
}

int sp__jlex_number(sp__jlex *lx)
{
    sp__buf *b = &lx->tok;
    b->len = 0;
    int c = sp__jlex_peek(lx);
    if (c >= 0) {
        /* A number that ends inside the buffer is taken in one piece; one
         * that reaches its end, or is malformed, goes the slow way below
         * (which also words the error). */
        const unsigned char *p = lx->buf + lx->pos, *end = lx->buf + lx->len;
        const unsigned char *q = number_end(p, end);
        size_t n = q ? (size_t)(q - p) : 0;
        if (q && n < 400 && sp__buf_reserve(b, n) == 0) {
            memcpy(b->data, p, n);
            b->data[n] = '\0';
            b->len = n;
            lx->pos += n;
            lx->offset += n;
            return 0;
        }
        if (b->failed) {
            if (lx->status == SP_OK)
                lx->status = sp__fail(SP_ENOMEM, "out of memory loading %s", lx->path);
            return -1;
        }
    }
    /* States: sign, int, frac, exp; each part checked for digits. */
    if (c == '-') sp__buf_putc(b, (char)get(lx));
    size_t digits = 0;
    while (fill(lx) == 0 && lx->buf[lx->pos] >= '0' && lx->buf[lx->pos] <= '9' && b->len < 400) {
        sp__buf_putc(b, (char)get(lx));
        digits++;
    }
    if (digits == 0) return sp__jlex_error(lx, "value expected");
    if (fill(lx) == 0 && lx->buf[lx->pos] == '.') {
        sp__buf_putc(b, (char)get(lx));
        digits = 0;
        while (fill(lx) == 0 && lx->buf[lx->pos] >= '0' && lx->buf[lx->pos] <= '9' && b->len < 400) {
            sp__buf_putc(b, (char)get(lx));
            digits++;
        }
        if (digits == 0) return sp__jlex_error(lx, "digits expected after '.'");
    }
    if (fill(lx) == 0 && (lx->buf[lx->pos] | 0x20) == 'e') {
        sp__buf_putc(b, (char)get(lx));
        if (fill(lx) == 0 && (lx->buf[lx->pos] == '+' || lx->buf[lx->pos] == '-')) sp__buf_putc(b, (char)get(lx));
        digits = 0;
        while (fill(lx) == 0 && lx->buf[lx->pos] >= '0' && lx->buf[lx->pos] <= '9' && b->len < 400) {
            sp__buf_putc(b, (char)get(lx));
            digits++;
        }
        if (digits == 0) return sp__jlex_error(lx, "digits expected in an exponent");
    }
    if (b->len >= 400) return sp__jlex_error(lx, "number too long");
    if (lx->status != SP_OK) return -1;
    if (b->failed) {
        lx->status = sp__fail(SP_ENOMEM, "out of memory loading %s", lx->path);
        return -1;
    }
    sp__buf_cstr(b);
    return 0;
}

int sp__jlex_number_view(sp__jlex *lx, const char **s, size_t *n)
{
    if (sp__jlex_peek(lx) >= 0) {
        const unsigned char *p = lx->buf + lx->pos;
        const unsigned char *q = number_end(p, lx->buf + lx->len);
        if (q && q - p < 400) {
            *s = (const char *)p;
            *n = (size_t)(q - p);
            lx->pos += *n;
            lx->offset += *n;
            return 0;
        }
    }
    if (sp__jlex_number(lx) != 0) return -1;
    *s = lx->tok.data;
    *n = lx->tok.len;
    return 0;
}

static int literal(sp__jlex *lx, const char *word)
{
    for (const char *p = word; *p; p++)
        if (get(lx) != *p) return sp__jlex_error(lx, "invalid literal");
    return 0;
}

int sp__jlex_next_slow(sp__jlex *lx, int close)
{
    int c = sp__jlex_peek(lx);
    if (c == ',') {
        get(lx);
        return 1;
    }
    if (c == close) {
        get(lx);
        return 0;
    }
    return sp__jlex_error(lx, c < 0 ? "input ends inside an object or array" : "',' expected");
}

int sp__jlex_skip(sp__jlex *lx)
{
    /* closers[d] is the bracket that ends nesting level d. */
    char closers[SP__JSON_MAX_DEPTH];
    int depth = 0;
    int want_value = 1; /* a value comes next (not a key or a closer) */
    for (;;) {
        int c = sp__jlex_peek(lx);
        if (c < 0) return sp__jlex_error(lx, "input ends inside a value");
        if (want_value) {
            if (c == '{' || c == '[') {
                if (depth == SP__JSON_MAX_DEPTH) return sp__jlex_error(lx, "nesting too deep");
                get(lx);
                closers[depth++] = c == '{' ? '}' : ']';
                int next = sp__jlex_peek(lx);
                if (next == closers[depth - 1]) {
                    get(lx);
                    depth--;
                    want_value = 0;
                } else if (c == '{') {
                    if (string(lx, 0) != 0 || sp__jlex_expect(lx, ':') != 0) return -1;
                }
                if (depth == 0 && !want_value) return 0;
                continue;
            }
            if (c == '"') {
                if (string(lx, 0) != 0) return -1;
            } else if (c == 't') {
                if (literal(lx, "true") != 0) return -1;
            } else if (c == 'f') {
                if (literal(lx, "false") != 0) return -1;
            } else if (c == 'n') {
                if (literal(lx, "null") != 0) return -1;
            } else if (sp__jlex_number(lx) != 0) {
                return -1;
            }
            want_value = 0;
            if (depth == 0) return 0;
            continue;
        }
        /* After a value inside a container: ',' or its closer. */
        int more = sp__jlex_next(lx, closers[depth - 1]);
        if (more < 0) return -1;
        if (more) {
            if (closers[depth - 1] == '}' && (string(lx, 0) != 0 || sp__jlex_expect(lx, ':') != 0)) return -1;
            want_value = 1;
        } else if (--depth == 0) {
            return 0;
        }
    }
}
