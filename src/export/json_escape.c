/* json_escape.c: quotes strings and formats doubles for the JSON exporters
 * (chrome_json.c and friends). Trace names come from user code and may hold
 * any bytes, and a single bad string makes viewers reject the whole file, so
 * the invariant here is total: every input gives valid JSON, and doubles read
 * back exactly. */
#include "json_escape.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes that need no escaping: printable ASCII except '"' and '\'. Bytes of
 * 0x80 and up are handled a whole run at a time by the caller. */
static int is_plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

static void put_escape(sp__buf *out, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char esc[6] = {'\\', 0, '0', '0', 0, 0};
    size_t n = 2;
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default: /* the other control bytes, as \u00xx */
        esc[1] = 'u';
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        n = 6;
    }
    sp__buf_append(out, esc, n);
}

/* Each run of bytes >= 0x80 is checked and repaired on its own: an ASCII
 * byte is never part of a multibyte character or of an invalid subpart, so
 * splitting the text at ASCII bytes gives exactly the U+FFFDs that sanitizing
 * it whole would. Valid runs, the usual case, just join the pending copy. */
void sp__json_put_string(sp__buf *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* p[run..i) is safe and not yet appended */
    sp__buf_putc(out, '"');
    while (i < len) {
        unsigned char c = p[i];
        if (is_plain(c)) {
            i++;
            continue;
        }
        if (c < 0x80) {
            sp__buf_append(out, p + run, i - run);
            put_escape(out, c);
            run = ++i;
            continue;
        }
        size_t end = i;
        while (end < len && p[end] >= 0x80) end++;
        if (!sp__utf8_valid(s + i, end - i)) {
            sp__buf_append(out, p + run, i - run);
            sp__utf8_sanitize(out, s + i, end - i, SIZE_MAX);
            run = end;
        }
        i = end;
    }
    if (i > run) sp__buf_append(out, p + run, i - run);
    sp__buf_putc(out, '"');
}

/* A positive decimal d x 10^shift. Candidates for the shortest form are kept
 * this way because "<d>e<shift>" has no decimal point, so strtod reads it the
 * same under every C locale. */
typedef struct {
    uint64_t d;
    int shift;
} decimal;

static double decimal_value(decimal x)
{
    char text[48];
    snprintf(text, sizeof text, "%" PRIu64 "e%d", x.d, x.shift);
    return strtod(text, NULL);
}

/* v (> 0) correctly rounded to n significant digits, by printf. Only the
 * digits and the exponent are read, so the locale's decimal point is moot. */
static decimal round_to(double v, int n)
{
    char text[48];
    decimal x = {0, 0};
    snprintf(text, sizeof text, "%.*e", n - 1, v);
    const char *c = text;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') x.d = x.d * 10 + (uint64_t)(*c - '0');
    x.shift = (*c == 'e' ? atoi(c + 1) : 0) - (n - 1);
    return x;
}

/* The fewest significant digits that read back as v (finite, > 0); 17
 * always do. When v is a power of two the values that read back as v reach
 * only half as far below it as above, so the nearest n-digit decimal can miss
 * while its neighbour above hits; trying that neighbour too gives the same
 * answer as Python's repr. */
static decimal shortest(double v)
{
    for (int n = 1; n < 17; n++) {
        decimal near = round_to(v, n);
        double got = decimal_value(near);
        if (got == v) return near;
        decimal other = near;
        other.d = got < v ? near.d + 1 : near.d - 1;
        if (other.d != 0 && decimal_value(other) == v) return other;
    }
    return round_to(v, 17);
}

/* Writes -?x the way Python's repr() does: plain notation when the first
 * digit's exponent is -4..15, with ".0" on integers, else d[.ddd]e+XX. */
static size_t format_decimal(char *buf, int neg, decimal x)
{
    char digits[24];
    while (x.d % 10 == 0 && x.d != 0) x.d /= 10, x.shift++;
    int n = snprintf(digits, sizeof digits, "%" PRIu64, x.d);
    int exp = x.shift + n - 1; /* exponent of the first digit */
    size_t w = 0;
    if (neg) buf[w++] = '-';
    if (exp < -4 || exp >= 16) {
        buf[w++] = digits[0];
        if (n > 1) buf[w++] = '.';
        for (int i = 1; i < n; i++) buf[w++] = digits[i];
        return w + (size_t)sprintf(buf + w, "e%+03d", exp);
    }
    if (exp < 0) {
        buf[w++] = '0';
        buf[w++] = '.';
        for (int i = exp + 1; i < 0; i++) buf[w++] = '0';
        for (int i = 0; i < n; i++) buf[w++] = digits[i];
        return w;
    }
    for (int i = 0; i <= exp; i++) buf[w++] = i < n ? digits[i] : '0';
    buf[w++] = '.';
    if (n <= exp + 1) buf[w++] = '0';
    for (int i = exp + 1; i < n; i++) buf[w++] = digits[i];
    return w;
}

int sp__json_put_double(sp__buf *out, double v)
{
    if (!isfinite(v)) {
        sp__buf_putc(out, '0');
        return 1;
    }
    if (v == 0) {
        sp__buf_puts(out, signbit(v) ? "-0.0" : "0.0");
        return 0;
    }
    char text[48]; /* the longest form, "-1.2345678901234567e-308", is 24 bytes */
    size_t n = format_decimal(text, v < 0, shortest(fabs(v)));
    sp__buf_append(out, text, n);
    return 0;
}
