/* names.h: the string table of a result (names.c). */
#ifndef SP_COLLECT_NAMES_H
#define SP_COLLECT_NAMES_H

#include "sys.h"

#include <stdint.h>

typedef struct sp__slot {
    uint64_t key; /* pointer value or content hash */
    uint32_t id;  /* string id + 1; 0 = empty slot */
} sp__slot;

/* Interned, sanitized strings. Ids are dense from 0. Static names are found
 * by pointer first, so each distinct pointer is hashed and sanitized once. */
typedef struct sp__names {
    sp__buf bytes;      /* all strings, NUL-terminated, back to back */
    uint32_t *offsets;  /* id -> offset in bytes */
    uint8_t *fixes;     /* id -> SP__UTF8_* flags of the original text */
    uint32_t count, cap;
    sp__slot *by_ptr, *by_text;
    uint32_t ptr_mask, text_mask; /* table size - 1 */
    uint32_t ptr_used, text_used;
    int failed;         /* an allocation failed; ids may be 0 ("") */
} sp__names;

int sp__names_init(sp__names *n);
void sp__names_fini(sp__names *n);
/* Returns the id of a name given as a pointer to a static string. */
uint32_t sp__names_from_ptr(sp__names *n, const char *s);
/* Returns the id of a name given as bytes (copied, sanitized). */
uint32_t sp__names_from_bytes(sp__names *n, const char *s, size_t len);
static inline const char *sp__names_get(const sp__names *n, uint32_t id)
{
    return id < n->count ? n->bytes.data + n->offsets[id] : "";
}

#endif
