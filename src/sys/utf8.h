/* utf8.h: UTF-8 validation and repair for names that end up in trace files.
 * Writers call sp__utf8_sanitize on every user-supplied string so that the
 * output is always valid UTF-8 and never longer than its cap; the invariant
 * is that what it appends decodes cleanly and ends on a character boundary.
 * Depends only on sys.h (sp__buf). */
#ifndef SP_SYS_UTF8_H
#define SP_SYS_UTF8_H

#include "sys.h"

#include <stddef.h>

#define SP__UTF8_INVALID 1u /* an invalid sequence was replaced */
#define SP__UTF8_CUT 2u     /* the text was cut */

/* Appends to out a valid UTF-8 copy of s[0..len). Each maximal invalid subpart
 * (Unicode's "substitution of maximal subparts" practice, as used by
 * WHATWG/Python's errors="replace") becomes U+FFFD (EF BF BD). Overlong forms,
 * surrogates (U+D800..DFFF), code points > U+10FFFF and truncated sequences are
 * invalid. NUL bytes are kept (they are valid UTF-8). If the sanitized text is
 * longer than max_bytes, it is cut to the longest prefix of whole characters of
 * at most max_bytes - 3 bytes, followed by "..." (so the result is at most
 * max_bytes bytes). max_bytes < 3 is treated as 3. Returns SP__UTF8_* flags;
 * SP__UTF8_INVALID is set only when a U+FFFD was actually appended (an invalid
 * sequence in the part that was cut off does not count). */
unsigned sp__utf8_sanitize(sp__buf *out, const char *s, size_t len, size_t max_bytes);

/* Returns 1 if s[0..len) is valid UTF-8 (fast path for pure ASCII runs). */
int sp__utf8_valid(const char *s, size_t len);

#endif
