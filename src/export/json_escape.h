/* json_escape.h: the two leaf writers every JSON exporter uses, one for
 * strings and one for non-integral numbers. Whatever bytes or doubles come in,
 * what they append is valid JSON (RFC 8259) that Python's json.loads, Perfetto
 * and chrome://tracing accept; neither ever fails except through the buffer's
 * sticky `failed` flag. */
#ifndef SP_EXPORT_JSON_ESCAPE_H
#define SP_EXPORT_JSON_ESCAPE_H

#include "sys.h"

#include <stddef.h>

/* Appends s[0..len) as a quoted JSON string: '"' -> \", '\' -> \\, 0x08 \b,
 * 0x0C \f, 0x0A \n, 0x0D \r, 0x09 \t, other bytes 0x00-0x1F -> \u00xx
 * (lowercase hex), invalid UTF-8 -> U+FFFD (same rules as sp__utf8_sanitize),
 * so ANY input bytes give valid JSON. DEL (0x7F) and valid non-ASCII text are
 * copied as they are. No length cap: cut names first with sp__utf8_sanitize.
 * Copies runs of safe bytes with one append. s may be NULL when len is 0. */
void sp__json_put_string(sp__buf *out, const char *s, size_t len);

/* Appends a finite double as the shortest decimal that reads back (strtod) as
 * the same double, formatted like Python's repr(): plain notation for decimal
 * exponents -4..15 with ".0" on integral values ("10.0", "1.25", "0.0001"),
 * else exponent notation ("1e+16", "1.5e-05", "1e+300"). Negative zero is
 * "-0.0". The decimal point is always '.', whatever the C locale. NaN and
 * +-inf are written as 0 (the caller counts that). Returns 1 if the value was
 * not finite, else 0. */
int sp__json_put_double(sp__buf *out, double v);

#endif
