/* json_heads.h: the constant part of a host event's JSON line, rendered once
 * per name. Most of a line (`{"ph":"X","cat":...,"name":...,"pid":N,"tid":`)
 * depends only on the event's name, type and kind, and a span repeats a few
 * hundred names millions of times, so the exporter copies the rendered head
 * instead of escaping and formatting it per event. */
#ifndef SP_JSON_HEADS_H
#define SP_JSON_HEADS_H

#include "sys.h"

#include <stdint.h>

typedef struct sp__json_heads {
    sp__buf text;    /* the heads, back to back */
    uint32_t *off;   /* name id -> offset in text */
    uint32_t *len;   /* name id -> length; 0: not rendered yet */
    uint8_t *key;    /* name id -> the type and kind it was rendered for */
    uint32_t count;  /* name ids covered */
} sp__json_heads;

/* 0 on success; on failure the exporter renders every line itself. */
int sp__json_heads_init(sp__json_heads *h, uint32_t name_count);
void sp__json_heads_fini(sp__json_heads *h);

/* The cache key of a host event: its type and whether it is an instant
 * (1..81). json_gpu.c keeps its heads in the same cache under keys from
 * 0x80 up: 0x80 runtime call, 0x81 driver call, 0x90 kernel. */
static inline uint8_t sp__json_head_key(unsigned type, int instant)
{
    return (uint8_t)(1u + type + (instant ? 64u : 0u));
}

/* The head rendered for name under key, or NULL (then *len is unset). */
static inline const char *sp__json_head_find(const sp__json_heads *h, uint32_t name, uint8_t key,
                                             size_t *len)
{
    if (name >= h->count || h->key[name] != key) return NULL;
    *len = h->len[name];
    return h->text.data + h->off[name];
}

/* Keeps a rendered head for name under key (replacing one for another key);
 * a failure only means the next event renders it again. */
void sp__json_head_store(sp__json_heads *h, uint32_t name, uint8_t key, const char *head,
                         size_t len);

#endif
