/* json_heads.c: the per-name cache of rendered event heads (json_heads.h). */
#include "json_heads.h"

#include <string.h>

int sp__json_heads_init(sp__json_heads *h, uint32_t name_count)
{
    memset(h, 0, sizeof *h);
    sp__buf_init(&h->text);
    if (name_count == 0) return 0;
    h->off = sp__alloc(sizeof *h->off * name_count);
    h->len = sp__alloc(sizeof *h->len * name_count);
    h->key = sp__alloc(sizeof *h->key * name_count);
    if (!h->off || !h->len || !h->key) {
        sp__json_heads_fini(h);
        return -1;
    }
    h->count = name_count;
    return 0;
}

void sp__json_heads_fini(sp__json_heads *h)
{
    sp__buf_fini(&h->text);
    sp__free(h->off);
    sp__free(h->len);
    sp__free(h->key);
    memset(h, 0, sizeof *h);
}

void sp__json_head_store(sp__json_heads *h, uint32_t name, uint8_t key, const char *head,
                         size_t len)
{
    /* Offsets are 32-bit: past 4 GiB of heads, new names are rendered per event. */
    if (name >= h->count || len > UINT32_MAX || h->text.len + len > UINT32_MAX) return;
    size_t at = h->text.len;
    sp__buf_append(&h->text, head, len);
    if (h->text.failed) return;
    h->off[name] = (uint32_t)at;
    h->len[name] = (uint32_t)len;
    h->key[name] = key;
}
