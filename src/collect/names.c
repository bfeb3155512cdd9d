/* names.c: interns every event name of a span into one table owned by the
 * result, so results never point into recording buffers or the caller's
 * memory. Each string is sanitized once when first interned: invalid UTF-8
 * becomes U+FFFD and names over 4096 bytes are cut (utf8.c), and a NUL byte
 * inside a name becomes U+FFFD too (counted as a cut name: the stored
 * string is NUL-terminated); `fixes` keeps what was repaired so the
 * collector can count it per event. Id 0 is always
 * the empty string, which is what a failed allocation degrades to. */
#include "names.h"
#include "utf8.h"

#include <string.h>

#define SP__NAME_LIMIT 4096

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ? h : 1;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int grow_table(sp__slot **table, uint32_t *mask, uint32_t count)
{
    if ((uint64_t)(count + 1) * 2 <= (uint64_t)*mask + 1) return 0;
    uint32_t size = (*mask + 1) * 2;
    sp__slot *fresh = sp__alloc(sizeof *fresh * size);
    if (!fresh) return -1;
    for (uint32_t i = 0; i <= *mask; i++) {
        sp__slot s = (*table)[i];
        if (!s.id) continue;
        uint32_t j = (uint32_t)mix(s.key) & (size - 1);
        while (fresh[j].id) j = (j + 1) & (size - 1);
        fresh[j] = s;
    }
    sp__free(*table);
    *table = fresh;
    *mask = size - 1;
    return 0;
}

/* Names are stored NUL-terminated, so a NUL inside one (from a copied name
 * of a given length, or a loaded file) would silently end it there. Each
 * becomes U+FFFD instead, which keeps the bytes after it and shows where it
 * was, and the name counts as cut (names_cut). Returns SP__UTF8_CUT or 0. */
static unsigned replace_nuls(sp__buf *b, size_t from)
{
    if (b->failed || b->len == from || !memchr(b->data + from, '\0', b->len - from)) return 0;
    size_t nuls = 0;
    for (size_t i = from; i < b->len; i++) nuls += b->data[i] == '\0';
    size_t old_len = b->len, new_len = old_len + 2 * nuls;
    for (size_t i = 0; i < 2 * nuls; i++) sp__buf_putc(b, ' '); /* room: 3 bytes per NUL */
    if (b->failed) return 0;
    /* Move from the end so that nothing is overwritten before it is read. */
    size_t w = new_len;
    for (size_t r = old_len; r-- > from;) {
        if (b->data[r] != '\0') {
            b->data[--w] = b->data[r];
            continue;
        }
        b->data[--w] = (char)0xBD;
        b->data[--w] = (char)0xBF;
        b->data[--w] = (char)0xEF;
    }
    return SP__UTF8_CUT;
}

static uint32_t add_string(sp__names *n, const char *s, size_t len)
{
    if (n->count == n->cap) {
        uint32_t cap = n->cap ? n->cap * 2 : 64;
        uint32_t *offsets = sp__realloc(n->offsets, sizeof *offsets * cap);
        if (offsets) n->offsets = offsets;
        uint8_t *fixes = offsets ? sp__realloc(n->fixes, cap) : NULL;
        if (fixes) n->fixes = fixes;
        if (!offsets || !fixes) goto fail;
        n->cap = cap;
    }
    size_t start = n->bytes.len;
    unsigned fixed = 0;
    if (len <= SP__NAME_LIMIT && sp__utf8_valid(s, len))
        sp__buf_append(&n->bytes, s, len);
    else
        fixed = sp__utf8_sanitize(&n->bytes, s, len, SP__NAME_LIMIT);
    fixed |= replace_nuls(&n->bytes, start);
    sp__buf_putc(&n->bytes, '\0');
    if (n->bytes.failed || start > UINT32_MAX) goto fail;
    n->offsets[n->count] = (uint32_t)start;
    n->fixes[n->count] = (uint8_t)fixed;
    return n->count++;
fail:
    n->failed = 1;
    return 0;
}

int sp__names_init(sp__names *n)
{
    memset(n, 0, sizeof *n);
    n->ptr_mask = n->text_mask = 63;
    n->by_ptr = sp__alloc(sizeof *n->by_ptr * 64);
    n->by_text = sp__alloc(sizeof *n->by_text * 64);
    if (!n->by_ptr || !n->by_text) {
        sp__names_fini(n);
        return -1;
    }
    add_string(n, "", 0);
    return n->failed ? (sp__names_fini(n), -1) : 0;
}

void sp__names_fini(sp__names *n)
{
    sp__buf_fini(&n->bytes);
    sp__free(n->offsets);
    sp__free(n->fixes);
    sp__free(n->by_ptr);
    sp__free(n->by_text);
    memset(n, 0, sizeof *n);
}

uint32_t sp__names_from_bytes(sp__names *n, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    uint32_t j = (uint32_t)mix(h) & n->text_mask;
    for (; n->by_text[j].id; j = (j + 1) & n->text_mask) {
        sp__slot slot = n->by_text[j];
        if (slot.key != h) continue;
        /* A repaired name no longer equals its raw bytes; for those the 64-bit
         * hash of the raw bytes alone identifies them (a collision is far less
         * likely than any real failure). */
        uint32_t id = slot.id - 1;
        if (n->fixes[id] != 0) return id;
        const char *stored = sp__names_get(n, id);
        if (strlen(stored) == len && memcmp(stored, s, len) == 0) return id;
    }
    if (grow_table(&n->by_text, &n->text_mask, n->text_used) != 0) {
        n->failed = 1;
        return 0;
    }
    uint32_t id = add_string(n, s, len);
    if (n->failed) return 0;
    j = (uint32_t)mix(h) & n->text_mask;
    while (n->by_text[j].id) j = (j + 1) & n->text_mask;
    n->by_text[j] = (sp__slot){h, id + 1};
    n->text_used++;
    return id;
}

uint32_t sp__names_from_ptr(sp__names *n, const char *s)
{
    if (!s) s = "(null)";
    uint64_t key = (uint64_t)(uintptr_t)s;
    uint32_t j = (uint32_t)mix(key) & n->ptr_mask;
    for (; n->by_ptr[j].id; j = (j + 1) & n->ptr_mask)
        if (n->by_ptr[j].key == key) return n->by_ptr[j].id - 1;
    uint32_t id = sp__names_from_bytes(n, s, strlen(s));
    if (n->failed || grow_table(&n->by_ptr, &n->ptr_mask, n->ptr_used) != 0) return id;
    j = (uint32_t)mix(key) & n->ptr_mask;
    while (n->by_ptr[j].id) j = (j + 1) & n->ptr_mask;
    n->by_ptr[j] = (sp__slot){key, id + 1};
    n->ptr_used++;
    return id;
}
