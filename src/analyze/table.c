/* table.c: the summary-table model of table.h and its §6.0 text rendering.
 * Builders (analyze's summary code) append lines; the CLI, Python and the
 * text writer read them back. Invariants: every stored line owns its
 * strings (title/text lines one, header/row lines exactly ncols, others
 * none), and maxlen[c] is the longest row cell of column c seen so far, so
 * final widths never need a rescan. A failed allocation adds nothing and
 * sets the sticky `failed` flag; the table stays consistent and freeable. */
#include "table.h"

#include "sys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct line {
    sp__line_kind kind;
    char **cells; /* title/text: 1 string; header/row: ncols; else NULL */
} line;

typedef struct column {
    size_t min_width;
    int grow;
    size_t maxlen; /* longest row cell, in code points */
} column;

struct sp__table {
    size_t ncols;
    column *cols;
    line *lines;
    size_t nlines, cap;
    int failed;
};

/* Length in UTF-8 code points, as Python's len() counts a decoded str. */
static size_t text_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

sp__table *sp__table_new(size_t ncols)
{
    if (ncols == 0) return NULL;
    sp__table *t = sp__alloc(sizeof *t);
    if (!t) return NULL;
    t->ncols = ncols;
    t->cols = sp__alloc(ncols * sizeof *t->cols);
    if (!t->cols) {
        sp__free(t);
        return NULL;
    }
    for (size_t c = 0; c < ncols; c++) t->cols[c].grow = 1;
    return t;
}

static size_t line_ncells(const sp__table *t, const line *l)
{
    switch (l->kind) {
    case SP__LINE_TITLE:
    case SP__LINE_TEXT: return 1;
    case SP__LINE_HEADER:
    case SP__LINE_ROW: return t->ncols;
    default: return 0;
    }
}

static void free_cells(char **cells, size_t n)
{
    if (!cells) return;
    for (size_t i = 0; i < n; i++) sp__free(cells[i]);
    sp__free(cells);
}

void sp__table_free(sp__table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nlines; i++)
        free_cells(t->lines[i].cells, line_ncells(t, &t->lines[i]));
    sp__free(t->lines);
    sp__free(t->cols);
    sp__free(t);
}

void sp__table_column(sp__table *t, size_t c, size_t min_width, int grow)
{
    if (!t || c >= t->ncols) return;
    t->cols[c].min_width = min_width;
    t->cols[c].grow = grow != 0;
}

/* Makes room for one more line; 0 on success. Sets `failed` otherwise. */
static int reserve_line(sp__table *t)
{
    if (t->failed) return -1;
    if (t->nlines < t->cap) return 0;
    size_t cap = t->cap ? 2 * t->cap : 16;
    line *grown = sp__realloc(t->lines, cap * sizeof *grown);
    if (!grown) {
        t->failed = 1;
        return -1;
    }
    t->lines = grown;
    t->cap = cap;
    return 0;
}

/* Appends a line of `kind` holding copies of the n strings of src (NULL
 * entries stored as ""). On failure nothing is added and `failed` is set. */
static void add_line(sp__table *t, sp__line_kind kind, const char *const *src, size_t n)
{
    if (!t || reserve_line(t) != 0) return;
    char **cells = NULL;
    if (n) {
        cells = sp__alloc(n * sizeof *cells);
        if (!cells) goto fail;
        for (size_t i = 0; i < n; i++) {
            cells[i] = sp__strdup(src && src[i] ? src[i] : "");
            if (!cells[i]) goto fail;
        }
    }
    if (kind == SP__LINE_ROW)
        for (size_t c = 0; c < n; c++) {
            size_t len = text_len(cells[c]);
            if (len > t->cols[c].maxlen) t->cols[c].maxlen = len;
        }
    t->lines[t->nlines].kind = kind;
    t->lines[t->nlines].cells = cells;
    t->nlines++;
    return;
fail:
    free_cells(cells, n); /* cells past the failure are still NULL */
    t->failed = 1;
}

void sp__table_title(sp__table *t, const char *text) { add_line(t, SP__LINE_TITLE, &text, 1); }
void sp__table_text(sp__table *t, const char *text) { add_line(t, SP__LINE_TEXT, &text, 1); }
void sp__table_separator(sp__table *t) { add_line(t, SP__LINE_SEPARATOR, NULL, 0); }
void sp__table_dashes(sp__table *t) { add_line(t, SP__LINE_DASHES, NULL, 0); }
void sp__table_blank(sp__table *t) { add_line(t, SP__LINE_BLANK, NULL, 0); }

void sp__table_header(sp__table *t, const char *const *cells)
{
    if (t) add_line(t, SP__LINE_HEADER, cells, t->ncols);
}

void sp__table_row(sp__table *t, const char *const *cells)
{
    if (t) add_line(t, SP__LINE_ROW, cells, t->ncols);
}

int sp__table_failed(const sp__table *t) { return !t || t->failed; }

size_t sp__table_ncols(const sp__table *t) { return t ? t->ncols : 0; }

size_t sp__table_lines(const sp__table *t) { return t ? t->nlines : 0; }

sp__line_kind sp__table_line_kind(const sp__table *t, size_t i)
{
    return t && i < t->nlines ? t->lines[i].kind : SP__LINE_BLANK;
}

const char *sp__table_cell(const sp__table *t, size_t line_i, size_t col)
{
    if (!t || line_i >= t->nlines) return "";
    const line *l = &t->lines[line_i];
    return col < line_ncells(t, l) ? l->cells[col] : "";
}

size_t sp__table_width(const sp__table *t, size_t col)
{
    if (!t || col >= t->ncols) return 0;
    const column *c = &t->cols[col];
    return c->grow && c->maxlen > c->min_width ? c->maxlen : c->min_width;
}

/* ---- rendering ---- */

static void put_repeat(sp__buf *out, char ch, size_t n)
{
    char chunk[64];
    memset(chunk, ch, sizeof chunk);
    while (n) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        sp__buf_append(out, chunk, k);
        n -= k;
    }
}

/* L = sum(w + 2) - 2 (ncols >= 1, so it never underflows). */
static size_t line_length(const sp__table *t)
{
    size_t len = 0;
    for (size_t c = 0; c < t->ncols; c++) len += sp__table_width(t, c) + 2;
    return len - 2;
}

static void render_cells(const sp__table *t, const line *l, sp__buf *out)
{
    for (size_t c = 0; c < t->ncols; c++) {
        size_t w = sp__table_width(t, c), len = text_len(l->cells[c]);
        sp__buf_puts(out, l->cells[c]);
        put_repeat(out, ' ', (len < w ? w - len : 0) + 2);
    }
}

static void render_title(const char *text, size_t total, sp__buf *out)
{
    size_t len = text_len(text);
    size_t left = len < total ? (total - len) / 2 : 0;
    size_t right = len < total ? total - len - left : 0;
    put_repeat(out, '-', left);
    sp__buf_puts(out, text);
    put_repeat(out, '-', right);
}

void sp__table_render(const sp__table *t, sp__buf *out)
{
    if (!t) {
        out->failed = 1;
        return;
    }
    size_t total = line_length(t);
    for (size_t i = 0; i < t->nlines; i++) {
        const line *l = &t->lines[i];
        switch (l->kind) {
        case SP__LINE_TITLE: render_title(l->cells[0], total, out); break;
        case SP__LINE_TEXT: sp__buf_puts(out, l->cells[0]); break;
        case SP__LINE_SEPARATOR:
            for (size_t c = 0; c < t->ncols; c++) {
                put_repeat(out, '-', sp__table_width(t, c));
                put_repeat(out, ' ', 2);
            }
            break;
        case SP__LINE_HEADER:
        case SP__LINE_ROW: render_cells(t, l, out); break;
        case SP__LINE_DASHES: put_repeat(out, '-', total); break;
        case SP__LINE_BLANK: break;
        }
        sp__buf_putc(out, '\n');
    }
    if (t->failed) out->failed = 1;
}

/* ---- names ---- */

/* The visible form of the character at s: writes it to esc (>= 8 bytes) and
 * returns the bytes of s it stands for (>= 1); *cps gets its width. */
static size_t visible_char(const unsigned char *s, size_t avail, char *esc, size_t *cps)
{
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7F) {
        if (c == '\n') memcpy(esc, "\\n", 3);
        else if (c == '\t') memcpy(esc, "\\t", 3);
        else if (c == '\r') memcpy(esc, "\\r", 3);
        else snprintf(esc, 8, "\\x%02x", c);
        *cps = strlen(esc);
        return 1;
    }
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len > avail) len = 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) len = 0; /* stops at the NUL too */
    if (len == 0) {
        memcpy(esc, "?", 2);
        *cps = 1;
        return 1;
    }
    if (c == 0xC2 && s[1] < 0xA0) {
        snprintf(esc, 8, "\\u%04x", (unsigned)s[1]);
        *cps = 6;
        return 2;
    }
    memcpy(esc, s, len);
    esc[len] = '\0';
    *cps = 1;
    return len;
}

void sp__fmt_name_n(char *out, size_t size, const char *prefix, const char *name, size_t len,
                    size_t cut_above, size_t keep)
{
    if (!size) return;
    if (!name) name = "", len = 0;
    if (!prefix) prefix = "";
    const unsigned char *s = (const unsigned char *)name;
    char esc[8];
    size_t total = 0, w, at;
    for (size_t i = 0; i < len && s[i] && total <= cut_above;) {
        i += visible_char(s + i, len - i, esc, &w);
        total += w;
    }
    int cut = total > cut_above;
    size_t used = 0, plen = strlen(prefix);
    if (plen >= size) plen = size - 1;
    memcpy(out, prefix, plen);
    at = plen;
    for (size_t i = 0; i < len && s[i];) {
        size_t n = visible_char(s + i, len - i, esc, &w), elen = strlen(esc);
        if ((cut && used + w > keep) || at + elen + (cut ? 3 : 0) >= size) break;
        memcpy(out + at, esc, elen);
        at += elen;
        used += w;
        i += n;
    }
    if (cut && at + 3 < size) {
        memcpy(out + at, "...", 3);
        at += 3;
    }
    out[at] = '\0';
}

void sp__fmt_name(char *out, size_t size, const char *prefix, const char *name, size_t cut_above,
                  size_t keep)
{
    sp__fmt_name_n(out, size, prefix, name, name ? strlen(name) : 0, cut_above, keep);
}

/* ---- cell formatting ---- */

static void put_str(char *out, size_t size, const char *s)
{
    if (size) snprintf(out, size, "%s", s);
}

void sp__fmt_time(char *out, size_t size, double ns, const char *unit)
{
    if (isinf(ns)) {
        put_str(out, size, "-");
        return;
    }
    double div = 1e6;
    if (unit && strcmp(unit, "s") == 0) div = 1e9;
    else if (unit && strcmp(unit, "us") == 0) div = 1e3;
    else if (unit && strcmp(unit, "ns") == 0) div = 1;
    double v = ns / div;
    if (!isfinite(v)) v = 0; /* NaN */
    if (size) snprintf(out, size, "%.2f", v);
}

void sp__fmt_ratio(char *out, size_t size, double num, double den)
{
    double r = den == 0 ? 0 : 100.0 * num / den;
    if (!isfinite(r)) r = 0;
    if (size) snprintf(out, size, "%.2f", r);
}

void sp__fmt_composite(char *out, size_t size, double total_ns, int64_t calls, double max_ns,
                       double min_ns, double ratio_num, double ratio_den, const char *unit)
{
    /* "%.2f" of the largest double is 312 characters. */
    char total[330], avg[330], max[330], min[330], ratio[330];
    sp__fmt_time(total, sizeof total, total_ns, unit);
    sp__fmt_time(avg, sizeof avg, calls > 0 ? total_ns / (double)calls : 0, unit);
    sp__fmt_time(max, sizeof max, max_ns, unit);
    sp__fmt_time(min, sizeof min, min_ns, unit);
    sp__fmt_ratio(ratio, sizeof ratio, ratio_num, ratio_den);
    if (size) snprintf(out, size, "%s / %s / %s / %s / %s", total, avg, max, min, ratio);
}
