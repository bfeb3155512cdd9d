/* table.h: the table layer every summary table (semantics.md §6) is built
 * with. A table is DATA first: a list of lines (titles, text, separators,
 * header rows, rows, dash lines, blanks) whose header and row cells stay
 * readable through the accessors, so Python and the CLI never parse text.
 * Rendering to text, per §6.0, comes second and can be done any number of
 * times.
 *
 * Decisions §6.0 leaves open (taken from Paddle's profiler_statistic.py):
 * - Every column of a header, row or separator line, the last one too, is
 *   followed by two spaces, so those lines carry two trailing spaces.
 * - Every line, blank lines too, ends with "\n"; "two empty lines" are two
 *   sp__table_blank calls.
 * - Widths and lengths count UTF-8 code points (bytes that are not 10xxxxxx
 *   continuation bytes), as Python's len() and str.format padding do.
 * - A growing column grows to its longest ROW cell; header cells never
 *   widen a column (a header longer than min_width overflows), so a
 *   caller that wants the header to fit passes min_width >= its length.
 * - A column never configured has min_width 0 and grows.
 * - L = sum(w + 2) - 2 over the final widths. A title of length len >= L
 *   prints as its text alone, with no dashes (Python's '-' * negative).
 * - A NULL text or cell is stored as "".
 * - Out of memory: the failing call leaves the table as it was (the line is
 *   not added) and sets the sticky failed flag; later building calls do
 *   nothing. sp__table_render still renders the stored lines and then sets
 *   out->failed, so a writer that checks its buffer once sees the failure.
 *
 * Ownership: the table copies every string it is given; pointers returned by
 * sp__table_cell are borrowed and valid until sp__table_free.
 * Threads: a table is not thread-safe; the formatting helpers are (any). */
#ifndef SP_ANALYZE_TABLE_H
#define SP_ANALYZE_TABLE_H

#include "sys.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SP__LINE_TITLE,
    SP__LINE_TEXT,
    SP__LINE_SEPARATOR,
    SP__LINE_HEADER,
    SP__LINE_ROW,
    SP__LINE_DASHES,
    SP__LINE_BLANK
} sp__line_kind;

typedef struct sp__table sp__table; /* opaque; owns all its strings */

/* A table of ncols columns. NULL on OOM or if ncols == 0. */
sp__table *sp__table_new(size_t ncols);
/* Frees the table and all its strings; NULL does nothing. */
void sp__table_free(sp__table *t);

/* Column c starts at min_width; it grows to its longest row cell if
 * grow != 0, else longer cells overflow (are printed whole and shift the
 * rest of the line). May be called before or after rows are added; c out of
 * range is ignored. */
void sp__table_column(sp__table *t, size_t c, size_t min_width, int grow);

/* Building calls. Each appends one line; all copy their strings. */
void sp__table_title(sp__table *t, const char *text); /* centred in dashes over L */
void sp__table_text(sp__table *t, const char *text);  /* a line as is ("Time unit: ms") */
void sp__table_separator(sp__table *t);               /* per column: w dashes + 2 spaces */
void sp__table_header(sp__table *t, const char *const *cells); /* ncols cells */
void sp__table_row(sp__table *t, const char *const *cells);    /* ncols cells */
void sp__table_dashes(sp__table *t);                           /* a line of L dashes */
void sp__table_blank(sp__table *t);                            /* an empty line */
/* Sticky: 1 once any building call ran out of memory. */
int sp__table_failed(const sp__table *t);

/* Data access. Out-of-range line or column indexes give SP__LINE_BLANK,
 * "" and 0. */
size_t sp__table_ncols(const sp__table *t);
size_t sp__table_lines(const sp__table *t);
sp__line_kind sp__table_line_kind(const sp__table *t, size_t i);
/* Header/row cells; the text of title/text lines at col 0; "" otherwise. */
const char *sp__table_cell(const sp__table *t, size_t line, size_t col);
/* Final width of column col: max(min_width, longest row cell) if it grows,
 * else min_width. */
size_t sp__table_width(const sp__table *t, size_t col);

/* Appends the text of the table to out, per §6.0 and the decisions above. */
void sp__table_render(const sp__table *t, sp__buf *out);

/* The one way every table prints a recorded name (issue 17): prefix, then
 * name made visible and cut. Control characters become escapes that take
 * their own width: "\n", "\t", "\r", "\xHH" for the other C0 bytes and
 * DEL, "\u0080".."\u009f" for C1; a malformed UTF-8 byte becomes '?'. If
 * the visible name is longer than cut_above code points, only its first
 * `keep` code points are kept (an escape is never split) and "..." is
 * appended. Paddle's tables pass cut_above = W - prefix and keep = W -
 * prefix - 3 for a column W wide, so a cut name fills it exactly; torch's
 * passes its own pair. out is always NUL-terminated; SP__NAME_CELL_BYTES is
 * enough for any cut_above <= 128 and a prefix of up to 8 bytes. */
#define SP__NAME_CELL_BYTES (4 * 128 + 16)
void sp__fmt_name(char *out, size_t size, const char *prefix, const char *name, size_t cut_above,
                  size_t keep);
/* The same for the first len bytes of name (a NUL ends it sooner). */
void sp__fmt_name_n(char *out, size_t size, const char *prefix, const char *name, size_t len,
                    size_t cut_above, size_t keep);

/* Cell formatting of §6.0. Each writes a NUL-terminated string (cut to
 * size) and never writes "nan" or "inf".
 * sp__fmt_time: ns / 1e9, 1e6, 1e3 or 1 for unit "s", "ms", "us", "ns"
 * (NULL or any other unit: "ms") with "%.2f"; "-" for +inf or -inf (a min
 * or max with no samples); "0.00" for NaN. */
void sp__fmt_time(char *out, size_t size, double ns, const char *unit);
/* 100 * num / den with "%.2f"; "0.00" if den == 0 or the result is not
 * finite (NaN or infinite inputs included). */
void sp__fmt_ratio(char *out, size_t size, double num, double den);
/* "Total / Avg / Max / Min / Ratio": times via sp__fmt_time, avg =
 * total_ns / calls (0 if calls <= 0), ratio via sp__fmt_ratio. */
void sp__fmt_composite(char *out, size_t size, double total_ns, int64_t calls, double max_ns,
                       double min_ns, double ratio_num, double ratio_den, const char *unit);

#endif
