/* pb_wire.h: the protobuf wire format at its smallest (varints, keys,
 * length-delimited fields, fixed 64-bit values), written at a raw pointer
 * the caller has room at, or appended to an sp__buf. Shared by the Perfetto
 * writer (perfetto.c) and its reader (src/load/load_pftrace.c). See
 * https://protobuf.dev/programming-guides/encoding/ for the format. */
#ifndef SP_EXPORT_PB_WIRE_H
#define SP_EXPORT_PB_WIRE_H

#include "sys.h"

#include <stdint.h>
#include <string.h>

enum { SP__PB_VARINT = 0, SP__PB_I64 = 1, SP__PB_LEN = 2, SP__PB_I32 = 5 };

/* The most bytes one varint takes. */
#define SP__PB_VARINT_MAX 10

static inline uint8_t *sp__pb_varint_at(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *sp__pb_key_at(uint8_t *p, uint32_t field, unsigned wire)
{
    return sp__pb_varint_at(p, ((uint64_t)field << 3) | wire);
}

static inline uint8_t *sp__pb_uint_at(uint8_t *p, uint32_t field, uint64_t v)
{
    return sp__pb_varint_at(sp__pb_key_at(p, field, SP__PB_VARINT), v);
}

static inline uint8_t *sp__pb_fixed64_at(uint8_t *p, uint32_t field, uint64_t v)
{
    p = sp__pb_key_at(p, field, SP__PB_I64);
    for (int i = 0; i < 8; i++) *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static inline uint8_t *sp__pb_double_at(uint8_t *p, uint32_t field, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return sp__pb_fixed64_at(p, field, v);
}

/* A length-delimited field of len bytes at data (room: len + 15). */
static inline uint8_t *sp__pb_bytes_at(uint8_t *p, uint32_t field, const void *data, size_t len)
{
    p = sp__pb_varint_at(sp__pb_key_at(p, field, SP__PB_LEN), len);
    memcpy(p, data, len);
    return p + len;
}

/* Appending forms: each reserves its room first (a failed reserve leaves
 * b->failed set, which the writer reports when it commits). */
static inline void sp__pb_put_uint(sp__buf *b, uint32_t field, uint64_t v)
{
    if (sp__buf_reserve(b, 2 * SP__PB_VARINT_MAX) != 0) return;
    b->len = (size_t)((char *)sp__pb_uint_at((uint8_t *)b->data + b->len, field, v) - b->data);
}

static inline void sp__pb_put_double(sp__buf *b, uint32_t field, double d)
{
    if (sp__buf_reserve(b, SP__PB_VARINT_MAX + 8) != 0) return;
    b->len = (size_t)((char *)sp__pb_double_at((uint8_t *)b->data + b->len, field, d) - b->data);
}

static inline void sp__pb_put_fixed64(sp__buf *b, uint32_t field, uint64_t v)
{
    if (sp__buf_reserve(b, SP__PB_VARINT_MAX + 8) != 0) return;
    b->len = (size_t)((char *)sp__pb_fixed64_at((uint8_t *)b->data + b->len, field, v) - b->data);
}

static inline void sp__pb_put_bytes(sp__buf *b, uint32_t field, const void *data, size_t len)
{
    if (sp__buf_reserve(b, len + 2 * SP__PB_VARINT_MAX) != 0) return;
    b->len = (size_t)((char *)sp__pb_bytes_at((uint8_t *)b->data + b->len, field, data, len) - b->data);
}

static inline void sp__pb_put_str(sp__buf *b, uint32_t field, const char *s)
{
    sp__pb_put_bytes(b, field, s, strlen(s));
}

#endif
