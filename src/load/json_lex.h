/* json_lex.h: a streaming JSON tokenizer for the Chrome-trace loader
 * (load_json.c). It reads an open file, plain or gzip (inflated here with
 * zlib, one or more members), in 64 KiB pieces and keeps only the current
 * token, so a trace is never held in memory: a string value is kept up to
 * SP__JSON_MAX_STRING bytes and the rest skipped (counted in strings_cut),
 * so even a gzip bomb of one huge string costs bounded memory. Bytes after
 * the last gzip member that do not start another are not read as JSON; they
 * are counted (trailing_bytes) for the loader to report. Errors name the
 * file and the byte offset; nesting deeper than SP__JSON_MAX_DEPTH is an
 * error, not a stack overflow. */
#ifndef SP_LOAD_JSON_LEX_H
#define SP_LOAD_JSON_LEX_H

#include "sys.h"

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#define SP__JSON_MAX_DEPTH 64
/* Longest string kept (names are cut to 4096 bytes anyway, names.c). */
#define SP__JSON_MAX_STRING ((size_t)64 << 10)

/* Bytes readable past the end of the read buffer (never data), so that a
 * short string lying in it can be copied as one fixed-size piece. */
#define SP__JSON_SLACK 32

typedef struct sp__jlex {
    FILE *f;
    const char *path;
    unsigned char *buf;   /* uncompressed input, SP__JSON_SLACK bytes longer */
    size_t pos, len;
    int eof;
    int gzip;             /* 1 when the file is gzip */
    int z_ready;          /* z was initialised */
    int member_done;      /* z reached the end of a gzip member */
    int raw_eof;          /* f is read to its end */
    z_stream z;
    unsigned char *raw;   /* compressed input, z.next_in points into it */
    uint64_t trailing_bytes; /* bytes after the last gzip member, ignored */
    uint64_t strings_cut; /* strings longer than SP__JSON_MAX_STRING, cut */
    uint64_t offset;  /* uncompressed bytes consumed */
    uint64_t raw_offset; /* gzip: compressed bytes consumed by zlib */
    sp__buf tok;      /* the last string's (unescaped, NUL-terminated) or number's text */
    sp_status status; /* first error, SP_OK while none */
    void (*on_refill)(void *user, uint64_t offset);
    void *user;
    sp__buf *tee;    /* consumed input is copied here (sp__jlex_tee) */
    size_t tee_from; /* buf[tee_from..pos) is consumed but not yet in tee */
} sp__jlex;

/* Reads f (open at its start; the caller closes it) named path. */
sp_status sp__jlex_open(sp__jlex *lx, FILE *f, const char *path);
void sp__jlex_close(sp__jlex *lx);
int sp__jlex_peek_slow(sp__jlex *lx);
int sp__jlex_expect_slow(sp__jlex *lx, int c);
int sp__jlex_next_slow(sp__jlex *lx, int close);

/* The next significant character without consuming it; -1 at the end of
 * input or after an error. Inline for the usual case, a byte that is no
 * whitespace inside the buffer: the loader asks for one per token. */
static inline int sp__jlex_peek(sp__jlex *lx)
{
    if (lx->pos < lx->len && lx->buf[lx->pos] > ' ') return lx->buf[lx->pos];
    return sp__jlex_peek_slow(lx);
}

/* Consumes c (after whitespace) or fails. 0 on success. */
static inline int sp__jlex_expect(sp__jlex *lx, int c)
{
    if (lx->pos < lx->len && lx->buf[lx->pos] == c) {
        lx->pos++;
        lx->offset++;
        return 0;
    }
    return sp__jlex_expect_slow(lx, c);
}
/* Reads a string into tok (escapes decoded, \u0000 kept as bytes). */
int sp__jlex_string(sp__jlex *lx);
/* Reads a string as sp__jlex_string does, without a copy where it can:
 * a string with no escapes that lies whole in the read buffer is left
 * there, *s pointing at it (not NUL-terminated) until the next call on lx;
 * any other is decoded into tok and *s points at tok. Keys and names are
 * nearly all of the first kind. */
int sp__jlex_string_view(sp__jlex *lx, const char **s, size_t *n);
/* Reads a number's text into tok (JSON syntax checked). */
int sp__jlex_number(sp__jlex *lx);
/* Reads a number as sp__jlex_number does, leaving it in the read buffer
 * where it lies whole there (*s valid until the next call on lx, followed
 * by a byte that is not part of a number), else in tok. */
int sp__jlex_number_view(sp__jlex *lx, const char **s, size_t *n);
/* Skips one value of any kind. */
int sp__jlex_skip(sp__jlex *lx);
/* After an element of an object or array: 1 if another follows (',' read),
 * 0 if close was read, -1 on error. */
static inline int sp__jlex_next(sp__jlex *lx, int close)
{
    if (lx->pos < lx->len) {
        int c = lx->buf[lx->pos];
        if (c == ',' || c == close) {
            lx->pos++;
            lx->offset++;
            return c == ',';
        }
    }
    return sp__jlex_next_slow(lx, close);
}
/* Copies the input consumed from now on, verbatim, to the end of tee, or
 * stops copying when tee is NULL (what was consumed is in tee then). The copy
 * is made a buffer at a time, so a tokenizer with a tee costs no more per
 * byte: the stream merge (src/merge) rewrites events by copying their text. */
void sp__jlex_tee(sp__jlex *lx, sp__buf *tee);
/* Where in the tee the next consumed byte will land. */
size_t sp__jlex_tee_pos(const sp__jlex *lx);
/* Records an error at the current offset; returns -1. */
int sp__jlex_error(sp__jlex *lx, const char *what);

#endif
