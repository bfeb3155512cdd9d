/* protobuf_plain.c: packs host nodes without children (no runtime, memory
 * or op records under them, as on every CPU-only thread) straight from the
 * result's events into the output buffer, for the protobuf writer
 * (protobuf.c). Most of a saved trace is such nodes, and building a node
 * message per event and packing it field by field cost about twice the
 * write() of the bytes. Here each node is written in one forward pass with
 * its two lengths as one byte each (a node under 128 bytes, the usual
 * case), moved on only when they need more; working the lengths out first
 * cost half the packing. Fields the same for the whole thread (pid, tid)
 * are copied as bytes encoded once, and name lengths are taken once per
 * name. The loop keeps what it reads in locals: every byte stored through
 * the output pointer could alias them, and the compiler would reload them.
 *
 * The bytes are those of sp__pb_host_node_pack for the node fill_node
 * builds (test_protobuf_plain.c compares them): a field 2 entry of
 * ThreadNodeTreeProto holding id, parentid and the HostTraceEventProto
 * (name, type, start_ns, end_ns, process_id, thread_id, then stepprof's
 * flags, value and exact type when set). */
#include "protobuf.h"

#include <string.h>

/* 7 bits a byte: 1 + floor(h / 7) for the highest set bit h, which
 * (h * 9 + 73) / 64 equals for every h up to 63. */
static inline size_t varint_bytes(uint64_t v)
{
    size_t high = (size_t)(63 ^ __builtin_clzll(v | 1));
    return (high * 9 + 73) / 64;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* The flags paddle's reader has no field for, kept as stepprof_flags. */
#define KEPT_FLAGS                                                                                 \
    (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_UNCLOSED | SP_EVENT_FLAG_SAMPLES)

int sp__pb_plain_init(sp__pb_plain *c, const sp_result *r, const sp__thread *t, uint64_t tid)
{
    memset(c, 0, sizeof *c);
    c->events = t->events;
    c->names = &r->names;
    c->name_lens = sp__alloc(sizeof *c->name_lens * (r->names.count ? r->names.count : 1));
    if (!c->name_lens) return -1;
    for (uint32_t i = 0; i < r->names.count; i++) {
        size_t n = strlen(sp__names_get(&r->names, i));
        if (n > SP__PB_PLAIN_NAME_MAX) n = SP__PB_PLAIN_NAME_MAX + 1; /* too long: the slow path */
        c->name_lens[i] = (uint32_t)n;
    }
    uint8_t *p = c->tail;
    *p++ = 5 << 3; /* process_id */
    p = put_varint(p, (uint64_t)r->meta.pid);
    *p++ = 6 << 3; /* thread_id */
    p = put_varint(p, tid);
    c->tail_len = (size_t)(p - c->tail);
    return 0;
}

void sp__pb_plain_fini(sp__pb_plain *c)
{
    sp__free(c->name_lens);
    c->name_lens = NULL;
}

/* Copies n bytes, in 16-byte pieces where both sides have room past n
 * (the caller's bound leaves it at the destination): a fixed-size copy is
 * a couple of moves, where memcpy of a short, varying length is a call. */
static inline uint8_t *put_name(uint8_t *p, const char *s, size_t n, int src_padded)
{
    if (src_padded) {
        for (size_t i = 0; i < n; i += 16)
            memcpy(p + i, s + i, 16);
    } else {
        memcpy(p, s, n);
    }
    return p + n;
}

/* Moves a node whose lengths take more than a byte each on by what they
 * need; returns its end. */
static uint8_t *fix_lengths(uint8_t *entry, uint8_t *host_len, size_t host, size_t node)
{
    size_t host_extra = varint_bytes(host) - 1;
    size_t node_total = node + host_extra;
    size_t node_extra = varint_bytes(node_total) - 1;
    uint8_t *host_body = host_len + 1;
    memmove(host_body + host_extra + node_extra, host_body, host);
    memmove(entry + 2 + node_extra, entry + 2, (size_t)(host_len - entry - 2));
    put_varint(host_len + node_extra, host);
    put_varint(entry + 1, node_total);
    return host_body + host_extra + node_extra + host;
}

size_t sp__pb_plain_pack(const sp__pb_plain *c, size_t k, size_t end, uint8_t **at,
                         const uint8_t *limit)
{
    uint8_t *p = *at;
    /* In locals: every byte stored through p may alias them otherwise. */
    const sp__names *names = c->names;
    const char *name_bytes = names->bytes.data;
    size_t name_room = names->bytes.len;
    const uint32_t name_count = names->count, *offsets = names->offsets, *lens = c->name_lens;
    const sp__event *events = c->events;
    const size_t tail_len = c->tail_len;
    uint8_t tail[sizeof c->tail];
    memcpy(tail, c->tail, sizeof tail);
    for (; k < end; k++) {
        /* Room for this node: its name, padding for the 16-byte copy, and
         * SP__PB_PLAIN_FIXED for the rest (and for fix_lengths' move). */
        if ((size_t)(limit - p) < SP__PB_PLAIN_NAME_MAX + 16 + SP__PB_PLAIN_FIXED) break;
        const sp__event *e = &events[k - 1];
        uint32_t id = e->name;
        size_t name_len = id < name_count ? lens[id] : 0;
        if (name_len > SP__PB_PLAIN_NAME_MAX) break; /* the caller packs it the slow way */
        const char *name = id < name_count ? name_bytes + offsets[id] : "";
        int padded = id < name_count && offsets[id] + name_len + 16 <= name_room;
        uint64_t start = (uint64_t)e->start_ns, stop = (uint64_t)e->end_ns;
        uint64_t parent = e->parent < 0 ? 0 : (uint64_t)e->parent + 1;
        unsigned type = e->type, flags = e->flags & KEPT_FLAGS;
        int exact_type = type > SP_EVENT_PYTHON_USER_DEFINED;
        int has_value = (e->flags & (SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_SAMPLES)) != 0;
        uint8_t *entry = p;
        p[0] = SP__PB_THREAD_HOST_NODES << 3 | 2;
        p += 2;
        *p++ = 1 << 3; /* id */
        p = put_varint(p, k);
        *p++ = 2 << 3; /* parentid */
        p = put_varint(p, parent);
        *p++ = 3 << 3 | 2; /* host_trace_event */
        uint8_t *host_len = p++;
        *p++ = 1 << 3 | 2; /* name */
        p = put_varint(p, name_len);
        p = put_name(p, name, name_len, padded);
        *p++ = 2 << 3; /* type: paddle's enum ends at 14; stepprof_type keeps the exact one */
        *p++ = (uint8_t)(exact_type ? SP_EVENT_OPERATOR_INNER : type);
        *p++ = 3 << 3; /* start_ns */
        p = put_varint(p, start);
        *p++ = 4 << 3; /* end_ns */
        p = put_varint(p, stop);
        memcpy(p, tail, sizeof tail); /* pid and tid, encoded once */
        p += tail_len;
        if (flags) { /* stepprof_flags, field 100 */
            *p++ = 0xa0;
            *p++ = 0x06;
            p = put_varint(p, flags);
        }
        if (has_value) { /* stepprof_value, field 101, a little-endian double */
            uint64_t bits;
            memcpy(&bits, &e->value, sizeof bits);
            *p++ = 0xa9;
            *p++ = 0x06;
            for (int i = 0; i < 8; i++)
                *p++ = (uint8_t)(bits >> (8 * i));
        }
        if (exact_type) { /* stepprof_type, field 102 */
            *p++ = 0xb0;
            *p++ = 0x06;
            p = put_varint(p, type);
        }
        size_t host = (size_t)(p - host_len - 1), node = (size_t)(p - entry - 2);
        if (node < 0x80) { /* then host < 0x80 too */
            *host_len = (uint8_t)host;
            entry[1] = (uint8_t)node;
        } else {
            p = fix_lengths(entry, host_len, host, node);
        }
    }
    *at = p;
    return k;
}
