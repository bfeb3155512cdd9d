/* utf8.c: validates and repairs UTF-8 for the trace writers, which call it on
 * every name they did not make themselves. Decoding follows Unicode's Table
 * 3-7 of well-formed byte sequences, so a bad sequence is replaced by exactly
 * the U+FFFDs that Python's errors="replace" and WHATWG decoders produce. The
 * invariant: every byte appended is part of a whole, valid character, and a
 * cut never splits one. */
#include "utf8.h"

#include <stdint.h>
#include <string.h>

static const char replacement[3] = {'\xEF', '\xBF', '\xBD'}; /* U+FFFD */

/* Decodes the character at p[0..n), n >= 1. Returns 1 with *adv = its length
 * if it is valid, else 0 with *adv = the length of the maximal invalid subpart
 * (the longest prefix that could still have started a valid sequence, or 1).
 * The narrowed second-byte ranges after E0, ED, F0 and F4 are what reject
 * overlong forms, surrogates and code points above U+10FFFF at the earliest
 * byte, which is what makes the subpart "maximal" in Unicode's sense. */
static int decode(const unsigned char *p, size_t n, size_t *adv)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    *adv = 1;
    if (c < 0x80) return 1;
    if (c < 0xC2 || c > 0xF4) return 0; /* continuation, overlong C0/C1, or >F4 */
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    for (size_t k = 1; k < need; k++) {
        if (k >= n || p[k] < lo || p[k] > hi) {
            *adv = k;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    *adv = need;
    return 1;
}

/* Length of the ASCII prefix of p[0..n). Names are nearly always ASCII, so
 * testing eight bytes at a time pays for itself. */
static size_t ascii_run(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        if (w & UINT64_C(0x8080808080808080)) break;
    }
    while (i < n && p[i] < 0x80) i++;
    return i;
}

int sp__utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, adv;
    while (i < len) {
        i += ascii_run(p + i, len - i);
        if (i == len) break;
        if (!decode(p + i, len - i, &adv)) return 0;
        i += adv;
    }
    return 1;
}

/* Appends the sanitized form of p[0..n) for as long as it fits in *room
 * bytes, lowers *room by what it wrote, and returns how many input bytes it
 * consumed; that count always ends on a character (or invalid subpart)
 * boundary, so the caller can resume or cut there. Valid runs are copied with
 * one append each. */
static size_t emit(sp__buf *out, const unsigned char *p, size_t n, size_t *room,
                   unsigned *flags)
{
    size_t i = 0, run = 0, adv, left = *room;
    while (i < n && left > 0) {
        size_t a = ascii_run(p + i, n - i < left ? n - i : left);
        i += a;
        left -= a;
        if (i == n || left == 0) break;
        int ok = decode(p + i, n - i, &adv);
        size_t w = ok ? adv : sizeof replacement;
        if (w > left) break;
        left -= w;
        if (!ok) {
            sp__buf_append(out, p + run, i - run);
            sp__buf_append(out, replacement, sizeof replacement);
            *flags |= SP__UTF8_INVALID;
            run = i + adv;
        }
        i += adv;
    }
    sp__buf_append(out, p + run, i - run);
    *room = left;
    return i;
}

/* Sanitized size of p[0..n), counted only until it exceeds cap. */
static size_t measure(const unsigned char *p, size_t n, size_t cap)
{
    size_t i = 0, size = 0, adv;
    while (i < n && size <= cap) {
        int ok = decode(p + i, n - i, &adv);
        size += ok ? adv : sizeof replacement;
        i += adv;
    }
    return size;
}

/* Writes the part that is kept in any case (up to max_bytes - 3 bytes) first.
 * The remainder is then at most a few characters from fitting, so measuring
 * it is cheap, and no byte is ever appended and then taken back. */
unsigned sp__utf8_sanitize(sp__buf *out, const char *s, size_t len, size_t max_bytes)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned flags = 0;
    if (len == 0) return 0;
    if (max_bytes < 3) max_bytes = 3;
    size_t room = max_bytes - 3;
    size_t done = emit(out, p, len, &room, &flags);
    if (done == len) return flags;
    room += 3; /* what is left of max_bytes */
    if (measure(p + done, len - done, room) <= room) {
        emit(out, p + done, len - done, &room, &flags);
        return flags;
    }
    sp__buf_append(out, "...", 3);
    return flags | SP__UTF8_CUT;
}
